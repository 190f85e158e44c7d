/** An outside agent's MCP calls, made from a spec over the page's HTTP context. */
import { expect } from '@jupyterlab/galata';
import { APIRequestContext } from '@playwright/test';

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

/**
 * Call one MCP tool as an outside agent would (initialize, then tools/call), as a client
 * calling itself `clientName`.
 */
export async function callTool(
  request: APIRequestContext,
  name: string,
  args: Record<string, unknown>,
  clientName = 'galata-agent'
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
        clientInfo: { name: clientName, version: '1' }
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
