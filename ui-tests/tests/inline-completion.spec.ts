import { expect, galata, test } from '@jupyterlab/galata';
import { Page } from '@playwright/test';

import {
  ModelServer,
  cellId,
  cellSources,
  liveNotebook,
  openAssistant
} from './agent-helpers';
import { cellText } from './helpers';

const model = ModelServer.of();
const INLINE = '@jupyterlab/completer-extension:inline-completer';

// The test server turns our provider off (it would answer other tests' keystrokes);
// here it is on, as for a user, with a short debounce.
test.use({
  mockSettings: {
    ...galata.DEFAULT_SETTINGS,
    [INLINE]: {
      providers: {
        'jupyter-loop:inline': {
          enabled: true,
          debouncerDelay: 200,
          timeout: 15000,
          model: 'scripted-plain' // the server's default is scripted-tools
        }
      }
    }
  }
});

test.beforeEach(async () => {
  await model.reset();
});

/** The server's completion usage (GET /api/jupyter-loop/completion/status). */
async function completionUsage(page: Page): Promise<{
  requests: number;
  input_tokens: number;
  output_tokens: number;
}> {
  const response = await page.request.get(
    '/api/jupyter-loop/completion/status'
  );
  return (await response.json()).usage;
}

test('ghost text completes a column the previous cell printed; Tab accepts it; the panel counts it', async ({
  page
}) => {
  // The column name is only in the output: the source builds it.
  await liveNotebook(
    page,
    'name = "price_eur_" + str(2000 + 24)\nprint(f"{name:>16}  qty")\nprint(f"{10.5:>16}  {3:>3}")',
    ''
  );
  await page.notebook.runCell(0);
  await expect.poll(() => cellText(page, 0)).toContain('price_eur_2024');

  // The assistant's panel is open: its foot shows the server's completion
  // usage, refreshed after this tab's completions end.
  const before = await completionUsage(page);
  const panel = await openAssistant(page);
  const sentIds: string[][] = [];
  page.on('request', request => {
    if (request.url().includes('/jupyter-loop/completion/stream')) {
      sentIds.push(JSON.parse(request.postData() ?? '{}').visible_cell_ids);
    }
  });

  // Answered only when the prompt carries the column name (from the output).
  // Like chat models do, the answer repeats the "pr" being typed: the ghost
  // text must not. The text comes whole at once, the stream's end and its
  // token count a second later: Tab is pressed before them, and they count.
  await model.script({
    text: 'price_eur_2024"]',
    requires: 'price_eur_2024',
    chunk_size: 20,
    delay: 0.5,
    usage: [1234, 7]
  });
  await page.notebook.enterCellEditingMode(1);
  await page.keyboard.type('df["pr');

  const ghost = page.locator('.jp-GhostText');
  await expect(ghost).toHaveText('ice_eur_2024"]', { timeout: 20000 });
  await page.keyboard.press('Tab');
  await expect
    .poll(async () => (await cellSources(page))[1])
    .toBe('df["price_eur_2024"]');
  await expect(ghost).toHaveCount(0);

  const requests = await fetch(`${model.url}/_requests`).then(r => r.json());
  const sent = JSON.stringify(
    requests.filter((r: { path: string }) => r.path === '/v1/chat/completions')
  );
  expect(sent).toContain('price_eur_2024');
  expect(sent).toContain('"model":"scripted-plain"');
  expect(sent).toContain('df[\\"pr<CURSOR>');

  // Both cells are on screen: the browser said so.
  const ids = [await cellId(page, 0), await cellId(page, 1)];
  expect(sentIds[sentIds.length - 1]).toEqual(ids);

  const line = panel.locator('.jp-Loop-CompletionUsage');
  await expect
    .poll(async () => (await completionUsage(page)).requests)
    .toBeGreaterThan(before.requests);
  await expect
    .poll(async () => {
      const usage = await completionUsage(page);
      const title = (await line.getAttribute('title')) ?? '';
      return (
        usage.input_tokens - before.input_tokens >= 1234 &&
        title.includes(
          `model requests ${usage.requests}, input tokens ${usage.input_tokens}, output tokens ${usage.output_tokens},`
        )
      );
    })
    .toBe(true);
  const usage = await completionUsage(page);
  await expect(line).toContainText(
    `${usage.requests} request${usage.requests === 1 ? '' : 's'}`
  );
  await expect(line).toContainText(/[\d.k]+ in · [\d.k]+ out tokens/);
});

test('typing on aborts the model call of a suggestion still streaming', async ({
  page
}) => {
  await liveNotebook(page, 'x = 1', '');
  await model.script({
    text: ' + 1'.repeat(200),
    requires: 'slow_suggestion',
    chunk_size: 4,
    delay: 0.05
  });
  await page.notebook.enterCellEditingMode(1);
  await page.keyboard.type('slow_suggestion = x');
  const ghost = page.locator('.jp-GhostText');
  await expect(ghost).toContainText('+ 1 + 1', { timeout: 20000 });

  await page.keyboard.type(' *');
  await expect
    .poll(
      async () => {
        const aborted = await fetch(`${model.url}/_aborted`).then(r =>
          r.json()
        );
        return JSON.stringify(aborted).includes('slow_suggestion');
      },
      { timeout: 20000 }
    )
    .toBe(true);
});

test('listed and switchable in Settings → Inline Completer', async ({
  page
}) => {
  const listed = await page.evaluate(async id => {
    const registry = await window.galata.getPlugin(
      '@jupyterlab/apputils-extension:settings'
    );
    const settings = await registry!.load(id);
    const providers = settings.schema.properties!.providers.properties!;
    const ours = providers['jupyter-loop:inline'];
    return {
      title: ours?.title,
      options: Object.keys(ours?.properties ?? {}).sort(),
      composite: (settings.composite.providers as any)['jupyter-loop:inline']
    };
  }, INLINE);
  expect(listed.title).toBe('jupyter-loop AI provider');
  expect(listed.options).toEqual(
    expect.arrayContaining(['enabled', 'debouncerDelay', 'timeout', 'model'])
  );
  expect(listed.composite.enabled).toBe(true);
});
