import { expect, test } from '@jupyterlab/galata';
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';

/** A free TCP port on the loopback interface. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

/** A second test server with no model provider at all. */
async function serverWithoutProvider(): Promise<{
  url: string;
  process: ChildProcess;
}> {
  const port = await freePort();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'loop-no-provider-'));
  const child = spawn(
    'jupyter',
    ['lab', '--config', 'jupyter_server_test_config.py'],
    {
      cwd: path.join(__dirname, '..'),
      env: {
        ...process.env,
        LOOP_UI_PORT: String(port),
        LOOP_AGENT_PROVIDER: 'none',
        JUPYTERLAB_GALATA_ROOT_DIR: root
      },
      detached: true,
      stdio: 'ignore'
    }
  );
  const url = `http://localhost:${port}`;
  const deadline = Date.now() + 90000;
  for (;;) {
    try {
      const response = await fetch(`${url}/api/jupyter-loop/agent/models`);
      if (response.ok) {
        return { url, process: child };
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      throw new Error('The second Jupyter server did not start');
    }
    await new Promise(resolve => setTimeout(resolve, 500));
  }
}

test('with no provider configured, the panel says how to configure one', async ({
  browser
}) => {
  const server = await serverWithoutProvider();
  try {
    const models = await (
      await fetch(`${server.url}/api/jupyter-loop/agent/models`)
    ).json();
    expect(models.configured).toBe(false);
    expect(models.hint).toContain('OPENAI_API_KEY');

    const page = await browser.newPage();
    await page.goto(`${server.url}/lab`);
    await page.waitForFunction(() => {
      const commands = (window as any).jupyterapp?.commands;
      return (
        !!commands &&
        commands.hasCommand('notebook:create-new') &&
        commands.hasCommand('jupyter-loop:open-panel')
      );
    });
    await page.evaluate(() =>
      (window as any).jupyterapp.commands.execute('notebook:create-new', {
        kernelName: 'python3'
      })
    );
    await page.locator('.jp-NotebookPanel .jp-Cell').first().waitFor();
    await page.evaluate(() =>
      (window as any).jupyterapp.commands.execute('jupyter-loop:open-panel')
    );
    const panel = page.locator('.jp-Loop-AgentPanel');
    const hint = panel.locator('.jp-Loop-ConfigHint');
    await expect(hint).toContainText('No model provider is configured.');
    // Said once, not again as the first words of the server's hint.
    expect(
      ((await hint.textContent()) ?? '').split(
        'No model provider is configured.'
      ).length - 1
    ).toBe(1);
    // One line to copy; the server's whole hint folded below it; the settings page.
    await expect(hint.locator('.jp-Loop-ConfigHint-command')).toHaveText(
      'OPENAI_API_KEY=sk-… jupyter lab'
    );
    await expect(hint.locator('details')).toContainText(
      'c.JupyterLoopApp.openai_api_key'
    );
    await expect(hint.locator('a')).toHaveAttribute(
      'href',
      /docs\/configuration\.md$/
    );
    // In a 250 px panel: a few lines, the command on one line (it scrolls).
    const lines = await hint.evaluate((node: HTMLElement) => {
      node.style.width = '250px';
      node.style.boxSizing = 'border-box';
      const line = parseFloat(getComputedStyle(node).lineHeight) || 18;
      const command = node.querySelector(
        '.jp-Loop-ConfigHint-command'
      ) as HTMLElement;
      const commandLine =
        parseFloat(getComputedStyle(command).lineHeight) || line;
      return {
        hint: node.getBoundingClientRect().height / line,
        command: command.clientHeight / commandLine
      };
    });
    expect(lines.hint).toBeLessThan(10);
    expect(lines.command).toBeLessThan(2);
    await expect(
      panel.getByRole('textbox', { name: 'Message to the AI assistant' })
    ).toBeDisabled();
    await page.close();
  } finally {
    if (server.process.pid) {
      process.kill(-server.process.pid, 'SIGTERM');
    }
  }
});
