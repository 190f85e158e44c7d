import { expect, test } from '@playwright/test';

import { cellText } from './helpers';
import { OwnServer } from './own-server';

/**
 * After a SIGKILL of the server and its restart, JupyterLab's "Server Connection
 * Error" dialog goes away by itself once the tab has reconnected (issue 42: it stayed
 * up over a notebook that streamed outputs again).
 */
test('the Server Connection Error dialog closes once the server is back', async ({
  browser
}) => {
  test.setTimeout(240000);
  const server = new OwnServer();
  server.writeNotebook('back.ipynb', [
    'print("before")',
    'print("after", 6 * 7)'
  ]);
  await server.start();
  try {
    const page = await browser.newPage();
    await server.openIdle(page, 'back.ipynb');

    server.crash(); // SIGKILL of the server alone
    const dialog = page.locator('.jp-Dialog', {
      hasText: 'Server Connection Error'
    });
    await expect(dialog).toBeVisible({ timeout: 90000 });

    await server.start();
    await expect(dialog).toHaveCount(0, { timeout: 60000 });
    // And the tab works: a cell runs on the restarted server.
    await page.locator('.jp-CodeCell').nth(1).click();
    await page.keyboard.press('Shift+Enter');
    await expect
      .poll(() => cellText(page, 1), { timeout: 60000 })
      .toContain('after 42');
    await page.close();
  } finally {
    await server.dispose(false);
  }
});
