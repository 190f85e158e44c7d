import { expect, test } from '@jupyterlab/galata';
import * as fs from 'fs';
import * as path from 'path';

import { cellPrompt, cellText, notebookJson, SERVER_ROOT } from './helpers';

/**
 * Shift+Enter pressed the moment a notebook opens, while its kernel session is still
 * being created, runs the cell once the kernel is there (issue 17: in Notebook 7 such a
 * first run once showed nothing at all, no `[*]`, no output, and the server never heard
 * of it). The session's creation is slowed here, as on a busy server, so the key is
 * always pressed inside that window.
 */
test('a cell run while the kernel session is still being created runs', async ({
  page,
  tmpPath
}) => {
  const name = 'first-run.ipynb';
  fs.writeFileSync(
    path.join(SERVER_ROOT, tmpPath, name),
    notebookJson(['print("first run", 6 * 7)'])
  );
  const fresh = await page.context().newPage();
  let slowed = 0;
  await fresh.route(
    url => url.pathname.endsWith('/api/sessions'),
    async route => {
      if (route.request().method() === 'POST') {
        slowed += 1;
        await new Promise(resolve => setTimeout(resolve, 5000));
      }
      await route.continue();
    }
  );

  await fresh.goto(`lab/tree/${tmpPath}/${name}`);
  const editor = fresh.locator('.jp-NotebookPanel .jp-CodeCell .cm-content');
  await editor.first().waitFor();
  await editor.first().click();
  await fresh.keyboard.press('Shift+Enter');

  await expect
    .poll(() => cellText(fresh, 0), { timeout: 60000 })
    .toContain('first run 42');
  await expect
    .poll(() => cellPrompt(fresh, 0), { timeout: 30000 })
    .toMatch(/^\[\d+\]:$/);
  expect(slowed).toBeGreaterThan(0); // the key was pressed inside the slowed window
});
