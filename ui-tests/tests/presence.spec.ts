import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import { notebookWithCells } from './helpers';
import { callTool } from './mcp-helpers';

/** A new notebook of two cells: its path and its second cell's id. */
async function twoCellNotebook(
  page: IJupyterLabPageFixture
): Promise<[string, string]> {
  await notebookWithCells(page, 'a = 1', 'b = 2');
  return page.evaluate(() => {
    const panel = window.galata.app.shell.currentWidget as any;
    return [
      panel.context.path as string,
      panel.content.widgets[1].model.id as string
    ] as [string, string];
  });
}

/**
 * The cell a person has active in their tab is what an outside agent reads as
 * theirs (issue 21, item 4): the browser publishes it in the notebook's awareness,
 * MCP's `read_notebook` says where each person is.
 */
test('an outside agent reads which cell the person has active', async ({
  page
}) => {
  const name = await notebookWithCells(page, 'a = 1', 'b = 2', 'c = 3');
  const path = await page.evaluate(
    () => (window.galata.app.shell.currentWidget as any).context.path as string
  );
  await page.notebook.selectCells(1);
  const secondId = await page.evaluate(
    () =>
      (window.galata.app.shell.currentWidget as any).content.activeCell.model
        .id as string
  );

  await expect
    .poll(async () => await callTool(page.request, 'read_notebook', { path }), {
      timeout: 20000
    })
    .toContain(`: cell 2 (id ${secondId}) active`);

  await page.notebook.selectCells(2);
  await expect
    .poll(async () => await callTool(page.request, 'read_notebook', { path }), {
      timeout: 20000
    })
    .toMatch(/: cell 3 \(id [^)]+\) active/);
  expect(name).toBeTruthy();
});

/**
 * An agent at work is shown on the cell it works on, in every tab (issue 21, item 4):
 * an MCP client reading cell 2 shows "galata-agent for … · reading" there.
 */
test('an outside agent at work is shown on its cell', async ({ page }) => {
  const [path, secondId] = await twoCellNotebook(page);
  await callTool(page.request, 'read_cell', { path, cell_id: secondId });
  const badge = page
    .locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell')
    .nth(1)
    .locator('.jp-Loop-agentAtWork');
  await expect(badge).toContainText('galata-agent for');
  await expect(badge).toContainText('reading');
  await expect(
    page
      .locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell')
      .nth(0)
      .locator('.jp-Loop-agentAtWork')
  ).toHaveCount(0);
});

/**
 * An agent at work has a caret in the cell's editor, drawn by the collaboration
 * extension as for a person in another tab, with the agent's name on its flag.
 */
test("an outside agent's caret shows in the editor of its cell", async ({
  page
}) => {
  const [path, secondId] = await twoCellNotebook(page);
  await callTool(page.request, 'read_cell', { path, cell_id: secondId });
  const cells = page.locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell');
  await expect(cells.nth(1).locator('.jp-remote-cursor')).toHaveCount(1);
  // Its flag is a tooltip CodeMirror places over the page, not inside the cell.
  await expect(page.locator('.jp-remote-userFlag-name')).toContainText(
    'galata-agent for'
  );
  await expect(cells.nth(0).locator('.jp-remote-cursor')).toHaveCount(0);
});
