import { expect, test } from '@jupyterlab/galata';

import {
  cellPrompt,
  cellText,
  notebookWithCells,
  openInNewTab
} from './helpers';

const runCell = async (page: any, index: number) => {
  await page.notebook.selectCells(index);
  await page.evaluate(() => {
    void (window as any).jupyterapp.commands.execute('notebook:run-cell');
  });
};

test('input() asked in one tab is answered from another', async ({
  page,
  context,
  tmpPath
}) => {
  const name = await notebookWithCells(
    page,
    'name = input("Your name? ")\nprint("Hello,", name)'
  );
  await runCell(page, 0);
  await expect(page.locator('.jp-Stdin')).toContainText('Your name?');

  const other = await context.newPage();
  await openInNewTab(other, `${tmpPath}/${name}`);
  const prompt = other.locator('.jp-Stdin-input');
  await expect(prompt).toBeVisible();
  await prompt.fill('Grace ✓');
  await prompt.press('Enter');

  for (const tab of [page, other]) {
    await expect.poll(() => cellText(tab, 0)).toContain('Hello, Grace ✓');
    await expect(tab.locator('.jp-Stdin')).toHaveCount(0);
    await expect.poll(() => cellPrompt(tab, 0)).toBe('[1]:');
  }
  // Echoed as JupyterLab echoes it: the prompt, a space, the answer.
  expect(await cellText(page, 0)).toContain('Your name?  Grace ✓');
});

test('a display handle updates its output in place from another cell', async ({
  page
}) => {
  await notebookWithCells(
    page,
    'h = display("first version", display_id=True)\nprint("below")',
    'h.update("second version")'
  );
  await runCell(page, 0);
  await expect.poll(() => cellText(page, 0)).toContain('first version');
  await runCell(page, 1);
  await expect.poll(() => cellText(page, 0)).toContain('second version');
  const text = await cellText(page, 0);
  expect(text).not.toContain('first version');
  expect(text.indexOf('second version')).toBeLessThan(text.indexOf('below'));
});
