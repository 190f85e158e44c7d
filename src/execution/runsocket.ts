import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { PromiseDelegate } from '@lumino/coreutils';

import { postJSON, requestAPI } from '../request';
import { IRunRequest, IRunTicket } from '../payloads';

/** Milliseconds runs go over REST after the socket could not be opened. */
const REFUSED_FOR = 30000;
/** `WebSocket.OPEN`, for socket classes that do not carry the constant. */
const OPEN = 1;

/** The server's answer to a run request it would not queue. */
export class RunRefused extends Error {
  constructor(
    readonly status: number,
    message: string
  ) {
    super(message);
  }
}

interface IAnswer {
  request_id: string | null;
  ticket?: IRunTicket;
  error?: { status: number; message: string };
}

/**
 * Sends run requests over one websocket (the server's
 * `execution/run_socket.py`), as a kernel connection sends execute requests:
 * no HTTP request per run, and the server handles them in the order they were
 * sent.
 *
 * The socket opens with the first request and again after it closes. When it
 * cannot be opened (a proxy that refuses websockets), runs go over REST for a
 * while: the same requests, the same answers.
 */
export class RunSocket {
  constructor(
    private readonly _settings: ServerConnection.ISettings = ServerConnection.makeSettings()
  ) {}

  /**
   * Queue the cells; resolves with what the server queued. On an open socket
   * the request leaves before this returns, as a kernel connection sends an
   * execute request: the page's work after the key (JupyterLab advancing to
   * the next cell) then no longer delays it.
   */
  run(request: IRunRequest): Promise<IRunTicket> {
    const open = this._socket;
    if (open && open.readyState === OPEN) {
      return this._send(open, request);
    }
    return this._connected().then(socket =>
      socket
        ? this._send(socket, request)
        : requestAPI<IRunTicket>('runs', postJSON(request), this._settings)
    );
  }

  private _send(socket: WebSocket, request: IRunRequest): Promise<IRunTicket> {
    const requestId = `${++this._sent}`;
    const answer = new PromiseDelegate<IRunTicket>();
    this._waiting.set(requestId, answer);
    socket.send(JSON.stringify({ request_id: requestId, run: request }));
    return answer.promise;
  }

  /** Close the socket; requests still unanswered fail. */
  dispose(): void {
    this._socket?.close();
  }

  private async _connected(): Promise<WebSocket | null> {
    if (Date.now() < this._refusedUntil) {
      return null;
    }
    if (!this._opening) {
      this._opening = this._open();
    }
    const socket = await this._opening;
    if (!socket) {
      this._opening = null; // refused: the next try after a while opens a new one
    }
    return socket;
  }

  private _open(): Promise<WebSocket | null> {
    const settings = this._settings;
    let url = URLExt.join(
      settings.wsUrl,
      'api',
      'jupyter-loop',
      'runs',
      'socket'
    );
    if (settings.appendToken && settings.token) {
      url += `?token=${encodeURIComponent(settings.token)}`;
    }
    const opened = new PromiseDelegate<WebSocket | null>();
    let socket: WebSocket;
    try {
      socket = new settings.WebSocket(url);
    } catch {
      this._refusedUntil = Date.now() + REFUSED_FOR; // an unusable URL
      return Promise.resolve(null);
    }
    socket.onopen = () => {
      this._socket = socket;
      opened.resolve(socket);
    };
    socket.onmessage = event => this._answer(String(event.data));
    socket.onclose = () => {
      if (this._socket !== socket) {
        this._refusedUntil = Date.now() + REFUSED_FOR;
        opened.resolve(null);
      }
      this._closed(socket);
    };
    return opened.promise;
  }

  private _answer(data: string): void {
    const answer = JSON.parse(data) as IAnswer;
    const waiting = this._waiting.get(answer.request_id ?? '');
    if (!waiting) {
      return; // an answer to a frame it could not read: nothing waits for it
    }
    this._waiting.delete(answer.request_id ?? '');
    if (answer.ticket) {
      waiting.resolve(answer.ticket);
    } else {
      const error = answer.error ?? { status: 500, message: 'No answer' };
      waiting.reject(new RunRefused(error.status, error.message));
    }
  }

  private _closed(socket: WebSocket): void {
    if (this._socket === socket) {
      this._socket = null;
    }
    this._opening = null;
    for (const waiting of this._waiting.values()) {
      waiting.reject(
        new Error('The connection to the server closed before it answered.')
      );
    }
    this._waiting.clear();
  }

  private _socket: WebSocket | null = null;
  private _opening: Promise<WebSocket | null> | null = null;
  private _waiting = new Map<string, PromiseDelegate<IRunTicket>>();
  private _sent = 0;
  private _refusedUntil = 0;
}
