import { expect, test } from '@jupyterlab/galata';
import { APIRequestContext } from '@playwright/test';

import { notebookWithCells } from './helpers';

const MCP = 'api/jupyter-loop/mcp';
const ACCEPT = 'application/json, text/event-stream';

/** The JSON-RPC reply in a Streamable HTTP response (plain JSON or one SSE event). */
function replyOf(body: string): any {
  const data = body
    .split('\n')
    .filter(line => line.startsWith('data:'))
    .map(line => line.slice(5).trim())
    .join('');
  return JSON.parse(data || body);
}

/** Call one MCP tool as an outside agent would (initialize, then tools/call). */
async function callTool(
  request: APIRequestContext,
  name: string,
  args: Record<string, unknown>
): Promise<string> {
  const init = await request.post(MCP, {
    headers: { Accept: ACCEPT, 'Content-Type': 'application/json' },
    data: {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'night-agent', version: '1' }
      }
    }
  });
  expect(init.ok()).toBe(true);
  const session = init.headers()['mcp-session-id'];
  const headers: Record<string, string> = {
    Accept: ACCEPT,
    'Content-Type': 'application/json',
    'MCP-Protocol-Version': '2025-06-18'
  };
  if (session) {
    headers['Mcp-Session-Id'] = session;
  }
  await request.post(MCP, {
    headers,
    data: { jsonrpc: '2.0', method: 'notifications/initialized' }
  });
  const called = await request.post(MCP, {
    headers,
    data: {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name, arguments: args }
    }
  });
  const reply = replyOf(await called.text());
  return (reply.result?.content ?? [])
    .map((item: { text?: string }) => item.text ?? '')
    .join('');
}

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
  const running = callTool(page.request, 'run_cells', {
    path,
    cell_ids: [cellId],
    wait_seconds: 60
  });
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
