import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
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
        clientInfo: { name: 'galata-agent', version: '1' }
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
