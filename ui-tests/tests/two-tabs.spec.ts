import { expect, test } from '@jupyterlab/galata';
import { Page } from '@playwright/test';

import {
  cellPrompt,
  cellText,
  notebookWithCells,
  openInNewTab,
  printedNumbers
} from './helpers';

const codeCells = (page: Page) =>
  page.locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell');

test('a run started in one tab is live in the other, queue included', async ({
  page,
  context,
  tmpPath
}) => {
  const name = await notebookWithCells(
    page,
    'import time\nfor i in range(40):\n    print(i, flush=True)\n    time.sleep(0.25)',
    'print("second")',
    'print("third")'
  );
  const other = await context.newPage();
  await openInNewTab(other, `${tmpPath}/${name}`);
  await expect(codeCells(other)).toHaveCount(3);

  await page.bringToFront();
  await page.evaluate(() => {
    void (window as any).jupyterapp.commands.execute('notebook:run-all-cells');
  });

  // Both tabs show the first cell running and the others queued, from the server.
  for (const tab of [page, other]) {
    await expect.poll(() => cellPrompt(tab, 0)).toBe('[*]:');
    await expect(codeCells(tab).nth(1)).toHaveClass(/jp-Loop-queued/);
    await expect(codeCells(tab).nth(2)).toHaveClass(/jp-Loop-queued/);
  }
  await expect
    .poll(async () => printedNumbers(await cellText(other, 0)).length)
    .toBeGreaterThan(2);

  // The queue survives a reload of the second tab.
  await other.reload();
  await other.locator('.jp-NotebookPanel .jp-Cell').first().waitFor();
  await expect(codeCells(other).nth(2)).toHaveClass(/jp-Loop-queued/);

  for (const tab of [page, other]) {
    await expect
      .poll(() => cellPrompt(tab, 2), { timeout: 30000 })
      .toBe('[3]:');
    expect(await cellText(tab, 1)).toContain('second');
    expect(await cellText(tab, 2)).toContain('third');
    expect(printedNumbers(await cellText(tab, 0))).toEqual(
      Array.from({ length: 40 }, (_, i) => i)
    );
    await expect(codeCells(tab).nth(2)).not.toHaveClass(/jp-Loop-queued/);
  }
});

test('an error stops Run All, and interrupt from the other tab stops a run', async ({
  page,
  context,
  tmpPath
}) => {
  const name = await notebookWithCells(
    page,
    '1 / 0',
    'print("never")',
    'import time\ntime.sleep(60)'
  );
  await page.evaluate(() => {
    void (window as any).jupyterapp.commands.execute('notebook:run-all-cells');
  });
  await expect.poll(() => cellText(page, 0)).toContain('ZeroDivisionError');
  await expect.poll(() => cellPrompt(page, 1)).toBe('[ ]:');
  await expect.poll(() => cellPrompt(page, 2)).toBe('[ ]:');
  expect(await cellText(page, 1)).toBe('');

  // Start the long cell here; interrupt it from another tab.
  await page.notebook.selectCells(2);
  await page.evaluate(() => {
    void (window as any).jupyterapp.commands.execute('notebook:run-cell');
  });
  await expect.poll(() => cellPrompt(page, 2)).toBe('[*]:');
  const other = await context.newPage();
  await openInNewTab(other, `${tmpPath}/${name}`);
  await expect.poll(() => cellPrompt(other, 2)).toBe('[*]:');
  // The new tab shows [*] from the shared notebook before its session has the
  // kernel; JupyterLab's interrupt does nothing until it has (seen once in CI).
  await expect
    .poll(() =>
      other.evaluate(
        () =>
          !!(window as any).jupyterapp.shell.currentWidget?.sessionContext
            ?.session?.kernel
      )
    )
    .toBe(true);
  await other.evaluate(() => {
    void (window as any).jupyterapp.commands.execute(
      'notebook:interrupt-kernel'
    );
  });
  for (const tab of [page, other]) {
    await expect
      .poll(() => cellText(tab, 2), { timeout: 20000 })
      .toContain('KeyboardInterrupt');
    await expect.poll(() => cellPrompt(tab, 2)).not.toBe('[*]:');
  }
});
