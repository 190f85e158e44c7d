import { expect, test } from '@jupyterlab/galata';
import type { Page, Request } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

import { cellPrompt, cellText, notebookJson, SERVER_ROOT } from './helpers';

/**
 * Shift+Enter pressed the moment a notebook opens, before its kernel is there, runs the
 * cell once the kernel is there, on that one kernel. A request of the page's start is
 * slowed, as on a busy server, so the key is always pressed inside the window:
 *
 * - while the kernel session is being created (`POST /api/sessions`): issue 17, in
 *   Notebook 7 such a first run once showed nothing at all, and the server never heard of
 *   it;
 * - before that, while the page still lists the running sessions (`GET /api/sessions`):
 *   the cell started a kernel of its own beside the one the page was about to start, and
 *   the server swapped the first for the second under the tab, which could then stay
 *   "Kernel Connecting" with the cell at `[ ]` (CI, the Notebook 7 spec).
 */
async function pressShiftEnterWhileSlowed(
  page: Page,
  tmpPath: string,
  name: string,
  slowed: (request: Request) => boolean
): Promise<void> {
  fs.writeFileSync(
    path.join(SERVER_ROOT, tmpPath, name),
    notebookJson(['print("first run", 6 * 7)'])
  );
  const fresh = await page.context().newPage();
  let slowedCount = 0;
  await fresh.route(
    url => url.pathname.endsWith('/api/sessions'),
    async route => {
      if (slowed(route.request())) {
        slowedCount += 1;
        await new Promise(resolve => setTimeout(resolve, 5000));
      }
      await route.continue();
    }
  );
  // Every kernel the page's session was given, as the server answered.
  const kernels = new Set<string>();
  fresh.on('response', async response => {
    const request = response.request();
    if (
      /\/api\/sessions(\/[^/?]+)?(\?|$)/.test(request.url()) &&
      ['POST', 'PATCH'].includes(request.method()) &&
      response.ok()
    ) {
      const model = (await response.json()) as { kernel?: { id: string } };
      if (model.kernel) {
        kernels.add(model.kernel.id);
      }
    }
  });

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
  expect(slowedCount).toBeGreaterThan(0); // the key was pressed inside the slowed window
  expect([...kernels]).toHaveLength(1); // one kernel, never swapped under the tab
  await fresh.close();
}

test('a cell run while the kernel session is still being created runs', async ({
  page,
  tmpPath
}) => {
  await pressShiftEnterWhileSlowed(
    page,
    tmpPath,
    'first-run.ipynb',
    request => request.method() === 'POST'
  );
});

test('a cell run before the page has listed the running sessions runs on the one kernel', async ({
  page,
  tmpPath
}) => {
  // Every listing of the page's first seconds: the page's session waits on its newest.
  let firstListing = 0;
  await pressShiftEnterWhileSlowed(
    page,
    tmpPath,
    'first-run-listing.ipynb',
    request => {
      if (request.method() !== 'GET') {
        return false;
      }
      firstListing ||= Date.now();
      return Date.now() - firstListing < 10000;
    }
  );
});

/**
 * The other side of the wait above: a notebook whose kernel was shut down (Kernel > Shut
 * Down Kernel) is not "starting", so Shift+Enter starts a kernel at once and runs, as in
 * stock JupyterLab, rather than wait for a start nobody asked for.
 */
test('a cell run after its kernel was shut down starts a kernel and runs', async ({
  page,
  tmpPath
}) => {
  const name = 'after-shutdown.ipynb';
  fs.writeFileSync(
    path.join(SERVER_ROOT, tmpPath, name),
    notebookJson(['print("again", 6 * 7)'])
  );
  await page.notebook.openByPath(`${tmpPath}/${name}`);
  await expect(page.locator('#jp-main-statusbar')).toContainText('Idle', {
    timeout: 60000
  });
  await page.evaluate(() =>
    (window as any).jupyterapp.commands.execute('kernelmenu:shutdown')
  );
  await expect(page.locator('#jp-main-statusbar')).toContainText('No Kernel', {
    timeout: 30000
  });
  await page
    .locator('.jp-NotebookPanel .jp-CodeCell .cm-content')
    .first()
    .click();
  await page.keyboard.press('Shift+Enter');
  await expect
    .poll(() => cellText(page, 0), { timeout: 30000 })
    .toContain('again 42');
});
