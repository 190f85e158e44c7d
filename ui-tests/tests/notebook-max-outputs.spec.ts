import {
  expect,
  galata,
  IJupyterLabPageFixture,
  test
} from '@jupyterlab/galata';
import * as fs from 'fs';
import * as path from 'path';

import { notebookJson, SERVER_ROOT } from './helpers';

/**
 * JupyterLab's own "Don't limit cell outputs if input is requested" (its
 * notebook-max-outputs test), with jupyter-loop's prompts: with `maxNumberOutputs`
 * at 5, a cell that displays 10 outputs, then waits in `input()`, shows all of them
 * while the prompt waits, as stock JupyterLab does (its output area lifts the limit
 * on an input request; jupyter-loop shows the prompt itself and must do the same).
 */
test.use({
  mockSettings: {
    ...galata.DEFAULT_SETTINGS,
    '@jupyterlab/notebook-extension:tracker': {
      ...galata.DEFAULT_SETTINGS['@jupyterlab/notebook-extension:tracker'],
      maxNumberOutputs: 5
    }
  }
});

const TEN_THEN_INPUT =
  'from IPython.display import display, Markdown\n' +
  'for i in range(10):\n' +
  "    display(Markdown('_Markdown_ **text**'))\n" +
  "input('Your age:')";

/** Open a notebook of one cell (written as a file: typing would auto-indent it). */
async function openWith(
  page: IJupyterLabPageFixture,
  tmpPath: string,
  source: string
): Promise<void> {
  const name = 'max-outputs.ipynb';
  fs.writeFileSync(
    path.join(SERVER_ROOT, tmpPath, name),
    notebookJson([source])
  );
  await page.notebook.openByPath(`${tmpPath}/${name}`);
  await page.notebook.activate(name);
}

test('outputs are trimmed to 5 when no input is asked', async ({
  page,
  tmpPath
}) => {
  await openWith(
    page,
    tmpPath,
    TEN_THEN_INPUT.replace("input('Your age:')", "print('done')")
  );
  await page.notebook.runCell(0);
  await expect(page.locator('.jp-TrimmedOutputs')).toHaveCount(1);
  await expect(page.locator('.jp-RenderedMarkdown')).toHaveCount(5);
});

test('outputs are not limited while input() waits, and after it is answered', async ({
  page,
  tmpPath
}) => {
  await openWith(page, tmpPath, TEN_THEN_INPUT);
  await page.menu.clickMenuItem('Run>Run All Cells');
  await expect(page.locator('.jp-Stdin >> text=Your age:')).toBeVisible();
  await expect(page.locator('.jp-RenderedMarkdown')).toHaveCount(10);
  await expect(page.locator('.jp-TrimmedOutputs')).toHaveCount(0);

  await page.keyboard.type('42');
  await page.keyboard.press('Enter');
  await expect(page.locator('.jp-RenderedText').first()).toHaveText(
    'Your age: 42'
  );
  await expect(page.locator('.jp-RenderedMarkdown')).toHaveCount(10);
});
