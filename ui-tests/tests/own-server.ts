import { expect, Page } from '@playwright/test';
import { ChildProcess, spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { notebookJson } from './helpers';

/** A port nobody listens on now (the OS picks it), for a server of a test's own. */
function freePort(): number {
  const probe =
    "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])";
  const found = spawnSync('python3', ['-c', probe], { encoding: 'utf8' });
  return Number(found.stdout.trim());
}

/**
 * A JupyterLab server of a test's own (the shared one cannot be restarted), with its
 * files, YStore and jupyter-loop state kept across restarts. It runs from `home`, so
 * with `defaultStore` the collaboration store is where a plain `jupyter lab` puts it:
 * `.jupyter_ystore.db` in the server's working directory.
 *
 * `app: 'notebook'` starts `jupyter notebook` (Notebook 7) with the same configuration
 * instead: the same server extensions behind another front end.
 */
export class OwnServer {
  readonly port: number;
  readonly home = fs.mkdtempSync(path.join(os.tmpdir(), 'loop-ui-restart-'));
  readonly root = path.join(this.home, 'root');
  private _process: ChildProcess | null = null;

  constructor(
    readonly options: {
      defaultStore?: boolean;
      keepKernels?: 'crash' | 'always' | 'never';
      app?: 'lab' | 'notebook';
      /** Variables added to the server's environment (its config reads some). */
      env?: { [name: string]: string };
    } = {}
  ) {
    this.port = freePort();
  }

  get url(): string {
    return `http://localhost:${this.port}`;
  }

  /** Starts the server and waits until it answers; throws if it ends before that. */
  async start(): Promise<void> {
    fs.mkdirSync(this.root, { recursive: true });
    const env = {
      ...process.env,
      LOOP_UI_PORT: String(this.port),
      JUPYTERLAB_GALATA_ROOT_DIR: this.root,
      LOOP_UI_STATE_DIR: path.join(this.home, 'state'),
      LOOP_UI_DEFAULT_STORE: this.options.defaultStore ? '1' : '',
      LOOP_UI_KEEP_KERNELS: this.options.keepKernels ?? '',
      JUPYTER_DATA_DIR: path.join(this.home, 'data'),
      ...this.options.env
    };
    const logPath = path.join(this.home, `server-${Date.now()}.log`);
    const log = fs.openSync(logPath, 'w');
    const server = spawn(
      'jupyter',
      [
        this.options.app ?? 'lab',
        '--config',
        path.join(__dirname, '..', 'jupyter_server_test_config.py')
      ],
      { env, cwd: this.home, detached: true, stdio: ['ignore', log, log] }
    );
    this._process = server;
    // A server that cannot start (e.g. `jupyter notebook` without the notebook package)
    // ends at once: say why then, rather than after a minute of polling.
    let ended = false;
    server.once('exit', () => (ended = true));
    const deadline = Date.now() + 60000;
    for (;;) {
      if (ended) {
        throw new Error(
          `jupyter ${this.options.app ?? 'lab'} ended before answering:\n` +
            fs.readFileSync(logPath, 'utf-8').slice(-2000)
        );
      }
      try {
        if ((await fetch(`${this.url}/api/status`)).status === 200) {
          return;
        }
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        throw new Error(`jupyter did not answer on ${this.url} within 60 s`);
      }
      await new Promise(resolve => setTimeout(resolve, 250));
    }
  }

  /**
   * Open notebook `name` of this server in `page` and wait until its kernel is idle, so
   * what the test does next is not timed by the kernel's start.
   */
  async openIdle(page: Page, name: string): Promise<void> {
    await page.goto(`${this.url}/lab/tree/${name}`);
    await page.locator('.jp-NotebookPanel .jp-CodeCell').first().waitFor();
    await expect(page.locator('#jp-main-statusbar')).toContainText('Idle', {
      timeout: 60000
    });
  }

  /** Write `name` in the server's root: see {@link notebookJson}. */
  writeNotebook(name: string, sources: string[]): void {
    fs.mkdirSync(this.root, { recursive: true });
    fs.writeFileSync(path.join(this.root, name), notebookJson(sources));
  }

  /** A plain stop (SIGTERM to the server alone), waited for; kernels left are killed. */
  async stop(): Promise<void> {
    const server = this._process;
    if (!server?.pid) {
      return;
    }
    const exited = new Promise(resolve => server.once('exit', resolve));
    process.kill(server.pid, 'SIGTERM');
    await Promise.race([exited, new Promise(r => setTimeout(r, 60000))]);
    this.kill();
  }

  /** A crash of the server alone (an OOM kill): kernels a keeper holds live on. */
  crash(): void {
    if (this._process?.pid) {
      process.kill(this._process.pid, 'SIGKILL');
      this._process = null;
    }
  }

  /** A crash: the server and its kernel die at once. */
  kill(): void {
    if (this._process?.pid) {
      try {
        process.kill(-this._process.pid, 'SIGKILL');
      } catch {
        // every process of the group has exited already
      }
      this._process = null;
    }
  }

  /**
   * At a test's end: the server stopped (`graceful`) or killed, and every kernel keeper it
   * left killed too. Kept kernels outlive their server by design; a test's must not
   * outlive the test (they would wait out their orphan timeout on the CI machine).
   */
  async dispose(graceful = true): Promise<void> {
    if (graceful) {
      await this.stop();
    } else {
      this.kill();
    }
    const kernels = path.join(this.home, 'state', 'jupyter_loop', 'kernels');
    const ids = fs.existsSync(kernels) ? fs.readdirSync(kernels) : [];
    for (const id of ids) {
      try {
        const entry = JSON.parse(
          fs.readFileSync(path.join(kernels, id, 'entry.json'), 'utf-8')
        ) as { pgid?: number };
        if (typeof entry.pgid === 'number' && entry.pgid > 1) {
          process.kill(-entry.pgid, 'SIGKILL'); // the keeper and its kernel
        }
      } catch {
        // no entry (never kept), or its processes have ended already
      }
    }
  }

  /** `jupyter loop ARGS…` against this server, to its end; its exit status. */
  loop(...args: string[]): number {
    const done = spawnSync(
      'jupyter',
      ['loop', '--url', `${this.url}/`, '--token', '', ...args],
      { cwd: this.root, encoding: 'utf-8', timeout: 120000 }
    );
    return done.status ?? -1;
  }
}
