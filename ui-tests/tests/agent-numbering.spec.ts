import { expect, test } from '@jupyterlab/galata';

import {
  ModelServer,
  ask,
  cellId,
  liveNotebook,
  openAssistant
} from './agent-helpers';

const model = ModelServer.of();

test.beforeEach(async () => {
  await model.reset();
});

test('the model, the panel and the notebook number cells alike, from 1', async ({
  page
}) => {
  await liveNotebook(page, 'a = 1', 'b = 2', 'c = a / 0');
  const third = await cellId(page, 2);
  await model.script(
    { tool_calls: [{ name: 'read_cell', arguments: { cell_id: third } }] },
    { text: 'Cell 3 divides by zero.' }
  );
  const panel = await openAssistant(page);
  await ask(page, 'Which cell is wrong?');
  await expect(panel.locator('.jp-Loop-Message.jp-mod-assistant')).toHaveText(
    'Cell 3 divides by zero.'
  );

  // The panel's tool line names the cell as the notebook shows it: the third.
  await expect(panel.locator('.jp-Loop-ToolStep summary')).toContainText(
    'read cell 3'
  );
  // The model's map gave that cell the same number.
  const [first] = await model.chatRequests();
  const sent = JSON.stringify(first.body.messages);
  expect(sent).toContain(`\\n3 ${third} code`);
  expect(sent).not.toContain(`\\n2 ${third} code`);
});
