import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import {
  ModelServer,
  ask,
  cellId,
  cells,
  liveNotebook,
  openAssistant,
  runCommand,
  screenshot
} from './agent-helpers';
import { cellText, openInNewTab } from './helpers';

const model = ModelServer.of();

test.beforeEach(async () => {
  await model.reset();
});

const ANSWER =
  'The second cell divides **by zero**: `total / 0` raises ' +
  '`ZeroDivisionError: division by zero`. Divide by a number that is not ' +
  'zero, or guard the division — for example `x / y if y else float("nan")`. ' +
  'Ünïcode survives too: ✓.';

test('ask about a failing cell and see the answer stream in', async ({
  page
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await liveNotebook(page, 'total = 10', 'ratio = total / 0');
  await runCommand(page, 'notebook:run-all-cells');
  await expect.poll(() => cellText(page, 1)).toContain('ZeroDivisionError');
  const failing = await cellId(page, 1);

  await model.script({
    text: ANSWER,
    chunk_size: 6,
    delay: 0.06,
    usage: [1234, 56]
  });
  // The notebook toolbar button opens the panel; the cell toolbar button puts
  // the cell in focus.
  await page
    .locator(
      '.jp-NotebookPanel-toolbar [data-jp-item-name="jupyter-loop-assistant"] jp-button'
    )
    .click();
  const panel = page.locator('.jp-Loop-AgentPanel');
  await expect(panel).toBeVisible();
  await page.notebook.selectCells(1);
  await cells(page)
    .nth(1)
    .locator('[data-jp-item-name="jupyter-loop-ask"] jp-button')
    .click();
  await expect(panel.locator('.jp-Loop-FocusChip')).toHaveText(/@cell 2/);
  // Record every length of the answer the panel shows, to see it stream.
  await page.evaluate(() => {
    const seen: number[] = [];
    (window as any).answerLengths = seen;
    new MutationObserver(records => {
      for (const record of records) {
        const node = record.target as HTMLElement;
        if (node.closest?.('.jp-Loop-Message.jp-mod-assistant')) {
          seen.push(Number(node.getAttribute('data-text-length')));
        }
      }
    }).observe(document.querySelector('.jp-Loop-AgentPanel')!, {
      subtree: true,
      attributes: true,
      attributeFilter: ['data-text-length']
    });
  });
  // Enter sends; Shift+Enter starts a new line.
  const input = panel.getByRole('textbox', {
    name: 'Message to the AI assistant'
  });
  await expect(input).toBeFocused();
  await input.pressSequentially('Why does this cell fail?');
  await input.press('Shift+Enter');
  await input.pressSequentially('Be brief.');
  await expect(input).toHaveValue('Why does this cell fail?\nBe brief.');
  await input.press('Enter');

  // The user's message, then the answer streaming in: seen partly, then whole.
  await expect(
    panel.locator('.jp-Loop-Message.jp-mod-user .jp-Loop-Message-text')
  ).toHaveText('Why does this cell fail?\nBe brief.');
  const answer = panel.locator('.jp-Loop-Message.jp-mod-assistant');
  await expect(answer.locator('strong')).toHaveText('by zero');
  await expect(answer).toContainText('Ünïcode survives too: ✓.');
  const lengths: number[] = await page.evaluate(
    () => (window as any).answerLengths
  );
  expect(lengths.some(n => n > 0 && n < ANSWER.length)).toBe(true);
  await expect(panel.locator('.jp-Loop-Turn-usage')).toContainText(
    '1.2k in · 56 out tokens'
  );
  // The foot says what the day's budget has left, counting this turn.
  const budget = panel.locator('.jp-Loop-BudgetLine');
  await expect(budget).toContainText(
    /Today: \S+ of 10\.0M tokens used · \S+ left/
  );
  await expect(budget).not.toContainText('Today: 0 of');
  await expect(panel.locator('.jp-Loop-FocusChip')).toHaveCount(0);

  // The model saw the cell in focus, with its real error.
  const [request] = await model.chatRequests();
  const prompt = JSON.stringify(request.body.messages);
  expect(prompt).toContain(failing);
  expect(prompt).toContain('ZeroDivisionError');
  expect(prompt).toContain('Why does this cell fail?');
  // The docs' picture shows the notebook and the panel, not the test's folder.
  await page.sidebar.close('left');
  await screenshot(page, 'agent-panel.png');

  // The dark theme: the panel follows JupyterLab's theme variables.
  await page.theme.setDarkTheme();
  const background = await panel.evaluate(
    node => getComputedStyle(node).backgroundColor
  );
  const [r, g, b] = background.match(/\d+/g)!.map(Number);
  expect(r + g + b).toBeLessThan(3 * 80);
  await screenshot(page, 'agent-panel-dark.png');
  await page.theme.setLightTheme();
});

test('a provider error is said in plain words and ends the turn', async ({
  page
}) => {
  await liveNotebook(page, 'x = 1');
  await model.script({ status: 401, error: 'Incorrect API key provided.' });
  const panel = await openAssistant(page);
  await ask(page, 'Hello?');
  const notice = panel.locator('.jp-Loop-Notice.jp-mod-error');
  await expect(notice).toBeVisible();
  await expect(notice).not.toContainText('Traceback');
  await expect(panel.locator('.jp-Loop-Turn-state')).toHaveText(
    'The turn ended with an error.'
  );
  // Said once: the notice, not again in the turn's footer.
  await expect(panel.getByText(/rejected the API key/)).toHaveCount(1);
  // The notebook is untouched and the next message can be sent.
  await expect(
    panel.getByRole('button', { name: 'Send the message' })
  ).toBeAttached();
});

test('New conversation empties the panel in every tab, and the model hears none of it', async ({
  page,
  context,
  tmpPath
}) => {
  const name = await liveNotebook(page, 'x = 1');
  const other = await context.newPage();
  await openInNewTab(other, `${tmpPath}/${name}`);
  const otherPanel = await openAssistant(other);
  await page.bringToFront();
  const panel = await openAssistant(page);
  await model.script({ status: 500, error: 'boom' });
  await ask(page, 'A question that fails');
  await expect(panel.locator('.jp-Loop-Notice.jp-mod-error')).toBeVisible();
  await expect(otherPanel.locator('.jp-Loop-Turn')).toHaveCount(1);

  await panel.getByRole('button', { name: 'New conversation' }).click();
  for (const side of [panel, otherPanel]) {
    await expect(side.locator('.jp-Loop-Turn')).toHaveCount(0);
    await expect(side.locator('.jp-Loop-Empty')).toContainText(
      'Ask about this notebook.'
    );
  }

  await model.script({ text: 'A fresh answer.' });
  await ask(page, 'A fresh question');
  await expect(
    otherPanel.locator('.jp-Loop-Message.jp-mod-assistant')
  ).toHaveText('A fresh answer.');
  await expect(panel.locator('.jp-Loop-Turn')).toHaveCount(1);
  const requests = await model.chatRequests();
  const last = JSON.stringify(requests[requests.length - 1].body.messages);
  expect(last).toContain('A fresh question');
  expect(last).not.toContain('A question that fails');
});

test('a lost connection is shown, nothing typed is lost, and the panel reconnects', async ({
  page
}) => {
  await liveNotebook(page, 'x = 1');
  await model.script({ text: 'Back online.' });
  const panel = await openAssistant(page);
  await page.route('**/api/jupyter-loop/agent/**', route =>
    route.abort('connectionrefused')
  );
  await ask(page, 'Are you there?');
  const banner = panel.locator('.jp-Loop-Banner');
  await expect(banner).toContainText('Lost the connection');
  const input = panel.getByRole('textbox', {
    name: 'Message to the AI assistant'
  });
  await expect(input).toHaveValue('Are you there?');
  await expect(page.locator('.jp-toast-message').first()).toContainText(
    'The message was not sent'
  );

  await page.unroute('**/api/jupyter-loop/agent/**');
  await expect(banner).toHaveCount(0, { timeout: 20000 });
  await input.press('Enter');
  await expect(panel.locator('.jp-Loop-Message.jp-mod-assistant')).toHaveText(
    'Back online.'
  );
});

test('the model picker lists the server’s models and the choice is a setting', async ({
  page
}) => {
  await liveNotebook(page, 'x = 1');
  const panel = await openAssistant(page);
  const picker = panel.getByRole('combobox', { name: 'Model' });
  await expect(picker).toHaveValue('scripted-tools');
  await expect(picker.locator('option')).toHaveText([
    'scripted-plain',
    'scripted-tools',
    'scripted-vision'
  ]);
  await picker.selectOption('scripted-vision');
  await expect.poll(() => savedModelSetting(page)).toBe('scripted-vision');

  await model.script({ text: 'Seen with the vision model.' });
  await ask(page, 'Which model is this?');
  await expect(panel.locator('.jp-Loop-Turn-usage')).toContainText(
    'scripted-vision'
  );
  const [request] = await model.chatRequests();
  expect((request.body as unknown as { model: string }).model).toBe(
    'scripted-vision'
  );
  // Back to the default, for the other tests.
  await picker.selectOption('scripted-tools');
  await expect.poll(() => savedModelSetting(page)).toBe('scripted-tools');
});

/** The model chosen in the assistant's settings, as JupyterLab stored it. */
function savedModelSetting(page: IJupyterLabPageFixture): Promise<unknown> {
  return page.evaluate(async () => {
    const plugin = await (
      window as any
    ).jupyterapp.serviceManager.settings.fetch('jupyter-loop:agent');
    return plugin.settings?.model;
  });
}
