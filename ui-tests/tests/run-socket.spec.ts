import { expect, test } from '@jupyterlab/galata';

import { cellPrompt, cellText, notebookWithCells, shiftEnter } from './helpers';

test('cells run over the runs socket, one socket and no request per run', async ({
  page
}) => {
  const sockets: string[] = [];
  const posted: string[] = [];
  page.on('websocket', socket => sockets.push(socket.url()));
  page.on('request', request => {
    if (
      request.method() === 'POST' &&
      request.url().includes('/jupyter-loop/runs')
    ) {
      posted.push(request.url());
    }
  });
  await notebookWithCells(page, 'print("one")', 'print("two")');

  await shiftEnter(page, 0);
  await expect.poll(() => cellText(page, 0)).toBe('one\n');
  await shiftEnter(page, 1);
  await expect.poll(() => cellText(page, 1)).toBe('two\n');
  await page.evaluate(() =>
    (window as any).jupyterapp.commands.execute('notebook:run-all-cells')
  );
  await expect.poll(() => cellPrompt(page, 1)).toBe('[4]:');

  const runSockets = sockets.filter(url =>
    new URL(url).pathname.endsWith('/api/jupyter-loop/runs/socket')
  );
  expect(runSockets).toHaveLength(1);
  expect(posted).toEqual([]);
});
