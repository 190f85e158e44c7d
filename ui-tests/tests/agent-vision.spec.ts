import { expect, test } from '@jupyterlab/galata';

import {
  ModelServer,
  ask,
  liveNotebook,
  openAssistant,
  runCommand
} from './agent-helpers';

const model = ModelServer.of();

const PLOT = [
  'import io',
  'from PIL import Image as Canvas',
  'from IPython.display import Image',
  'buffer = io.BytesIO()',
  "Canvas.new('RGB', (1600, 800), 'teal').save(buffer, 'PNG')",
  'Image(data=buffer.getvalue())'
].join('\n');

test.beforeEach(async () => {
  await model.reset();
});

test('a plot in focus goes to a vision model, and the journal says so', async ({
  page
}) => {
  await liveNotebook(page, PLOT);
  await runCommand(page, 'notebook:run-all-cells');
  await expect(
    page.locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea img')
  ).toBeVisible({ timeout: 30000 });

  const panel = await openAssistant(page);
  const picker = panel.getByRole('combobox', { name: 'Model' });
  await picker.selectOption('scripted-vision');
  // "Ask about this cell" puts the plot's cell in focus.
  await page.notebook.selectCells(0);
  await runCommand(page, 'jupyter-loop:ask-about-cell');
  await expect(panel.locator('.jp-Loop-FocusChip')).toHaveText(/@cell 1/);
  await model.script({ text: 'A teal rectangle.' });
  await ask(page, 'What does the plot show?');
  await expect(panel.locator('.jp-Loop-Message.jp-mod-assistant')).toHaveText(
    'A teal rectangle.'
  );

  // The request carried the plot as an image part, shrunk to 1024 px wide.
  const [request] = await model.chatRequests();
  const parts = (
    request.body.messages as { role: string; content: unknown }[]
  ).flatMap(m => (Array.isArray(m.content) ? m.content : []));
  const images = parts.filter(
    (p: { type?: string }) => p.type === 'image_url'
  ) as { image_url: { url: string } }[];
  expect(images).toHaveLength(1);
  const [head, data] = images[0].image_url.url.split(',');
  expect(head).toBe('data:image/png;base64');
  const png = Buffer.from(data, 'base64');
  expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1024, 512]);

  await runCommand(page, 'jupyter-loop:show-journal');
  const journal = page.locator('.jp-Dialog .jp-Loop-Journal');
  await expect(journal).toContainText('images: 1');
  await page
    .locator('.jp-Dialog')
    .getByRole('button', { name: 'Close' })
    .click();

  // Back to the default model, for the other tests.
  await picker.selectOption('scripted-tools');
});
