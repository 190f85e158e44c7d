/**
 * Galata configuration: Debian's chromium (browsers cannot be downloaded here),
 * no video (it needs a downloaded ffmpeg), a JupyterLab started for the run.
 */
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const base = require('@jupyterlab/galata/lib/playwright-config');

// The server's root directory, known to the tests so they can read saved files on disk.
process.env.JUPYTERLAB_GALATA_ROOT_DIR =
  process.env.JUPYTERLAB_GALATA_ROOT_DIR ||
  path.join(os.tmpdir(), 'jupyter-loop-ui-root');
fs.mkdirSync(process.env.JUPYTERLAB_GALATA_ROOT_DIR, { recursive: true });

// Several test servers may share a machine, and a person may have a `jupyter lab` of
// their own on 8888: unless LOOP_UI_PORT names one, the run takes a port nobody listens on.
// (Set in the environment, the workers Playwright forks read the same port as the runner.)
function freePort() {
  const probe =
    "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])";
  return execFileSync('python3', ['-c', probe], { encoding: 'utf8' }).trim();
}
const port = process.env.LOOP_UI_PORT || freePort();

// The specs that script the test server's one model server (agent-helpers.ts): its
// replies are one queue, so two of these at once would take each other's replies. They
// run one at a time (their project's worker), beside the other specs.
const scriptedModelSpecs = [
  'acp-agent',
  'agent-*',
  'history',
  'inline-completion',
  'versions'
].map(name => `**/${name}.spec.ts`);
process.env.LOOP_UI_PORT = port;
process.env.TARGET_URL = `http://localhost:${port}`;

module.exports = {
  ...base,
  timeout: 120000,
  // A notebook's first run waits for its kernel to start, which takes several seconds
  // on a busy 2-core CI machine: the 5 s default made first-output checks flaky.
  expect: { ...base.expect, timeout: 20000 },
  // Two browsers at once: a spec mostly waits on its kernel and the server, and each
  // has a folder of its own (Galata's tmpPath). The specs that restart a server start
  // their own (own-server.ts).
  workers: Number(process.env.LOOP_UI_WORKERS || 2),
  projects: [
    { name: 'scripted model', testMatch: scriptedModelSpecs, workers: 1 },
    { name: 'browser', testIgnore: scriptedModelSpecs }
  ],
  retries: process.env.CI ? 1 : 0,
  // In CI a run that goes wrong as a whole (a server that stopped answering) ends within
  // bounds and says so, instead of using up CI's time one 2-minute test timeout at a time.
  globalTimeout: process.env.CI ? 30 * 60 * 1000 : 0,
  maxFailures: process.env.CI ? 5 : 0,
  use: {
    ...base.use,
    baseURL: `http://localhost:${port}`,
    video: 'off',
    trace: 'off',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync'
      ]
    }
  },
  webServer: {
    command: 'jlpm start',
    env: { ...process.env },
    url: `http://localhost:${port}/lab`,
    timeout: 120000,
    // Never a server that was already there: it would not be the one this run configures.
    reuseExistingServer: false,
    // A plain stop, so the server ends its kernels: killed (Playwright's default), it
    // left each kept kernel and its keeper running after the tests (keep_kernels=crash).
    gracefulShutdown: { signal: 'SIGTERM', timeout: 20000 }
  }
};
