/*
 * JupyterLab's own Galata spec "Notebook Run", run against jupyter-loop.
 *
 * Source: https://github.com/jupyterlab/jupyterlab, galata/test/jupyterlab/notebook-run.test.ts
 * (commit 6ef5a17ad831be80c3e63911b77fa9f8acfcbf50), with its assets notebooks/simple_notebook.ipynb
 * and notebooks/WidgetArch.png copied unchanged into tests/notebooks/.
 * Copyright (c) Jupyter Development Team. Distributed under the terms of the Modified BSD License
 * (JupyterLab's LICENSE); the changes below are jupyter-loop's.
 *
 * Changed: the screenshots compared with JupyterLab's reference images are replaced by
 * assertions on the DOM (images made on another machine differ here by their fonts): each
 * cell's output is checked after the run. The save is raced against JupyterLab's "File
 * Changed" dialog, which is what went wrong here (issue 17, point 1b): with the server's own
 * saves after each run, Save could find the file changed behind the tab's back and wait on
 * that dialog until the test timed out. Nothing else is changed: the same upload through the
 * contents API, the same `runCellByCell`, the same dependent tests.
 */

import { expect, galata, test } from '@jupyterlab/galata';
import * as path from 'path';

import { readNotebookOnDisk } from './helpers';

const fileName = 'simple_notebook.ipynb';

test.use({ tmpPath: 'notebook-run-test' });

test.describe.serial('Notebook Run', () => {
  test.beforeAll(async ({ request, tmpPath }) => {
    const contents = galata.newContentsHelper(request);
    await contents.uploadFile(
      path.resolve(__dirname, `./notebooks/${fileName}`),
      `${tmpPath}/${fileName}`
    );
    await contents.uploadFile(
      path.resolve(__dirname, './notebooks/WidgetArch.png'),
      `${tmpPath}/WidgetArch.png`
    );
  });

  test.beforeEach(async ({ page, tmpPath }) => {
    await page.filebrowser.openDirectory(tmpPath);
  });

  test.afterAll(async ({ request, tmpPath }) => {
    const contents = galata.newContentsHelper(request);
    await contents.deleteDirectory(tmpPath);
  });

  test('Run Notebook and capture cell outputs', async ({ page, tmpPath }) => {
    await page.notebook.openByPath(`${tmpPath}/${fileName}`);
    await page.notebook.activate(fileName);

    await page.notebook.runCellByCell();

    const outputs = page.locator(
      '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell .jp-OutputArea-output'
    );
    await expect(outputs.locator('img')).toHaveCount(1);
    await expect(outputs.filter({ hasText: /^4$/ })).toHaveCount(1);
    await expect(outputs.filter({ hasText: /^1\.5707/ })).toHaveCount(1);

    // Save outputs for the next tests. A "File Changed" dialog here means the server's
    // own saves changed the file behind the tab's back.
    const fileChanged = page.locator('.jp-Dialog', { hasText: 'File Changed' });
    const outcome = await Promise.race([
      page.notebook.save().then(() => 'saved'),
      fileChanged.waitFor().then(() => 'File Changed dialog')
    ]);
    expect(outcome).toBe('saved');
    await expect(fileChanged).toHaveCount(0);

    const saved = readNotebookOnDisk(`${tmpPath}/${fileName}`);
    // nbformat may store a string as a list of lines.
    const text = (value: string | string[]) =>
      ([] as string[]).concat(value).join('');
    expect(text(saved.cells[5].outputs[0].data['text/plain'])).toBe('4');
    expect(saved.cells[4].outputs[0].data['image/png']).toBeTruthy();
  });

  test('Check cell output 1', async ({ page, tmpPath }) => {
    await page.notebook.openByPath(`${tmpPath}/${fileName}`);
    const cellOutput = await page.notebook.getCellTextOutput(5);
    expect(parseInt(cellOutput![0])).toBe(4);
  });

  test('Check cell output 2', async ({ page, tmpPath }) => {
    await page.notebook.openByPath(`${tmpPath}/${fileName}`);
    const cellOutput = await page.notebook.getCellTextOutput(6);
    expect(parseFloat(cellOutput![0])).toBeGreaterThan(1.5);
  });

  test('Close Notebook', async ({ page, tmpPath }) => {
    await page.notebook.openByPath(`${tmpPath}/${fileName}`);
    await expect(page.notebook.close(true)).resolves.not.toThrow();
  });
});
