import { expect, test } from '@playwright/test';

import { cellText, printedNumbers } from './helpers';
import { OwnServer } from './own-server';

const LINES = 150;
const SLOW = `import time\nfor i in range(${LINES}):\n    print(i, flush=True)\n    time.sleep(0.1)`;
const PATH = 'provenance.ipynb';

/** The runs the server's history has for cell c1 (no token: galata's server has none). */
async function runsOf(server: OwnServer): Promise<any[]> {
  const query = new URLSearchParams({ path: PATH, cell_id: 'c1' });
  const reply = await fetch(`${server.url}/api/jupyter-loop/history?${query}`);
  return reply.ok ? ((await reply.json()) as { runs: any[] }).runs : [];
}

test("a tab's run taken over after a server crash is one run in the History view, with its source (issue 42)", async ({
  browser
}) => {
  test.setTimeout(240000);
  const server = new OwnServer({ keepKernels: 'crash' });
  server.writeNotebook(PATH, ['x = 1', SLOW]);
  await server.start();
  try {
    // Shift-Enter in a tab (the run goes over the runs socket), then the tab is closed.
    const tab = await browser.newPage();
    await server.openIdle(tab, PATH);
    await tab.locator('.jp-NotebookPanel .jp-CodeCell').nth(1).click();
    await tab.keyboard.press('Shift+Enter');
    await expect
      .poll(async () => printedNumbers(await cellText(tab, 1)).length, {
        timeout: 30000
      })
      .toBeGreaterThan(10);
    await tab.close();
    await new Promise(resolve => setTimeout(resolve, 2000));

    // The server is killed; started again, it takes the run over on the kept kernel.
    server.crash();
    await server.start();
    await expect
      .poll(async () => (await runsOf(server)).length, { timeout: 90000 })
      .toBe(1);

    const page = await browser.newPage();
    await page.goto(`${server.url}/lab/tree/${PATH}`);
    const cell = page.locator('.jp-NotebookPanel .jp-CodeCell').nth(1);
    await cell.waitFor();
    await cell.click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Show Cell History' }).click();
    const view = page.locator('.jp-Loop-history');
    await expect(view).toBeVisible();
    const runs = view.locator('.jp-Loop-historyRun');
    await expect(runs).toHaveCount(1);
    await expect(runs.first()).toContainText(
      /a tab of \S+, taken over after a server restart/
    );
    await expect(runs.first()).not.toContainText('never started');
    await expect(runs.first()).not.toContainText('Anonymous');
    await runs.first().click();
    const detail = view.locator('.jp-Loop-historyDetail');
    await expect(detail).toContainText('(the same as now)');
    await expect(detail.locator('.jp-Loop-historyDiff')).toContainText(
      `for i in range(${LINES}):`
    );
    // Nothing to restore: the run's source is the cell's (it did not offer to empty it).
    await expect(
      detail.getByRole('button', { name: 'Restore this source' })
    ).toBeDisabled();
    await page.close();
  } finally {
    await server.dispose();
  }
});
