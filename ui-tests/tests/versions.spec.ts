import { expect, test } from '@jupyterlab/galata';
import { Page } from '@playwright/test';

import { runCommand } from './agent-helpers';
import {
  notebookSources,
  notebookWithCells,
  readNotebookOnDisk
} from './helpers';

interface IVersion {
  number: number;
}

/** The first cell's source in the file on disk (nbformat may split it in lines). */
function firstSourceOnDisk(path: string): string | undefined {
  const source = readNotebookOnDisk(path)?.cells?.[0]?.source;
  return source === undefined
    ? undefined
    : ([] as string[]).concat(source).join('');
}

/** The newest kept version of `path` whose first cell's source is `source`. */
async function versionWith(
  page: Page,
  path: string,
  source: string
): Promise<number | undefined> {
  const query = `path=${encodeURIComponent(path)}`;
  const listed = await page.request.get(`api/jupyter-loop/versions?${query}`);
  const versions = (await listed.json()).versions as IVersion[];
  for (const version of versions) {
    const reply = await page.request.get(
      `api/jupyter-loop/versions/${version.number}?${query}`
    );
    const cells = (await reply.json()).content.cells as { source: string }[];
    if (([] as string[]).concat(cells[0]?.source ?? '').join('') === source) {
      return version.number;
    }
  }
  return undefined;
}

/**
 * Issue 20, item 4, from the History view: the notebook's kept versions are
 * listed; restoring one into the open notebook is a proposal at its top, which
 * puts the version in once accepted, and undo in the notebook (Z in command
 * mode) takes it back, in the tab and in the file.
 */
test('a kept version is proposed from the versions view, accepted, and undone with Z', async ({
  page
}) => {
  await notebookWithCells(page, 'first = 1');
  const path = await page.evaluate(
    () => (window.galata.app.shell.currentWidget as any).context.path as string
  );
  await page.notebook.setCell(0, 'code', 'second = 2');
  await expect
    .poll(() => firstSourceOnDisk(path), { timeout: 30000 })
    .toBe('second = 2');
  const first = await versionWith(page, path, 'first = 1');
  expect(first).toBeDefined();

  await runCommand(page, 'jupyter-loop:notebook-versions');
  const view = page.locator('.jp-Loop-versions');
  await expect(view).toBeVisible();
  const rows = view.locator('.jp-Loop-version');
  await expect(rows.first()).toContainText('(the file holds it)');
  await expect(
    rows.first().getByRole('button', { name: 'Restore' })
  ).toBeDisabled();

  const row = view.locator(`.jp-Loop-version[data-version="${first}"]`);
  await row.getByRole('button', { name: 'Restore' }).click();
  const notice = view.locator('.jp-Loop-historyNotice');
  await expect(notice).toContainText(
    `Version ${first} is proposed at the top of the notebook`
  );
  // Nothing changed yet: the proposal waits at the top of the notebook.
  expect(await notebookSources(page)).toEqual(['second = 2']);
  await page.activity.activateTab(path.split('/').pop() as string);
  const banner = page.locator('.jp-Notebook .jp-Loop-CellProposal');
  await expect(banner).toContainText('Restore a kept version of this notebook');
  await expect(banner).toContainText(
    'in place of the 1 cell the notebook has now'
  );
  await banner.getByRole('button', { name: 'Accept' }).click();
  await expect.poll(() => notebookSources(page)).toEqual(['first = 1']);
  await expect(banner).toHaveCount(0);
  await expect
    .poll(() => firstSourceOnDisk(path), { timeout: 30000 })
    .toBe('first = 1');

  // Undo in the notebook, as a person would: command mode, Z.
  await page.locator('.jp-Notebook .jp-Cell .jp-InputPrompt').first().click();
  await page.keyboard.press('Escape');
  await page.keyboard.press('z');
  await expect.poll(() => notebookSources(page)).toEqual(['second = 2']);
  await expect
    .poll(() => firstSourceOnDisk(path), { timeout: 30000 })
    .toBe('second = 2');
});
