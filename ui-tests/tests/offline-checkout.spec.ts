import { expect, test } from '@jupyterlab/galata';
import { WebSocketRoute } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

import { notebookJson, SERVER_ROOT } from './helpers';

/**
 * The "laptop lid" with a `git checkout` meanwhile: a tab loses its connection, its
 * person types on, the notebook's room is freed, the file is replaced on disk, and the
 * tab comes back. The file came last and wins; the lines typed offline come back as a
 * proposal on their cell instead of being glued to the checked-out code.
 */
test('lines typed offline while the file was replaced come back as a proposal', async ({
  page,
  tmpPath
}) => {
  test.setTimeout(90000);
  const target = path.join(SERVER_ROOT, tmpPath, 'lid.ipynb');
  fs.writeFileSync(target, notebookJson(['x = 1', 'y = 2']));

  // The notebook's websocket goes through the test, which can cut it and refuse the
  // provider's reconnections as a dead network would.
  let offline = false;
  const open: WebSocketRoute[] = [];
  await page.routeWebSocket(
    /api\/collaboration\/room\/json(:|%3A)notebook/i,
    ws => {
      if (offline) {
        void ws.close();
        return;
      }
      open.push(ws, ws.connectToServer());
    }
  );
  await page.reload(); // the route takes the page's WebSocket from its next load on
  await page.notebook.openByPath(`${tmpPath}/lid.ipynb`);
  const editor = page.locator('.jp-NotebookPanel .jp-CodeCell .cm-content');
  await expect(editor.first()).toHaveText('x = 1');
  await page.waitForTimeout(1500); // the room has loaded and saved

  offline = true;
  for (const ws of open.splice(0)) {
    await ws.close();
  }
  await editor.first().click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('\n# typed offline');
  await expect(editor.first()).toContainText('# typed offline');

  await page.waitForTimeout(7000); // past the room's clean-up delay (5 s): freed
  const checkout = `${target}.checkout`;
  fs.writeFileSync(checkout, notebookJson(["x = 'checked out'", 'y = 2']));
  fs.renameSync(checkout, target);

  offline = false; // the provider's next try gets through
  const card = page.locator('.jp-Loop-OnCell', { hasText: 'offline' });
  await expect(card).toBeVisible({ timeout: 30000 });
  await expect(card).toContainText('Your offline edit of this cell');
  await expect(editor.first()).toHaveText("x = 'checked out'");

  // Accepting it takes the offline version, as any proposal is taken.
  await card.locator('.jp-Loop-accept').click();
  await expect(editor.first()).toContainText('x = 1# typed offline');
  await expect(card).toHaveCount(0);
});
