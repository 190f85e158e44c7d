import { expect, test } from '@jupyterlab/galata';
import * as fs from 'fs';
import * as path from 'path';

import {
  cellPrompt,
  cellText,
  notebookWithCells,
  openInNewTab,
  printedNumbers,
  readNotebookOnDisk,
  SERVER_ROOT,
  shiftEnter
} from './helpers';

const LOOP = (count: number, pause: number) =>
  `import time\nfor i in range(${count}):\n    print(i, flush=True)\n    time.sleep(${pause})`;

// Prints until the test writes the file `stop` beside the notebook (the kernel's working
// folder): a fixed count ran out before a slow tab reopened on a loaded machine, and the
// "still live" check then waited for lines that would never come.
const UNTIL_STOPPED = (pause: number) =>
  `import os, time\ni = 0\nwhile not os.path.exists("stop"):\n    print(i, flush=True)\n    i += 1\n    time.sleep(${pause})`;

const consecutive = (numbers: number[]) => numbers.every((n, i) => n === i);

test('closing the tab mid-run loses nothing and the run goes on', async ({
  page,
  context,
  tmpPath
}) => {
  const name = await notebookWithCells(page, UNTIL_STOPPED(0.25));
  await shiftEnter(page, 0);
  await expect
    .poll(async () => printedNumbers(await cellText(page, 0)).length)
    .toBeGreaterThan(3);

  await page.close();
  await new Promise(resolve => setTimeout(resolve, 4000));

  const reopened = await context.newPage();
  await openInNewTab(reopened, `${tmpPath}/${name}`);
  await expect.poll(() => cellPrompt(reopened, 0)).toBe('[*]:');
  const seen = printedNumbers(await cellText(reopened, 0));
  // Printed while no tab was open: ~16 lines in 4 s, all there and in order.
  expect(seen.length).toBeGreaterThan(15);
  expect(consecutive(seen)).toBe(true);
  // And the run is still live in the reopened tab.
  await expect
    .poll(async () => printedNumbers(await cellText(reopened, 0)).length, {
      timeout: 20000
    })
    .toBeGreaterThan(seen.length + 4);
  fs.writeFileSync(path.join(SERVER_ROOT, tmpPath, 'stop'), '');
  await expect
    .poll(() => cellPrompt(reopened, 0), { timeout: 20000 })
    .toBe('[1]:');
  expect(consecutive(printedNumbers(await cellText(reopened, 0)))).toBe(true);
});

test('with the browser closed, the saved notebook ends with every line', async ({
  page,
  browser,
  tmpPath
}) => {
  const name = await notebookWithCells(page, LOOP(20, 0.2));
  await shiftEnter(page, 0);
  await expect
    .poll(async () => printedNumbers(await cellText(page, 0)).length)
    .toBeGreaterThan(1);
  await page.context().close();

  await expect
    .poll(
      () => {
        const saved = readNotebookOnDisk(`${tmpPath}/${name}`);
        return saved?.cells?.[0]?.execution_count ?? null;
      },
      { timeout: 30000 }
    )
    .toBe(1);
  const cell = readNotebookOnDisk(`${tmpPath}/${name}`).cells[0];
  const text = cell.outputs
    .map((o: any) => [].concat(o.text).join(''))
    .join('');
  expect(printedNumbers(text)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  void browser;
});
