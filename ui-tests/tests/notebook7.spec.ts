import { expect, test } from '@playwright/test';

import { cellPrompt, cellText, printedNumbers } from './helpers';
import { OwnServer } from './own-server';

/**
 * Jupyter Notebook 7 (`jupyter notebook`) loads the same server extensions and the same
 * labextension as JupyterLab, in another shell: a run started there belongs to the server
 * too, so it outlives the tab. A server of the test's own, because the shared test server
 * is a `jupyter lab`.
 */

const LINES = 20;
const SLOW_LOOP = `import time\nfor i in range(${LINES}):\n    print(i, flush=True)\n    time.sleep(0.4)`;

test('Notebook 7: a cell closed mid-run is reopened with all its lines and a number prompt', async ({
  browser
}) => {
  test.setTimeout(180000);
  const server = new OwnServer({ app: 'notebook' });
  server.writeNotebook('nb7.ipynb', [SLOW_LOOP]);
  await server.start();
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.url}/notebooks/nb7.ipynb`);
    const editor = page.locator('.jp-NotebookPanel .jp-CodeCell .cm-content');
    await editor.first().waitFor({ timeout: 60000 });
    // The Notebook 7 shell (its page template), not JupyterLab's.
    await expect(page.locator('body')).toHaveAttribute(
      'data-notebook',
      'notebooks'
    );

    await editor.first().click();
    await page.keyboard.press('Shift+Enter');
    await expect
      .poll(async () => printedNumbers(await cellText(page, 0)).length, {
        timeout: 60000
      })
      .toBeGreaterThan(2);
    const seenBeforeClose = printedNumbers(await cellText(page, 0)).length;
    expect(seenBeforeClose).toBeLessThan(LINES); // closed mid-run, not after
    await page.close();
    // Most of the run goes on with no page open.
    await new Promise(resolve => setTimeout(resolve, 3000));

    const reopened = await context.newPage();
    await reopened.goto(`${server.url}/notebooks/nb7.ipynb`);
    await reopened
      .locator('.jp-NotebookPanel .jp-CodeCell')
      .first()
      .waitFor({ timeout: 60000 });
    await expect
      .poll(() => cellPrompt(reopened, 0), { timeout: 60000 })
      .toMatch(/^\[\d+\]:$/);
    expect(printedNumbers(await cellText(reopened, 0))).toEqual(
      Array.from({ length: LINES }, (_, i) => i)
    );
    await context.close();
  } finally {
    await server.dispose();
  }
});
