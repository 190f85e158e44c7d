import { expect, test } from '@jupyterlab/galata';

import { cellText, notebookWithCells } from './helpers';

const runCell = async (page: any, index: number) => {
  await page.notebook.selectCells(index);
  await page.evaluate(() => {
    void (window as any).jupyterapp.commands.execute('notebook:run-cell');
  });
};

test('a slider made by a server-side run drives the kernel', async ({
  page
}) => {
  await notebookWithCells(
    page,
    'import ipywidgets as w\ns = w.IntSlider(value=3, max=10)\ns',
    'print("value", s.value)'
  );
  await runCell(page, 0);
  const readout = page
    .locator('.jp-CodeCell')
    .nth(0)
    .locator('.widget-readout');
  await expect(readout).toHaveText('3');

  const handle = page.locator('.jp-CodeCell').nth(0).locator('.noUi-handle');
  await handle.focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await expect(readout).toHaveText('5');

  // The readout shows 5 at once; the kernel hears it after its reply to the change to 4
  // (ipywidgets sends one change at a time and keeps the next until the kernel answers),
  // so a run right after it may still print 4, in stock JupyterLab too: run again until
  // the kernel has it.
  await expect(async () => {
    await runCell(page, 1);
    await expect
      .poll(() => cellText(page, 1), { timeout: 5000 })
      .toContain('value 5');
  }).toPass({ timeout: 30000 });
});

test('interact shows its output in its widget and updates it', async ({
  page
}) => {
  await notebookWithCells(
    page,
    'from ipywidgets import interact\n@interact(x=5)\ndef f(x):\n    print("double", x * 2)'
  );
  await runCell(page, 0);
  const cell = page.locator('.jp-CodeCell').nth(0);
  const widgetOutput = cell.locator('.widget-output');
  await expect(widgetOutput).toContainText('double 10');

  await cell.locator('.noUi-handle').focus();
  await page.keyboard.press('ArrowRight');
  await expect(widgetOutput).toContainText('double 12');
  // The printed line shows once, in the widget: not also as a plain cell output.
  await expect(cell.getByText('double 12')).toHaveCount(1);
});
