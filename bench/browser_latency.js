/**
 * What a user waits for in the browser: jupyter-loop against stock JupyterLab
 * with jupyter-collaboration, on the same machine, in headless chromium.
 *
 *   (a) Shift-Enter on `1+1` until its `2` is in the page;
 *   (b) Shift-Enter on a cell printing 100 lines until its last line is in the
 *       page;
 *   (c) Shift-Enter on a cell that prints a line, then works on (sleeps 1 s),
 *       until that line is in the page (output that comes while a cell runs).
 *
 * Runs alternate between the two servers (a, b on one, then a, b on the other,
 * the order swapped every round), so load on a shared machine falls on both
 * alike. Prints p50 and p95 of each and the ratio loop/stock of the medians.
 *
 * The stock server runs from a venv of its own, without jupyter-loop, with the
 * JupyterLab and jupyter-collaboration versions of the loop venv (`pip list`):
 *
 *   python3 -m venv /tmp/stock-venv
 *   /tmp/stock-venv/bin/pip install jupyterlab==4.6.6 \
 *       jupyter-collaboration==5.0.4 jupyter-server-ydoc==3.0.4 ipykernel
 *
 * Then, from the repository with the loop venv's `jupyter` first on PATH:
 *
 *   node bench/browser_latency.js [--runs N] [--stock-venv DIR] [--loop-venv DIR]
 *                                 [--breakdown]
 *
 * --runs N         measured runs of each cell on each server (default 50)
 * --stock-venv DIR the venv above (default /tmp/stock-venv)
 * --loop-venv DIR  the venv with jupyter-loop (default: `jupyter` on PATH)
 * --breakdown      also split each wait in three, from the page's websockets:
 *                  the key to the run request sent (loop: the runs socket;
 *                  stock: the kernel's), that to the last frame received
 *                  before the text was shown (the server and the kernel), and
 *                  that frame to the text shown (the page's own work)
 *
 * Both servers listen on 127.0.0.1 on free ports with a random token, from
 * empty directories with their own Jupyter config and data dirs (so nothing of
 * this user's ~/.jupyter is loaded), and are stopped at the end. Times are
 * taken in the page: from the Shift-Enter keydown to the DOM mutation that
 * shows the awaited text (before the next paint, the same for both).
 */
const { spawn } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');

const playwright = require.resolve('@playwright/test', {
  paths: [path.join(__dirname, '..', 'ui-tests')]
});
const { chromium } = require(playwright);

const WARMUP_RUNS = 3;
const RUN_TIMEOUT_MS = 60000;
const LINES = 100;

function parseArgs(argv) {
  const options = {
    runs: 50,
    stockVenv: '/tmp/stock-venv',
    loopVenv: null,
    breakdown: false
  };
  for (let i = 0; i < argv.length; i++) {
    const [name, value] = [argv[i], argv[i + 1]];
    if (name === '--breakdown') {
      options.breakdown = true;
      continue;
    }
    if (name === '--runs') {
      options.runs = Number(value);
    } else if (name === '--stock-venv') {
      options.stockVenv = value;
    } else if (name === '--loop-venv') {
      options.loopVenv = value;
    } else {
      throw new Error(
        `unknown argument ${name} (see the header of ${__filename})`
      );
    }
    i++;
  }
  if (!Number.isInteger(options.runs) || options.runs < 1) {
    throw new Error('--runs takes a positive whole number');
  }
  return options;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const NOTEBOOK = {
  cells: [
    { cell_type: 'code', source: '1+1' },
    { cell_type: 'code', source: `for i in range(${LINES}):\n    print(i)` },
    { cell_type: 'code', source: 'print(0)' },
    // Shift-Enter on the last cell would add a cell every run.
    { cell_type: 'code', source: '' }
  ].map((cell, i) => ({
    ...cell,
    id: `cell-${i}`,
    metadata: {},
    outputs: [],
    execution_count: null
  })),
  metadata: {
    kernelspec: {
      name: 'python3',
      display_name: 'Python 3',
      language: 'python'
    }
  },
  nbformat: 4,
  nbformat_minor: 5
};

/** A JupyterLab server in a directory of its own, started from `jupyter`. */
class Server {
  constructor(label, jupyter, env) {
    this.label = label;
    this.jupyter = jupyter;
    this.env = env;
    this.home = fs.mkdtempSync(path.join(os.tmpdir(), `latency-${label}-`));
    this.token = crypto.randomBytes(24).toString('hex');
  }

  async start() {
    this.port = await freePort();
    const root = path.join(this.home, 'root');
    fs.mkdirSync(root);
    fs.writeFileSync(path.join(root, 'bench.ipynb'), JSON.stringify(NOTEBOOK));
    this.logPath = path.join(this.home, 'server.log');
    const log = fs.openSync(this.logPath, 'w');
    const env = {
      ...this.env,
      JUPYTER_CONFIG_DIR: path.join(this.home, 'config'),
      JUPYTER_DATA_DIR: path.join(this.home, 'data'),
      JUPYTER_RUNTIME_DIR: path.join(this.home, 'runtime')
    };
    this.process = spawn(
      this.jupyter,
      [
        'lab',
        '--no-browser',
        '--ServerApp.ip=127.0.0.1',
        `--ServerApp.port=${this.port}`,
        '--ServerApp.port_retries=0',
        `--IdentityProvider.token=${this.token}`,
        `--ServerApp.root_dir=${root}`,
        '--ServerApp.allow_root=True',
        '--LabApp.expose_app_in_browser=True'
      ],
      { env, cwd: this.home, detached: true, stdio: ['ignore', log, log] }
    );
    let ended = false;
    this.process.once('exit', () => (ended = true));
    const deadline = Date.now() + 120000;
    for (;;) {
      if (ended) {
        throw new Error(`${this.label} server ended; see ${this.logPath}`);
      }
      try {
        const status = await fetch(`${this.base}/api/status`, {
          headers: { Authorization: `token ${this.token}` }
        });
        if (status.ok) {
          return;
        }
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        throw new Error(
          `${this.label} server did not answer; see ${this.logPath}`
        );
      }
      await new Promise(resolve => setTimeout(resolve, 250));
    }
  }

  get base() {
    return `http://127.0.0.1:${this.port}`;
  }

  get notebookUrl() {
    return `${this.base}/lab/tree/bench.ipynb?token=${this.token}`;
  }

  /** SIGTERM to the server's process group, then SIGKILL to what is left. */
  async stop() {
    const child = this.process;
    if (!child || child.exitCode !== null) {
      return;
    }
    const exited = new Promise(resolve => child.once('exit', resolve));
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      return;
    }
    await Promise.race([exited, new Promise(r => setTimeout(r, 20000))]);
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // every process of the group has exited
    }
  }
}

/**
 * In the page, before JupyterLab loads: note when each run request is sent and
 * when each websocket frame arrives (`--breakdown`). A listener added as the
 * socket is made runs before the page's own handler of the frame.
 */
function recordSockets() {
  window.__sent = [];
  window.__received = [];
  const Native = window.WebSocket;
  const runsRequests = /\/runs\/socket|\/channels/;
  const send = Native.prototype.send;
  Native.prototype.send = function (data) {
    if (runsRequests.test(this.url)) {
      window.__sent.push(performance.now());
    }
    return send.call(this, data);
  };
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', () =>
        window.__received.push(performance.now())
      );
    }
  };
}

/** Open the notebook and wait for its kernel to be idle. */
async function openNotebook(browser, server, breakdown) {
  const page = await browser.newPage();
  if (breakdown) {
    await page.addInitScript(recordSockets);
  }
  await page.goto(server.notebookUrl);
  await page.waitForFunction(
    () => {
      const panel = window.jupyterapp?.shell.currentWidget;
      const kernel = panel?.sessionContext?.session?.kernel;
      return panel?.context?.isReady && kernel?.status === 'idle';
    },
    null,
    { timeout: 120000 }
  );
  return page;
}

/**
 * In the page: arm a watch that starts at the next Shift-Enter keydown and ends
 * at the first DOM mutation after which `cellIndex`'s outputs show `expected`.
 * `fresh` says the output is this run's (not the last run's, still in the page).
 */
function armWatch({ cellIndex, kind, expected, timeoutMs }) {
  const panel = window.jupyterapp.shell.currentWidget;
  const cellNode = panel.content.widgets[cellIndex].node;
  const outputs = () => [...cellNode.querySelectorAll('.jp-OutputArea-output')];
  const promptText = () =>
    [...cellNode.querySelectorAll('.jp-OutputPrompt')]
      .map(node => node.textContent)
      .join('');
  const before = promptText();
  const shown = () => {
    if (kind === 'result') {
      // Execution counts only grow: a new prompt is this run's result.
      const texts = outputs().map(node => node.textContent.trim());
      return promptText() !== before && texts.includes(expected);
    }
    const lines = outputs()
      .map(node => node.textContent)
      .join('')
      .trimEnd()
      .split('\n');
    return lines[lines.length - 1] === expected;
  };
  window.__latency = new Promise(resolve => {
    let startedAt = null;
    const observer = new MutationObserver(() => {
      if (startedAt !== null && shown()) {
        observer.disconnect();
        const now = performance.now();
        const sent = (window.__sent ?? []).find(t => t >= startedAt);
        const frame = (window.__received ?? []).filter(t => t <= now).pop();
        resolve({
          total: now - startedAt,
          toSent: sent === undefined ? null : sent - startedAt,
          toFrame: sent === undefined || frame < sent ? null : frame - sent,
          toShown: frame === undefined || frame < startedAt ? null : now - frame
        });
      }
    });
    // Not `once`: Shift's own keydown comes first.
    const onKeydown = event => {
      if (event.key === 'Enter' && event.shiftKey) {
        startedAt = performance.now();
        document.removeEventListener('keydown', onKeydown, true);
        observer.observe(cellNode, {
          childList: true,
          subtree: true,
          characterData: true
        });
      }
    };
    document.addEventListener('keydown', onKeydown, true);
    setTimeout(() => {
      observer.disconnect();
      resolve(null);
    }, timeoutMs);
  });
}

/** The cell's source, set through the model (not timed), unique per run. */
function setSource({ cellIndex, source }) {
  const panel = window.jupyterapp.shell.currentWidget;
  panel.content.widgets[cellIndex].model.sharedModel.setSource(source);
}

/** Wait until the kernel is idle and no cell shows [*] (the last run ended). */
async function settle(page) {
  await page.waitForFunction(
    () => {
      const panel = window.jupyterapp.shell.currentWidget;
      const prompts = [...panel.node.querySelectorAll('.jp-InputPrompt')];
      return (
        panel.sessionContext.session.kernel.status === 'idle' &&
        !prompts.some(node => node.textContent.includes('*'))
      );
    },
    null,
    { timeout: RUN_TIMEOUT_MS }
  );
  await page.waitForTimeout(100);
}

/** One timed Shift-Enter on cell `cellIndex`: milliseconds, and their parts. */
async function timedRun(page, label, cellIndex, kind, expected) {
  await settle(page);
  await page
    .locator('.jp-NotebookPanel .jp-Cell')
    .nth(cellIndex)
    .locator('.jp-InputPrompt')
    .click();
  await page.evaluate(armWatch, {
    cellIndex,
    kind,
    expected,
    timeoutMs: RUN_TIMEOUT_MS
  });
  await page.keyboard.press('Shift+Enter');
  const times = await page.evaluate(() => window.__latency);
  if (times === null) {
    throw new Error(`${label}: cell ${cellIndex} did not show ${expected}`);
  }
  return times;
}

async function measureRound(page, label, round, times) {
  const result = await timedRun(page, label, 0, 'result', '2');
  // The last line names the round: the last round's output cannot match.
  await page.evaluate(setSource, {
    cellIndex: 1,
    source: `for i in range(${LINES}):\n    print(${round}, i)`
  });
  const last = await timedRun(page, label, 1, 'lines', `${round} ${LINES - 1}`);
  await page.evaluate(setSource, {
    cellIndex: 2,
    source: `import time\nprint('tick', ${round})\ntime.sleep(1)`
  });
  const tick = await timedRun(page, label, 2, 'lines', `tick ${round}`);
  if (times) {
    times.result.push(result);
    times.lines.push(last);
    times.tick.push(tick);
  }
}

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low] + (sorted[high] - sorted[low]) * (at - low);
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const stockJupyter = path.join(options.stockVenv, 'bin', 'jupyter');
  if (!fs.existsSync(stockJupyter)) {
    throw new Error(
      `no ${stockJupyter}: make the stock venv (see ${__filename})`
    );
  }
  const loopJupyter = options.loopVenv
    ? path.join(options.loopVenv, 'bin', 'jupyter')
    : 'jupyter';
  // The stock server must not pick up jupyter-loop (or anything else) through
  // the environment; the loop server keeps PYTHONPATH (a worktree's code).
  const clean = { ...process.env };
  for (const name of [
    'PYTHONPATH',
    'JUPYTER_PATH',
    'JUPYTER_CONFIG_PATH',
    'JUPYTERLAB_DIR',
    'VIRTUAL_ENV'
  ]) {
    delete clean[name];
  }
  const loopEnv = { ...clean, PYTHONPATH: process.env.PYTHONPATH || '' };
  const stockEnv = {
    ...clean,
    PATH: `${path.join(options.stockVenv, 'bin')}:${clean.PATH}`
  };
  const servers = [
    new Server('loop', loopJupyter, loopEnv),
    new Server('stock', stockJupyter, stockEnv)
  ];
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run']
  });
  let finished = false;
  try {
    await Promise.all(servers.map(server => server.start()));
    const pages = {};
    for (const server of servers) {
      pages[server.label] = await openNotebook(
        browser,
        server,
        options.breakdown
      );
    }
    const times = {};
    for (const server of servers) {
      times[server.label] = { result: [], lines: [], tick: [] };
    }
    for (let round = 0; round < WARMUP_RUNS + options.runs; round++) {
      const order = round % 2 ? [...servers].reverse() : servers;
      for (const server of order) {
        const measured = round >= WARMUP_RUNS ? times[server.label] : null;
        await measureRound(pages[server.label], server.label, round, measured);
      }
    }
    const cpus = os.cpus().length;
    const load = os
      .loadavg()
      .map(x => x.toFixed(2))
      .join(' ');
    console.log(
      `browser latency, headless chromium, ${options.runs} runs each ` +
        `(+${WARMUP_RUNS} warm-up), interleaved; ${cpus} CPUs, load ${load}`
    );
    const names = {
      result: 'Shift-Enter on 1+1 to its 2 shown',
      lines: `${LINES}-line cell to its last line shown`,
      tick: 'a line printed by a running cell shown'
    };
    const rows = [];
    for (const metric of ['result', 'lines', 'tick']) {
      for (const server of servers) {
        const values = times[server.label][metric].map(t => t.total);
        rows.push([
          `${names[metric]}, ${server.label}`,
          quantile(values, 0.5).toFixed(1),
          quantile(values, 0.95).toFixed(1)
        ]);
      }
    }
    const width = Math.max(...rows.map(row => row[0].length));
    console.log(`${''.padEnd(width)}   p50 ms   p95 ms`);
    for (const [label, p50, p95] of rows) {
      console.log(
        `${label.padEnd(width)}  ${p50.padStart(7)}  ${p95.padStart(7)}`
      );
    }
    const median = (label, metric, part) =>
      quantile(
        times[label][metric].map(t => t[part]).filter(t => t !== null),
        0.5
      );
    for (const metric of ['result', 'lines', 'tick']) {
      const ratio =
        median('loop', metric, 'total') / median('stock', metric, 'total');
      console.log(
        `ratio loop/stock of medians, ${names[metric]}: ${ratio.toFixed(2)}x`
      );
    }
    if (options.breakdown) {
      console.log(
        'medians of the parts, ms: key to request sent | to the last frame ' +
          'received | to the text shown'
      );
      for (const metric of ['result', 'lines', 'tick']) {
        for (const server of servers) {
          const parts = ['toSent', 'toFrame', 'toShown'].map(part =>
            median(server.label, metric, part).toFixed(1)
          );
          console.log(
            `  ${names[metric]}, ${server.label}: ${parts.join(' | ')}`
          );
        }
      }
    }
    finished = true;
  } finally {
    await browser.close();
    await Promise.all(servers.map(server => server.stop()));
    // A failed run keeps the servers' directories: their logs say why.
    if (finished) {
      for (const server of servers) {
        fs.rmSync(server.home, { recursive: true, force: true });
      }
    }
  }
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});
