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
 * listed and one is restored into the open notebook, after a dialog; the view
 * names the version the restore replaced, and restoring that one undoes it.
 */
test('a kept version is restored from the versions view, and undone by restoring the one it replaced', async ({
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
  await expect
    .poll(() => versionWith(page, path, 'second = 2'), { timeout: 30000 })
    .toBeDefined();

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
  const dialog = page.locator('.jp-Dialog');
  await expect(dialog).toContainText(`Restore version ${first}?`);
  await dialog.getByRole('button', { name: 'Restore' }).click();
  await expect.poll(() => notebookSources(page)).toEqual(['first = 1']);
  const notice = view.locator('.jp-Loop-historyNotice');
  await expect(notice).toContainText(`Restored version ${first}`);
  await expect(notice).toContainText('restore it to undo');
  const replaced = Number(
    /version (\d+): restore it to undo/.exec(
      (await notice.textContent()) ?? ''
    )?.[1]
  );
  expect(replaced).toBe(await versionWith(page, path, 'second = 2'));

  await view
    .locator(`.jp-Loop-version[data-version="${replaced}"]`)
    .getByRole('button', { name: 'Restore' })
    .click();
  await dialog.getByRole('button', { name: 'Restore' }).click();
  await expect.poll(() => notebookSources(page)).toEqual(['second = 2']);
  await expect.poll(() => firstSourceOnDisk(path)).toBe('second = 2');
});
