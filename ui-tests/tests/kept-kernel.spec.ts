import { expect, test } from '@playwright/test';

import { cellPrompt, cellText, printedNumbers, runAllCells } from './helpers';
import { OwnServer } from './own-server';

const LINES = 500;
const LOOP = `import time\nfor i in range(${LINES}):\n    print(i, flush=True)\n    time.sleep(0.05)`;

test('a server crash mid-run: the open tab keeps streaming the same run, every line once', async ({
  browser
}) => {
  test.setTimeout(240000);
  // The default keep_kernels ("crash"): the kernel outlives an unclean end of its server.
  const server = new OwnServer({ keepKernels: 'crash' });
  server.writeNotebook('kept.ipynb', ['x = 42', LOOP, 'print(x)']);
  await server.start();
  try {
    const page = await browser.newPage();
    await server.openIdle(page, 'kept.ipynb');
    await runAllCells(page);
    await expect
      .poll(async () => printedNumbers(await cellText(page, 1)).length, {
        timeout: 30000
      })
      .toBeGreaterThan(40);

    server.crash();
    const seenBefore = printedNumbers(await cellText(page, 1));
    await new Promise(resolve => setTimeout(resolve, 3000)); // lines printed, no server
    await server.start();

    // The same tab, not reloaded: it reconnects and the run goes on streaming into it.
    await expect
      .poll(async () => printedNumbers(await cellText(page, 1)).length, {
        timeout: 30000
      })
      .toBeGreaterThan(seenBefore.length + 40);
    await expect
      .poll(() => cellPrompt(page, 2), { timeout: 90000 })
      .toMatch(/^\[\d+\]:$/);
    const after = printedNumbers(await cellText(page, 1));
    expect(after).toEqual(Array.from({ length: LINES }, (_, i) => i));
    expect(await cellPrompt(page, 1)).toMatch(/^\[\d+\]:$/);
    // The kernel is the one that ran the first cell: its variable is still there.
    await page
      .locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell')
      .nth(2)
      .scrollIntoViewIfNeeded();
    await expect.poll(() => cellText(page, 2)).toContain('42');
    await page.close();
  } finally {
    await server.dispose();
  }
});
