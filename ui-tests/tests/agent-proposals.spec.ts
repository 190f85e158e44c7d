import { expect, test } from '@jupyterlab/galata';
import { Page } from '@playwright/test';

import {
  ModelServer,
  ask,
  liveNotebook,
  cellId,
  cellSources,
  cells,
  openAssistant,
  screenshot
} from './agent-helpers';
import { openInNewTab } from './helpers';

const model = ModelServer.of();

test.beforeEach(async () => {
  await model.reset();
});

/** The on-cell proposal of cell `index`. */
const onCell = (page: Page, index: number) =>
  cells(page).nth(index).locator('.jp-Loop-CellProposal');

test('a proposal shows on the cell and in a second tab; Accept applies it and Ctrl-Z undoes it', async ({
  page,
  context,
  tmpPath
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const name = await liveNotebook(
    page,
    'import math',
    'ratio = 10 / 0\nprint("ratio:", ratio)'
  );
  const target = await cellId(page, 1);
  await model.script(
    {
      tool_calls: [
        {
          name: 'propose_modify',
          arguments: {
            cell_id: target,
            source: 'ratio = 10 / 4\nprint("ratio:", ratio)',
            summary: 'Divide by four instead of zero'
          }
        }
      ]
    },
    { text: 'I proposed a fix: divide by **four**.' }
  );
  const other = await context.newPage();
  await openInNewTab(other, `${tmpPath}/${name}`);
  const otherPanel = await openAssistant(other);
  await page.bringToFront();
  const panel = await openAssistant(page);
  await ask(page, 'Fix the division, please.');

  // In this tab and the other: a card in the panel and a diff on the cell.
  for (const [tab, side] of [
    [page, panel],
    [other, otherPanel]
  ] as const) {
    const card = side.locator('.jp-Loop-Proposal');
    await expect(card).toHaveCount(1);
    await expect(card.locator('.jp-Loop-Proposal-label')).toHaveText(
      'Edit cell 2'
    );
    await expect(card).toContainText('Divide by four instead of zero');
    await expect(card.locator('.jp-Loop-DiffLine.jp-mod-del')).toHaveText(
      /ratio = 10 \/ 0/
    );
    await expect(card.locator('.jp-Loop-DiffLine.jp-mod-add')).toHaveText(
      /ratio = 10 \/ 4/
    );
    await expect(onCell(tab, 1)).toBeVisible();
    await expect(onCell(tab, 1).locator('.cm-deletedChunk')).toContainText(
      'ratio = 10 / 0'
    );
    await expect(onCell(tab, 1).locator('.cm-changedLine')).toContainText(
      'ratio = 10 / 4'
    );
  }
  await expect(
    panel.locator('.jp-Loop-Message.jp-mod-assistant')
  ).toContainText('divide by four');
  await screenshot(page, 'agent-proposal-panel.png');
  await screenshot(cells(page).nth(1), 'agent-proposal-diff.png');

  // Accept on the cell: the cell changes in both tabs, the proposal resolves.
  await onCell(page, 1).getByRole('button', { name: 'Accept' }).click();
  for (const [tab, side] of [
    [page, panel],
    [other, otherPanel]
  ] as const) {
    await expect
      .poll(() => cellSources(tab))
      .toEqual(['import math', 'ratio = 10 / 4\nprint("ratio:", ratio)']);
    await expect(side.locator('.jp-Loop-Badge')).toHaveText('Accepted');
    await expect(onCell(tab, 1)).toHaveCount(0);
  }
  await expect(otherPanel.locator('.jp-Loop-Proposal-resolved')).toHaveText(
    /^Accepted/
  );

  // Ctrl-Z in the tab that accepted undoes the edit.
  await cells(page).nth(1).locator('.cm-content').click();
  await page.keyboard.press('Control+z');
  await expect
    .poll(() => cellSources(page))
    .toEqual(['import math', 'ratio = 10 / 0\nprint("ratio:", ratio)']);
  await expect
    .poll(() => cellSources(other))
    .toEqual(['import math', 'ratio = 10 / 0\nprint("ratio:", ratio)']);
  // Every tab's card says so, instead of "Accepted by you".
  for (const side of [panel, otherPanel]) {
    await expect(side.locator('.jp-Loop-Badge')).toHaveText('Undone');
    await expect(side.locator('.jp-Loop-Proposal-resolved')).toContainText(
      'then undone in the notebook'
    );
  }
});

test('two tabs pressing Accept at the same instant apply the edit once; Ctrl-Z in the accepting tab undoes it', async ({
  page,
  context,
  tmpPath
}) => {
  const before = 'ratio = 10 / 0\nprint("ratio:", ratio)';
  const after = 'ratio = 10 / 4\nprint("ratio:", ratio)';
  const name = await liveNotebook(page, 'import math', before);
  const target = await cellId(page, 1);
  await model.script(
    {
      tool_calls: [
        {
          name: 'propose_modify',
          arguments: {
            cell_id: target,
            source: after,
            summary: 'Divide by four'
          }
        }
      ]
    },
    { text: 'Proposed.' }
  );
  const other = await context.newPage();
  await openInNewTab(other, `${tmpPath}/${name}`);
  await openAssistant(other);
  await page.bringToFront();
  await openAssistant(page);
  await ask(page, 'Fix the division, please.');
  const tabs = [page, other];
  for (const tab of tabs) {
    await expect(onCell(tab, 1)).toBeVisible();
  }

  // Both press Accept together (a DOM click each, sent at once, no waiting for
  // the other): the server grants the claim to one tab only.
  const claims: number[][] = [[], []];
  tabs.forEach((tab, i) =>
    tab.on('response', r => {
      if (r.url().includes('/claim')) {
        claims[i].push(r.status());
      }
    })
  );
  await Promise.all(
    tabs.map(tab =>
      tab.evaluate(() =>
        (
          document.querySelector(
            '.jp-Loop-CellProposal .jp-Loop-accept'
          ) as HTMLButtonElement
        ).click()
      )
    )
  );
  for (const tab of tabs) {
    await expect.poll(() => cellSources(tab)).toEqual(['import math', after]);
    await expect(onCell(tab, 1)).toHaveCount(0);
  }
  const granted = claims.map(statuses => statuses.includes(200));
  expect(granted.filter(Boolean)).toHaveLength(1);
  expect(claims.flat().filter(status => status !== 200)).toEqual(
    claims.flat().length === 2 ? [409] : []
  );

  // Ctrl-Z in the tab that applied it takes the edit out, in both tabs.
  const accepting = tabs[granted.indexOf(true)];
  await accepting.bringToFront();
  await cells(accepting).nth(1).locator('.cm-content').click();
  await accepting.keyboard.press('Control+z');
  for (const tab of tabs) {
    await expect.poll(() => cellSources(tab)).toEqual(['import math', before]);
  }
});

test('Reject leaves the notebook unchanged (a ghost cell and a deletion, rejected together)', async ({
  page,
  context,
  tmpPath
}) => {
  const name = await liveNotebook(page, 'data = [3, 1, 2]', 'print(data)');
  const [first, second] = [await cellId(page, 0), await cellId(page, 1)];
  await model.script(
    {
      tool_calls: [
        {
          name: 'propose_insert',
          arguments: {
            after_cell_id: first,
            cell_type: 'code',
            source: 'data.sort()',
            summary: 'Sort the data before printing'
          }
        },
        {
          name: 'propose_delete',
          arguments: { cell_id: second, summary: 'The print is not needed' }
        }
      ]
    },
    { text: 'Two proposals for you.' }
  );
  const panel = await openAssistant(page);
  await ask(page, 'Tidy this notebook.');

  // The insert shows as a ghost cell after the first cell; the deletion marks the cell.
  const ghost = cells(page).nth(0).locator('.jp-Loop-GhostCell');
  await expect(ghost).toBeVisible();
  await expect(ghost.locator('.cm-changedLine')).toContainText('data.sort()');
  // A new cell removes nothing: no (empty) removed line, on the cell or in the card.
  await expect(ghost.locator('.cm-deletedChunk')).toHaveCount(0);
  await expect(
    panel.locator('.jp-Loop-Proposal[data-kind="insert"] .jp-Loop-DiffLine')
  ).toHaveText(['+data.sort()']);
  await expect(cells(page).nth(1)).toHaveClass(/jp-Loop-proposedDelete/);
  await expect(panel.locator('.jp-Loop-Proposal')).toHaveCount(2);
  await screenshot(
    page.locator('.jp-NotebookPanel'),
    'agent-ghost-and-delete.png'
  );

  // A second tab sees them too, and the rejection from the first.
  const other = await context.newPage();
  await openInNewTab(other, `${tmpPath}/${name}`);
  await expect(cells(other).nth(0).locator('.jp-Loop-GhostCell')).toBeVisible();

  await page.bringToFront();
  await panel.getByRole('button', { name: /Reject all/ }).click();
  for (const tab of [page, other]) {
    await expect(tab.locator('.jp-Loop-GhostCell')).toHaveCount(0);
    await expect(cells(tab).nth(1)).not.toHaveClass(/jp-Loop-proposedDelete/);
    expect(await cellSources(tab)).toEqual(['data = [3, 1, 2]', 'print(data)']);
  }
  await expect(panel.locator('.jp-Loop-Badge')).toHaveText([
    'Rejected',
    'Rejected'
  ]);
});

test('a stale proposal says so and offers to regenerate', async ({ page }) => {
  await liveNotebook(page, 'value = 1 / 0');
  const target = await cellId(page, 0);
  await model.script(
    {
      tool_calls: [
        {
          name: 'propose_modify',
          arguments: {
            cell_id: target,
            source: 'value = 1 / 2',
            summary: 'Avoid the division by zero'
          }
        }
      ]
    },
    { text: 'Proposed.' },
    { text: 'Here it is again.' }
  );
  const panel = await openAssistant(page);
  await ask(page, 'Fix it.');
  await expect(onCell(page, 0)).toBeVisible();
  await expect(panel.locator('.jp-Loop-Message.jp-mod-assistant')).toHaveText(
    'Proposed.'
  );
  await expect(
    panel.getByRole('button', { name: 'Stop the assistant' })
  ).toHaveCount(0);

  // Somebody edits the cell: the proposal is stale and cannot be accepted.
  await page.evaluate(() => {
    const panel = (window as any).jupyterapp.shell.currentWidget;
    panel.content.model.sharedModel.cells[0].setSource(
      'value = 1 / 0  # edited'
    );
  });
  const card = panel.locator('.jp-Loop-Proposal');
  await expect(card.locator('.jp-Loop-Badge')).toHaveText('Out of date');
  await expect(card).toContainText('The cell changed since this was proposed.');
  await expect(card.getByRole('button', { name: /^Accept/ })).toHaveCount(0);
  await expect(onCell(page, 0)).toContainText('can no longer be applied');

  // Regenerate rejects it and asks the agent again, with the cell in focus.
  await card.getByRole('button', { name: /^Regenerate/ }).click();
  await expect(card.locator('.jp-Loop-Badge')).toHaveText('Rejected');
  await expect(
    panel.locator('.jp-Loop-Message.jp-mod-user').last()
  ).toContainText('no longer fits');
  await expect(
    panel.locator('.jp-Loop-Message.jp-mod-assistant').last()
  ).toContainText('Here it is again.');
  const requests = await model.chatRequests();
  expect(JSON.stringify(requests[requests.length - 1].body.messages)).toContain(
    'value = 1 / 0  # edited'
  );
});
