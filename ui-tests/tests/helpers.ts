import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

/** Where the test server keeps its files (set in playwright.config.js). */
export const SERVER_ROOT = process.env.JUPYTERLAB_GALATA_ROOT_DIR as string;

/**
 * A Python notebook of code cells `c0`, `c1`, … with these sources, never run, as
 * the text of an `.ipynb`.
 */
export function notebookJson(sources: string[]): string {
  const cells = sources.map((source, index) => ({
    cell_type: 'code',
    id: `c${index}`,
    source,
    metadata: {},
    outputs: [],
    execution_count: null
  }));
  const kernelspec = {
    name: 'python3',
    display_name: 'Python 3',
    language: 'python'
  };
  return JSON.stringify({
    cells,
    metadata: { kernelspec },
    nbformat: 4,
    nbformat_minor: 5
  });
}

/** Read a notebook as the server saved it on disk; null while it is being rewritten. */
export function readNotebookOnDisk(relativePath: string): any | null {
  try {
    return JSON.parse(
      fs.readFileSync(path.join(SERVER_ROOT, relativePath), 'utf-8')
    );
  } catch {
    return null;
  }
}

/**
 * Create a notebook with a code cell per source, opened in `page`; returns its name.
 *
 * The notebook keeps the name JupyterLab gives it: renaming it behind JupyterLab's
 * back (as galata's `createNew(name)` does) leaves its kernel session on the old
 * path, so a second tab would start a second kernel.
 */
export async function notebookWithCells(
  page: IJupyterLabPageFixture,
  ...sources: string[]
): Promise<string> {
  const name = await page.notebook.createNew();
  if (!name) {
    throw new Error('JupyterLab did not create a notebook');
  }
  // The cells go into the shared notebook in one change, as a paste or a collaborator's
  // edit does. Typed key by key (Galata's setCell), CodeMirror's indentation met the
  // typed spaces: under load a loop's body now and then came out indented twice, and
  // the spec waited for lines behind an IndentationError.
  const typed = await page.evaluate(texts => {
    const panel = window.galata.app.shell.currentWidget as any;
    const notebook = panel.content;
    const shared = notebook.model.sharedModel;
    shared.transact(() => {
      shared.deleteCellRange(0, shared.cells.length);
      shared.insertCells(
        0,
        texts.map(source => ({ cell_type: 'code', source }))
      );
    });
    // Cells a person types are trusted (a collaborator's are not): their widgets and
    // HTML outputs render.
    for (const cell of notebook.widgets) {
      cell.model.trusted = true;
    }
    notebook.activeCellIndex = texts.length - 1;
    notebook.mode = 'command';
    const cells = shared.cells as { getSource(): string }[];
    return {
      path: panel.context.path as string,
      sources: cells.map(cell => cell.getSource())
    };
  }, sources);
  // The server saves the shared notebook by itself. An explicit save can race that
  // autosave and stop on JupyterLab's "File Changed" dialog, so wait for it instead.
  await expect
    .poll(() => sourcesOnDisk(typed.path), { timeout: 30000 })
    .toEqual(typed.sources);
  return name;
}

function sourcesOnDisk(notebookPath: string): string[] | null {
  const cells = readNotebookOnDisk(notebookPath)?.cells as
    { source: string | string[] }[] | undefined;
  return (
    cells?.map(cell => ([] as string[]).concat(cell.source).join('')) ?? null
  );
}

/**
 * The sources of the notebook panel in the main area (a History or versions
 * view may be the current widget).
 */
export async function notebookSources(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const app = (window as any).jupyterapp;
    const panel = Array.from(app.shell.widgets('main') as any[]).find(
      (widget: any) => widget.content?.model?.sharedModel
    );
    return panel.content.model.sharedModel.cells.map((cell: any) =>
      cell.getSource()
    );
  });
}

/** Run the active notebook's cell `index` with Shift+Enter, without waiting for it. */
export async function shiftEnter(
  page: IJupyterLabPageFixture,
  index: number
): Promise<void> {
  await page.notebook.selectCells(index);
  await page.keyboard.press('Escape');
  await page.keyboard.press('Shift+Enter');
}

/** Open a notebook in a plain second page (another tab), and wait for its cells. */
export async function openInNewTab(
  page: Page,
  notebookPath: string
): Promise<void> {
  await page.goto(`lab/tree/${notebookPath}`);
  await page.locator('.jp-NotebookPanel .jp-Cell').first().waitFor();
}

/** The stream text of code cell `index` in a page. */
/** Run > Run All Cells in the notebook `page` shows; returns once it is asked for. */
export async function runAllCells(page: Page): Promise<void> {
  await page.evaluate(() => {
    void (window as any).jupyterapp.commands.execute('notebook:run-all-cells');
  });
}

export async function cellText(page: Page, index: number): Promise<string> {
  const cell = page
    .locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell')
    .nth(index);
  return (await cell.locator('.jp-OutputArea-output').allInnerTexts()).join('');
}

/** The execution prompt of code cell `index`, e.g. "[*]:" or "[3]:". */
export async function cellPrompt(page: Page, index: number): Promise<string> {
  const cell = page
    .locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell')
    .nth(index);
  // Not innerText: a cell scrolled out of a windowed notebook's view renders no text.
  return ((await cell.locator('.jp-InputPrompt').textContent()) ?? '').trim();
}

/** The integers printed one per line by a test loop, in order. */
export function printedNumbers(text: string): number[] {
  return text
    .split('\n')
    .map(line => line.trim())
    .filter(line => /^\d+$/.test(line))
    .map(Number);
}
