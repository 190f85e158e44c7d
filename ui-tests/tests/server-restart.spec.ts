import { expect, test } from '@playwright/test';

import { cellPrompt, cellText, printedNumbers, runAllCells } from './helpers';
import { OwnServer } from './own-server';

const LOOP =
  'import time\nfor i in range(400):\n    print(i, flush=True)\n    time.sleep(0.1)';

test('a server crash mid-run: saved output stays, the cut is marked, no [*] left', async ({
  browser
}) => {
  test.setTimeout(240000);
  // Kernels end with the server here: this is the crash a kept kernel does not have.
  const server = new OwnServer({ keepKernels: 'never' });
  server.writeNotebook('crash.ipynb', [LOOP, 'print("next")']);
  await server.start();
  try {
    const page = await browser.newPage();
    await server.openIdle(page, 'crash.ipynb');
    await runAllCells(page);
    await expect
      .poll(async () => printedNumbers(await cellText(page, 0)).length, {
        timeout: 30000
      })
      .toBeGreaterThan(40);

    server.kill();
    const seenBefore = printedNumbers(await cellText(page, 0));
    await server.start();

    // Not the 'load' event: a request the old page left hanging against the killed
    // server can hold it back for minutes (seen once in CI); the cells are what counts.
    await page.goto(`${server.url}/lab/tree/crash.ipynb`, {
      waitUntil: 'domcontentloaded'
    });
    await page.locator('.jp-NotebookPanel .jp-CodeCell').first().waitFor();
    await expect
      .poll(() => cellText(page, 0), { timeout: 60000 })
      .toContain('cut off by a restart');
    expect(await cellPrompt(page, 0)).not.toBe('[*]:');
    expect(await cellPrompt(page, 1)).toBe('[ ]:');
    await expect(page.locator('.jp-Loop-queued')).toHaveCount(0);
    // What was saved before the crash (saves run every second) is there, in order.
    const after = printedNumbers(await cellText(page, 0));
    expect(after.length).toBeGreaterThan(seenBefore.length - 20);
    expect(after).toEqual(after.map((_, i) => i));
    await page.close();
  } finally {
    await server.dispose(false);
  }
});
