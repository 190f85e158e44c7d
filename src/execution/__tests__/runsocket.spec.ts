import { ServerConnection } from '@jupyterlab/services';

import { IRunRequest } from '../../payloads';
import { RunRefused, RunSocket } from '../runsocket';

/** The parts of the `ws` package (jsdom's own websocket library) used here. */
interface IClient {
  send(data: string): void;
  terminate(): void;
  on(event: 'message', listener: (data: unknown) => void): void;
}
interface IServer {
  on(event: 'listening', listener: () => void): void;
  on(
    event: 'connection',
    listener: (client: IClient, request: { url?: string }) => void
  ): void;
  address(): { port: number };
  close(callback: () => void): void;
}
// eslint-disable-next-line @typescript-eslint/no-var-requires
const { WebSocketServer } = require('ws') as {
  WebSocketServer: new (options: { host: string; port: number }) => IServer;
};

interface IFrame {
  request_id: string;
  run: IRunRequest;
}

/**
 * A scripted runs socket on 127.0.0.1: keeps the frames it gets and answers as
 * the test says (`jupyter_loop/execution/run_socket.py` is the real one).
 */
class ScriptedServer {
  frames: IFrame[] = [];
  urls: string[] = [];
  clients: IClient[] = [];

  async start(port = 0): Promise<void> {
    const server = new WebSocketServer({ host: '127.0.0.1', port });
    server.on('connection', (client, request) => {
      this.clients.push(client);
      this.urls.push(request.url ?? '');
      client.on('message', data => {
        this.frames.push(JSON.parse(String(data)) as IFrame);
        this._arrived?.();
      });
    });
    await new Promise<void>(resolve => server.on('listening', resolve));
    this._server = server;
  }

  get port(): number {
    return this._server!.address().port;
  }

  async framesArrived(count: number): Promise<void> {
    while (this.frames.length < count) {
      await new Promise<void>(resolve => (this._arrived = resolve));
    }
  }

  answer(body: unknown): void {
    this.clients[this.clients.length - 1].send(JSON.stringify(body));
  }

  async stop(): Promise<void> {
    for (const client of this.clients) {
      client.terminate();
    }
    await new Promise<void>(resolve => this._server!.close(resolve));
  }

  private _server: IServer | null = null;
  private _arrived: (() => void) | null = null;
}

function request(...cellIds: string[]): IRunRequest {
  return {
    path: 'nb.ipynb',
    cell_ids: cellIds,
    kernel_id: 'k1',
    record_timing: false
  };
}

function ticket(cellId: string): unknown {
  return {
    path: 'nb.ipynb',
    kernel_id: 'k1',
    cells: [{ cell_id: cellId, run_id: `run-${cellId}`, state: 'queued' }]
  };
}

describe('RunSocket', () => {
  let server: ScriptedServer;
  let socket: RunSocket;

  beforeEach(async () => {
    server = new ScriptedServer();
    await server.start();
    socket = new RunSocket(
      ServerConnection.makeSettings({
        baseUrl: `http://127.0.0.1:${server.port}/`,
        wsUrl: `ws://127.0.0.1:${server.port}/`,
        token: 'secret token',
        appendToken: true
      })
    );
  });

  afterEach(async () => {
    socket.dispose();
    await server.stop();
  });

  it('sends each request as a frame and matches answers by request id', async () => {
    const first = socket.run(request('c0'));
    const second = socket.run(request('c1', 'c2'));
    await server.framesArrived(2);
    expect(server.urls).toEqual([
      '/api/jupyter-loop/runs/socket?token=secret%20token'
    ]);
    const [one, two] = server.frames;
    expect(one.run).toEqual(request('c0'));
    expect(two.run.cell_ids).toEqual(['c1', 'c2']);
    server.answer({ request_id: two.request_id, ticket: ticket('c1') });
    server.answer({ request_id: one.request_id, ticket: ticket('c0') });
    expect((await first).cells[0].cell_id).toBe('c0');
    expect((await second).cells[0].cell_id).toBe('c1');
  });

  it("rejects with the server's message when it refuses a request", async () => {
    const refused = socket.run(request('gone'));
    await server.framesArrived(1);
    server.answer({
      request_id: server.frames[0].request_id,
      error: {
        status: 404,
        message: "No cell with id 'gone' in this notebook."
      }
    });
    await expect(refused).rejects.toEqual(
      new RunRefused(404, "No cell with id 'gone' in this notebook.")
    );
  });

  it('fails what is unanswered when the socket closes, then opens a new one', async () => {
    const lost = socket.run(request('c0'));
    await server.framesArrived(1);
    server.clients[0].terminate();
    await expect(lost).rejects.toThrow('closed before it answered');
    const again = socket.run(request('c1'));
    await server.framesArrived(2);
    expect(server.clients).toHaveLength(2);
    server.answer({
      request_id: server.frames[1].request_id,
      ticket: ticket('c1')
    });
    expect((await again).cells[0].cell_id).toBe('c1');
  });

  it('sends runs over REST for a while when the socket cannot open, then tries again', async () => {
    const closedPort = server.port;
    await server.stop();
    const posted: string[] = [];
    const refused = new RunSocket(
      ServerConnection.makeSettings({
        baseUrl: `http://127.0.0.1:${closedPort}/`,
        wsUrl: `ws://127.0.0.1:${closedPort}/`,
        fetch: async (input: RequestInfo | URL) => {
          const sent = input as Request;
          const url = sent.url.split('?')[0]; // without ServerConnection's cache buster
          posted.push(`${sent.method} ${url} ${await sent.text()}`);
          return new Response(JSON.stringify(ticket('c0')), { status: 202 });
        }
      })
    );
    expect((await refused.run(request('c0'))).cells[0].cell_id).toBe('c0');
    expect((await refused.run(request('c1'))).cells[0].cell_id).toBe('c0');
    expect(posted).toEqual([
      `POST http://127.0.0.1:${closedPort}/api/jupyter-loop/runs ${JSON.stringify(request('c0'))}`,
      `POST http://127.0.0.1:${closedPort}/api/jupyter-loop/runs ${JSON.stringify(request('c1'))}`
    ]);
    // Half a minute later the socket is tried again, and the server has one now.
    const later = Date.now() + 31000;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => later);
    server = new ScriptedServer();
    await server.start(closedPort);
    const overSocket = refused.run(request('c2'));
    await server.framesArrived(1);
    server.answer({
      request_id: server.frames[0].request_id,
      ticket: ticket('c2')
    });
    expect((await overSocket).cells[0].cell_id).toBe('c2');
    expect(posted).toHaveLength(2);
    clock.mockRestore();
    refused.dispose();
  });
});
