import { expect, test } from '@playwright/test';

import { cellPrompt, cellText, runAllCells } from './helpers';
import { OwnServer } from './own-server';

/**
 * The sequence of shared/evidence/restart-blank: runs from a tab closed mid-run, then
 * runs with no tab (`jupyter loop run`) each followed by a plain restart, with the
 * collaboration store at its default place. The tab must show what the server saved,
 * and a run started from it must show its lines.
 */
const LINES = 10;
const SOURCE = `import time\nfor i in range(${LINES}):\n    print("line", i, flush=True)\n    time.sleep(0.2)`;
const ALL_LINES = Array.from({ length: LINES }, (_, i) => `line ${i}`).join(
  '\n'
);

test('a notebook run with no tab, across restarts, opens whole in a tab', async ({
  browser
}) => {
  test.setTimeout(420000);
  const server = new OwnServer({ defaultStore: true });
  server.writeNotebook('blank.ipynb', [SOURCE]);
  await server.start();
  try {
    // 1. Run from a tab closed a second later, twice; then a restart.
    for (let i = 0; i < 2; i++) {
      const page = await browser.newPage();
      await server.openIdle(page, 'blank.ipynb');
      await runAllCells(page);
      await page.waitForTimeout(1000);
      await page.close();
      await new Promise(r => setTimeout(r, 3000)); // the run ends with no tab open
    }
    await server.stop();
    await server.start();

    // 2-3. With no tab open: `jupyter loop run`, then a restart; twice.
    for (let i = 0; i < 2; i++) {
      expect(server.loop('run', 'blank.ipynb')).toBe(0);
      await new Promise(r => setTimeout(r, 2000)); // saved, stored
      await server.stop();
      await server.start();
    }

    // 4. The tab shows what the file holds, and a run from it shows its lines.
    const page = await browser.newPage();
    await page.goto(`${server.url}/lab/tree/blank.ipynb`, {
      waitUntil: 'domcontentloaded'
    });
    await page.locator('.jp-NotebookPanel .jp-CodeCell').first().waitFor();
    await expect
      .poll(() => cellText(page, 0), { timeout: 30000 })
      .toContain(ALL_LINES);
    expect(await cellPrompt(page, 0)).toBe('[1]:');
    await expect(page.locator('#jp-main-statusbar')).toContainText('Idle', {
      timeout: 60000
    });
    // Shift-Enter, as the person who found it pressed it.
    await page
      .locator('.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt')
      .first()
      .click();
    await page.keyboard.press('Escape');
    await page.keyboard.press('Shift+Enter');
    await expect
      .poll(() => cellPrompt(page, 0), { timeout: 30000 })
      .toBe('[*]:');
    await expect
      .poll(() => cellPrompt(page, 0), { timeout: 60000 })
      .toBe('[1]:');
    expect(await cellText(page, 0)).toContain(ALL_LINES);
    await page.close();
  } finally {
    await server.dispose(false);
  }
});
