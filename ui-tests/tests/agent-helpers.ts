import { IJupyterLabPageFixture } from '@jupyterlab/galata';
import { Locator, Page } from '@playwright/test';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { notebookWithCells } from './helpers';

/**
 * The scripted model server the test server talks to (see
 * jupyter_server_test_config.py), scripted over HTTP.
 */
export class ModelServer {
  constructor(readonly url: string) {}

  /** The model server of the test server on `port` (LOOP_UI_PORT by default). */
  static of(port = process.env.LOOP_UI_PORT): ModelServer {
    const file = path.join(
      os.tmpdir(),
      `jupyter-loop-model-server-${port}.url`
    );
    return new ModelServer(fs.readFileSync(file, 'utf-8').trim());
  }

  /** Forget queued replies and recorded requests. */
  async reset(): Promise<void> {
    await this._post('/_reset', {});
  }

  /** Queue replies, answered in order (see jupyter_loop/testing/replies.py). */
  async script(...replies: IReply[]): Promise<void> {
    await this._post('/_script', replies);
  }

  /** The model requests (chat completions and Responses API) so far, oldest first. */
  async modelRequests(): Promise<{ body: unknown }[]> {
    const response = await fetch(`${this.url}/_requests`);
    const all: { path: string; body: unknown }[] = await response.json();
    return all.filter(
      r => r.path.endsWith('/chat/completions') || r.path.endsWith('/responses')
    );
  }

  /** The chat requests received so far, oldest first. */
  async chatRequests(): Promise<{ body: { messages: unknown[] } }[]> {
    const response = await fetch(`${this.url}/_requests`);
    const all = (await response.json()) as {
      path: string;
      body: { messages: unknown[] };
    }[];
    return all.filter(r => r.path.endsWith('/chat/completions'));
  }

  private async _post(endpoint: string, body: unknown): Promise<void> {
    const response = await fetch(`${this.url}${endpoint}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body)
    });
    if (!response.ok) {
      throw new Error(
        `${endpoint} answered ${response.status}: ${await response.text()}`
      );
    }
  }
}

/** A scripted reply (jupyter_loop/testing/replies.py `Reply`). */
export interface IReply {
  text?: string;
  tool_calls?: { name: string; arguments: { [key: string]: unknown } }[];
  usage?: [number, number];
  delay?: number;
  chunk_size?: number;
  status?: number;
  error?: string;
  /** Taken only by a request whose body contains this text. */
  requires?: string;
}

/** The id of cell `index` of the active notebook. */
export async function cellId(page: Page, index: number): Promise<string> {
  return page.evaluate(i => {
    const app = (window as any).jupyterapp;
    const panel = app.shell.currentWidget;
    return panel.content.model.sharedModel.cells[i].getId() as string;
  }, index);
}

/** The sources of the active notebook's cells, from its shared model. */
export async function cellSources(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const app = (window as any).jupyterapp;
    const panel = app.shell.currentWidget;
    return panel.content.model.sharedModel.cells.map((c: any) =>
      c.getSource()
    ) as string[];
  });
}

/** Open the assistant's side panel (through its command), wait for it. */
export async function openAssistant(page: Page): Promise<Locator> {
  await page.evaluate(() =>
    (window as any).jupyterapp.commands.execute('jupyter-loop:open-panel')
  );
  const panel = page.locator('.jp-Loop-AgentPanel');
  await panel.waitFor({ state: 'visible' });
  return panel;
}

/** Type a message in the assistant and send it with Enter. */
export async function ask(page: Page, message: string): Promise<void> {
  const input = page.getByRole('textbox', {
    name: 'Message to the AI assistant'
  });
  await input.fill(message);
  await input.press('Enter');
}

/** The notebook's cells (the visible notebook). */
export function cells(page: Page): Locator {
  return page.locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell');
}

/** Start a command of the app in a page (without waiting for it to end). */
export async function runCommand(
  page: Page | IJupyterLabPageFixture,
  id: string,
  args: { [key: string]: unknown } = {}
): Promise<void> {
  await page.evaluate(
    ({ id, args }) => {
      void (window as any).jupyterapp.commands.execute(id, args);
    },
    { id, args }
  );
}

/** Save screenshots for the README only when asked (LOOP_SCREENSHOTS=1). */
export async function screenshot(
  target: Page | Locator,
  name: string
): Promise<void> {
  if (process.env.LOOP_SCREENSHOTS !== '1') {
    return;
  }
  const file = path.join(__dirname, '..', '..', 'docs', 'images', name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await target.screenshot({ path: file });
}

/** {@link notebookWithCells}, left in command mode (the panel takes the keyboard next). */
export async function liveNotebook(
  page: IJupyterLabPageFixture,
  ...sources: string[]
): Promise<string> {
  const name = await notebookWithCells(page, ...sources);
  await page.keyboard.press('Escape');
  return name;
}
