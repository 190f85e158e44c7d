import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Page } from '@playwright/test';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

import {
  ask,
  cellId,
  liveNotebook,
  ModelServer,
  openAssistant,
  runCommand,
  screenshot
} from './agent-helpers';
import {
  cellPrompt,
  cellText,
  notebookSources,
  notebookWithCells,
  openInNewTab,
  SERVER_ROOT,
  shiftEnter
} from './helpers';

const codeCells = (page: Page) =>
  page.locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell');
const staleMark = (page: Page, index: number) =>
  codeCells(page).nth(index).locator('.jp-Loop-staleMark');

/** Restart the kernel of the current notebook through the REST API (no dialog). */
async function restartKernel(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    const id = panel.sessionContext.session.kernel.id;
    const response = await fetch(`/api/kernels/${id}/restart`, {
      method: 'POST'
    });
    if (!response.ok) {
      throw new Error(`restart: ${response.status}`);
    }
  });
}

test('stale marks follow an edit and a kernel restart, in two tabs and after reopening', async ({
  page,
  context,
  tmpPath
}) => {
  const name = await notebookWithCells(page, 'print("one")', 'print("two")');
  await runCommand(page, 'notebook:run-all-cells');
  await expect.poll(() => cellPrompt(page, 1), { timeout: 60000 }).toBe('[2]:');
  const other = await context.newPage();
  await openInNewTab(other, `${tmpPath}/${name}`);
  await expect.poll(() => cellText(other, 1)).toContain('two');
  for (const tab of [page, other]) {
    await expect(tab.locator('.jp-Loop-staleMark')).toHaveCount(0);
  }

  // An edit in one tab marks that cell, in both tabs; the other cell stays fresh.
  await page.bringToFront();
  await page.notebook.setCell(0, 'code', 'print("uno")');
  for (const tab of [page, other]) {
    await expect(staleMark(tab, 0)).toContainText('edited since this output');
    await expect(codeCells(tab).nth(0)).toHaveClass(/jp-Loop-stale/);
    await expect(staleMark(tab, 1)).toHaveCount(0);
  }

  // A kernel restart marks the other cell too, in both tabs.
  await restartKernel(page);
  for (const tab of [page, other]) {
    await expect(staleMark(tab, 1)).toContainText(
      'kernel restarted since this output',
      { timeout: 30000 }
    );
    await expect(staleMark(tab, 0)).toContainText('edited since this output');
  }

  // After reopening, the marks are still there.
  await other.reload();
  await other.locator('.jp-NotebookPanel .jp-Cell').first().waitFor();
  await expect(staleMark(other, 0)).toContainText('edited since this output');
  await expect(staleMark(other, 1)).toContainText('kernel restarted since');
  // The mark's link opens the cell's history: its one run, from Run All.
  await staleMark(other, 1).getByRole('button', { name: 'History' }).click();
  const runs = other.locator('.jp-Loop-history .jp-Loop-historyRun');
  await expect(runs).toHaveCount(1);
  await expect(runs.nth(0)).toContainText(/a tab of .+, Run All/);

  // Running the edited cell again makes its output fresh, in both tabs.
  await page.bringToFront();
  await shiftEnter(page, 0);
  for (const tab of [page, other]) {
    await expect.poll(() => cellText(tab, 0)).toContain('uno');
    await expect(staleMark(tab, 0)).toHaveCount(0);
    await expect(staleMark(tab, 1)).toContainText('kernel restarted since');
  }
});

/** A notebook in a folder that reads like a user's, for the screenshot of the docs. */
function writeReportNotebook(): string {
  const relative = 'quarterly-report/revenue.ipynb';
  const file = path.join(SERVER_ROOT, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const cell = (id: string, source: string) => ({
    id,
    cell_type: 'code',
    source,
    metadata: {},
    outputs: [],
    execution_count: null
  });
  const notebook = {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      kernelspec: {
        name: 'python3',
        display_name: 'Python 3',
        language: 'python'
      }
    },
    cells: [
      cell('load', 'sales = {"north": 120, "south": 80, "east": 45}'),
      cell('total', 'total = sum(sales.values())\nprint(f"total: {total}")')
    ]
  };
  fs.writeFileSync(file, JSON.stringify(notebook));
  return relative;
}

/** Run cells through the terminal client, `jupyter loop run`, as a user would. */
function runFromTerminal(notebook: string, ...cells: string[]): string {
  return execFileSync(
    'python',
    [
      '-m',
      'jupyter_loop.cli',
      '--url',
      `http://localhost:${process.env.LOOP_UI_PORT}`,
      'run',
      notebook,
      ...cells
    ],
    { encoding: 'utf-8', timeout: 60000 }
  );
}

async function openHistory(page: IJupyterLabPageFixture, cellIndex: number) {
  await page.notebook.selectCells(cellIndex);
  await codeCells(page).nth(cellIndex).click({ button: 'right' });
  await page.getByRole('menuitem', { name: 'Show Cell History' }).click();
  const view = page.locator('.jp-Loop-history');
  await expect(view).toBeVisible();
  return view;
}

test("a cell's History view says who ran what, shows a run's source and outputs, and restores a source as a proposal", async ({
  page
}) => {
  page.on('console', m => {
    if (m.type() === 'error') console.log('CONSOLE', m.text());
  });
  page.on('pageerror', e => console.log('PAGEERROR', e.message, e.stack));
  const notebook = writeReportNotebook();
  expect(await page.notebook.openByPath(notebook)).toBe(true);
  await codeCells(page).first().waitFor();
  // Run once the notebook's kernel is up (opening a file may replace its first kernel).
  await expect
    .poll(() =>
      page.evaluate(() => {
        const panel = (window as any).jupyterapp.shell.currentWidget;
        return panel.sessionContext.session?.kernel?.status;
      })
    )
    .toBe('idle');

  // Three runs of the second cell, through three channels.
  await runCommand(page, 'notebook:run-all-cells'); // a tab, Run All
  await expect
    .poll(() => cellText(page, 1), { timeout: 60000 })
    .toContain('total: 245');
  await page.notebook.setCell(
    1,
    'code',
    'total = sum(sales.values())\nprint(f"total: {total} units")'
  );
  await page.notebook.selectCells(1);
  await runCommand(page, 'notebook:run-cell'); // a tab
  await expect.poll(() => cellText(page, 1)).toContain('245 units');
  const printed = runFromTerminal(notebook, 'total'); // the terminal client
  expect(printed).toContain('total: 245 units');
  await expect.poll(() => cellPrompt(page, 1)).toBe('[4]:');

  // The source changes again: the output is marked, and the History view lists
  // the runs, newest first, with who started each and through what.
  await page.notebook.setCell(
    1,
    'code',
    'total = sum(sales.values())\nprint(f"sum: {total}")'
  );
  await expect(staleMark(page, 1)).toContainText('edited since this output');
  const view = await openHistory(page, 1);
  const runs = view.locator('.jp-Loop-historyRun');
  await expect(runs).toHaveCount(3);
  await expect(runs.nth(0)).toContainText(/the terminal client for \S/);
  await expect(runs.nth(1)).toContainText(/a tab of \S/);
  await expect(runs.nth(1)).not.toContainText('Run All');
  await expect(runs.nth(2)).toContainText(/a tab of .*, Run All/);
  for (const index of [0, 1, 2]) {
    await expect(runs.nth(index)).toContainText('ok');
    await expect(runs.nth(index)).toContainText(/kernel [0-9a-f]{8}/);
  }

  // The newest run: its source against the source now, and the outputs the cell shows.
  const detail = view.locator('.jp-Loop-historyDetail');
  await expect(detail.locator('.jp-Loop-diff-add')).toHaveText(
    /print\(f"total: \{total\} units"\)/
  );
  await expect(detail.locator('.jp-Loop-diff-del')).toHaveText(
    /print\(f"sum: \{total\}"\)/
  );
  await expect(detail.locator('.jp-Loop-historyOutputs')).toContainText(
    'total: 245 units'
  );
  if (process.env.LOOP_SCREENSHOTS === '1') {
    await page.sidebar.close('left');
    await page.setViewportSize({ width: 1280, height: 760 });
    await screenshot(page, 'cell-history.png');
  }

  // The oldest run: its own outputs, kept by the server; the notebook did not change.
  await runs.nth(2).click();
  await expect(detail.locator('.jp-Loop-diff-add')).toHaveText(
    /print\(f"total: \{total\}"\)/
  );
  await expect(
    detail.locator('.jp-Loop-historyKept .jp-OutputArea-output')
  ).toHaveText(/^\s*total: 245\s*$/);
  expect((await notebookSources(page))[1]).toContain('sum: {total}');

  // "Restore this source" is a proposal on the cell: Accept applies it, Ctrl-Z undoes it.
  await detail.getByRole('button', { name: 'Restore this source' }).click();
  await expect(detail.locator('.jp-Loop-historyNotice')).toContainText(
    'Proposed on the cell'
  );
  expect((await notebookSources(page))[1]).toContain('sum: {total}');
  const card = codeCells(page).nth(1).locator('.jp-Loop-OnCell-body');
  await card.getByRole('button', { name: 'Accept' }).click();
  await expect
    .poll(async () => (await notebookSources(page))[1])
    .toBe('total = sum(sales.values())\nprint(f"total: {total}")');
  await codeCells(page).nth(1).locator('.cm-content').click();
  await page.keyboard.press('Control+z');
  await expect
    .poll(async () => (await notebookSources(page))[1])
    .toBe('total = sum(sales.values())\nprint(f"sum: {total}")');

  // "Restore these outputs" too: the oldest run's outputs, back in the cell as
  // the tab renders them once accepted (each line once), and undone from the
  // History view (the server puts the outputs they replaced back).
  await expect(cellText(page, 1)).resolves.toContain('total: 245 units');
  await detail.getByRole('button', { name: 'Restore these outputs' }).click();
  const outputsCard = codeCells(page)
    .nth(1)
    .locator('.jp-Loop-OnCell-body', { hasText: 'Restore earlier outputs' });
  await expect(outputsCard.locator('.jp-Loop-OnCell-outputs')).toHaveText(
    'total: 245\n'
  );
  await outputsCard.getByRole('button', { name: 'Accept' }).click();
  await expect.poll(() => cellText(page, 1)).toMatch(/^\s*total: 245\s*$/);
  expect((await notebookSources(page))[1]).toContain('sum: {total}');
  await detail.getByRole('button', { name: 'Undo' }).click();
  await expect
    .poll(() => cellText(page, 1))
    .toMatch(/^\s*total: 245 units\s*$/);
  await expect(detail).toContainText('Undone');
});

test('a run the assistant started names its turn, who asked and the approval', async ({
  page
}) => {
  const model = ModelServer.of();
  await model.reset();
  await liveNotebook(page, 'print("from the assistant")');
  const target = await cellId(page, 0);
  await model.script(
    { tool_calls: [{ name: 'run_cells', arguments: { cell_ids: [target] } }] },
    { text: 'It printed its line.' }
  );
  await openAssistant(page);
  await ask(page, 'Run the cell.');
  await codeCells(page)
    .nth(0)
    .locator('.jp-Loop-CellApproval')
    .getByRole('button', { name: 'Allow once' })
    .click();
  await expect
    .poll(() => cellText(page, 0), { timeout: 30000 })
    .toContain('from the assistant');

  const view = await openHistory(page, 0);
  const runs = view.locator('.jp-Loop-historyRun');
  await expect(runs).toHaveCount(1);
  await expect(runs.nth(0)).toContainText(
    /the assistant's turn t-\S+ asked by .+ \(approval a-\S+\)/
  );
});
