import { expect, test } from '@jupyterlab/galata';

import { notebookWithCells } from './helpers';
import { callTool } from './mcp-helpers';

/**
 * An outside agent's request to run a cell says who asks, in the tab's card on the cell
 * and in the panel (issue 42: both read "The assistant wants to run this cell", while
 * the manual promised "an MCP client of ada, calling itself NAME").
 */
test("an MCP client's run approval names the client in the tab and the panel", async ({
  page
}) => {
  await notebookWithCells(page, 'print(40 + 2)');
  const [path, cellId] = await page.evaluate(() => {
    const panel = window.galata.app.shell.currentWidget as any;
    return [
      panel.context.path as string,
      panel.content.widgets[0].model.id as string
    ];
  });
  await page.evaluate(() =>
    (window as any).jupyterapp.commands.execute('jupyter-loop:open-panel')
  );
  const running = callTool(
    page.request,
    'run_cells',
    { path, cell_ids: [cellId], wait_seconds: 60 },
    'night-agent'
  );
  const asker = /^An MCP client of .+, calling itself "night-agent"/;
  const card = page.locator('.jp-Loop-CellApproval');
  await expect(card).toContainText('wants to run this cell');
  await expect(card.locator('.jp-Loop-OnCell-title')).toHaveText(asker);
  const inPanel = page.locator('.jp-Loop-AgentPanel .jp-Loop-Approval-title');
  await expect(inPanel).toHaveText(asker);
  await expect(inPanel).toContainText('wants to run a cell');

  await card.getByRole('button', { name: 'Allow once' }).click();
  expect(await running).toContain('42');
  await expect(card).toHaveCount(0);
});
