import { expect, test } from '@jupyterlab/galata';

import {
  ModelServer,
  ask,
  liveNotebook,
  cellId,
  cells,
  openAssistant,
  runCommand,
  screenshot
} from './agent-helpers';
import { cellText, openInNewTab } from './helpers';

const model = ModelServer.of();

test.beforeEach(async () => {
  await model.reset();
});

test('an approval answered from a second tab lets the agent run a cell', async ({
  page,
  context,
  tmpPath
}) => {
  const name = await liveNotebook(page, 'print("héllo from the agent")');
  const target = await cellId(page, 0);
  await model.script(
    { tool_calls: [{ name: 'run_cells', arguments: { cell_ids: [target] } }] },
    { text: 'The cell printed its greeting.' }
  );
  const other = await context.newPage();
  await openInNewTab(other, `${tmpPath}/${name}`);
  const otherPanel = await openAssistant(other);
  await page.bringToFront();
  const panel = await openAssistant(page);
  await ask(page, 'Run the cell and tell me what it prints.');

  // Both tabs ask, in the panel and on the cell.
  for (const [tab, side] of [
    [page, panel],
    [other, otherPanel]
  ] as const) {
    await expect(side.locator('.jp-Loop-Approval')).toBeVisible();
    await expect(side.locator('.jp-Loop-Approval-source')).toHaveText(
      'print("héllo from the agent")'
    );
    await expect(
      cells(tab).nth(0).locator('.jp-Loop-CellApproval')
    ).toContainText('The assistant wants to run this cell');
  }
  await expect(panel.locator('.jp-Loop-Turn-state')).toHaveText(
    'Waiting for your approval…'
  );
  expect(await cellText(page, 0)).toBe('');
  await screenshot(page, 'agent-approval.png');

  // The second tab allows it: the cell runs on the server; both tabs see it.
  await other.bringToFront();
  await cells(other)
    .nth(0)
    .locator('.jp-Loop-CellApproval')
    .getByRole('button', { name: 'Allow once' })
    .click();
  for (const [tab, side] of [
    [page, panel],
    [other, otherPanel]
  ] as const) {
    await expect
      .poll(() => cellText(tab, 0), { timeout: 30000 })
      .toContain('héllo from the agent');
    await expect(side.locator('.jp-Loop-Approval')).toHaveCount(0);
    await expect(tab.locator('.jp-Loop-CellApproval')).toHaveCount(0);
    await expect(side.locator('.jp-Loop-Message.jp-mod-assistant')).toHaveText(
      'The cell printed its greeting.'
    );
  }
  // The tool step is a compact line that expands to its details.
  const step = panel.locator('.jp-Loop-ToolStep');
  await expect(step.locator('summary')).toContainText('cell');
  await step.locator('summary').click();
  await expect(step.locator('.jp-Loop-ToolStep-detail')).toBeVisible();

  // The journal lists the approval, by whom, and the run.
  await runCommand(page, 'jupyter-loop:show-journal');
  const journal = page.locator('.jp-Dialog .jp-Loop-Journal');
  await expect(journal).toContainText('approval');
  await expect(journal).toContainText('cell_run');
  await page
    .locator('.jp-Dialog')
    .getByRole('button', { name: 'Close' })
    .click();

  // The model got the real output.
  const requests = await model.chatRequests();
  expect(JSON.stringify(requests[1].body.messages)).toContain(
    'héllo from the agent'
  );
});

test('close the tab mid-turn and reopen it to find the finished answer', async ({
  page,
  context,
  tmpPath
}) => {
  const name = await liveNotebook(page, 'x = 42');
  // No tab keeps the notebook open but the one that asks.
  await page.notebook.close(false);
  const answer = 'The answer is forty-two. '.repeat(8).trim();
  await model.script({ text: answer, chunk_size: 5, delay: 0.1 });

  // Ask from a second tab, and close it while the answer streams.
  const asking = await context.newPage();
  await openInNewTab(asking, `${tmpPath}/${name}`);
  const panel = await openAssistant(asking);
  await ask(asking, 'What is x?');
  await expect(
    panel.locator('.jp-Loop-Message.jp-mod-assistant')
  ).toContainText('The answer');
  await asking.close();

  // The turn goes on with no tab open, and ends on the server.
  await expect
    .poll(
      async () => {
        const response = await page.request.get(
          `/api/jupyter-loop/agent/conversation?path=${encodeURIComponent(
            `${tmpPath}/${name}`
          )}`
        );
        return (await response.json()).turn?.state;
      },
      { timeout: 30000 }
    )
    .toBe('done');

  // Reopened, the notebook shows the whole answer and the finished turn.
  const reopened = await context.newPage();
  await openInNewTab(reopened, `${tmpPath}/${name}`);
  const again = await openAssistant(reopened);
  await expect(
    again.locator('.jp-Loop-Message.jp-mod-user .jp-Loop-Message-text')
  ).toHaveText('What is x?');
  await expect(again.locator('.jp-Loop-Message.jp-mod-assistant')).toHaveText(
    answer,
    { timeout: 20000 }
  );
  await expect(
    again.getByRole('button', { name: 'Send the message' })
  ).toBeVisible();
});

test('Stop ends a running turn, from the panel', async ({ page }) => {
  await liveNotebook(page, 'x = 1');
  await model.script({
    text: 'This is a very slow answer that nobody will read to the end. '.repeat(
      4
    ),
    chunk_size: 3,
    delay: 0.2
  });
  const panel = await openAssistant(page);
  await ask(page, 'Tell me a long story.');
  const stop = panel.getByRole('button', { name: 'Stop the assistant' });
  await expect(stop).toBeVisible();
  await expect(
    panel.locator('.jp-Loop-Message.jp-mod-assistant')
  ).toContainText('This is');
  await stop.click();
  await expect(panel.locator('.jp-Loop-Turn-state')).toHaveText('Stopped.');
  await expect(panel.locator('.jp-Loop-Notice')).toContainText('Stopped by');
  await expect(
    panel.getByRole('button', { name: 'Send the message' })
  ).toBeVisible();
});
