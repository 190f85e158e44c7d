import { NotebookModel } from '@jupyterlab/notebook';
import type { YNotebook } from '@jupyter/ydoc';
import * as Y from 'yjs';

import { EXECUTION_BOARD, ICellMarker } from '../../payloads';
import { ExecutionBoard } from '../board';

/** A second document standing in for the server, synced by exchanging updates. */
function serverOf(model: NotebookModel): Y.Map<ICellMarker> {
  const client = (model.sharedModel as YNotebook).ydoc;
  const server = new Y.Doc();
  Y.applyUpdate(server, Y.encodeStateAsUpdate(client));
  server.on('update', (update: Uint8Array) => Y.applyUpdate(client, update));
  return server.getMap<ICellMarker>(EXECUTION_BOARD);
}

describe('ExecutionBoard', () => {
  let model: NotebookModel;
  let board: ExecutionBoard;
  let server: Y.Map<ICellMarker>;

  beforeEach(() => {
    model = new NotebookModel();
    board = new ExecutionBoard(model);
    server = serverOf(model);
  });

  afterEach(() => {
    board.dispose();
    model.dispose();
  });

  it('reads the markers the server writes', () => {
    server.set('a', { state: 'queued', run_id: 'r1' });
    expect(board.marker('a')).toEqual({ state: 'queued', run_id: 'r1' });
    expect(board.cellIds()).toEqual(['a']);
  });

  it('tells which cells changed', () => {
    const changed: string[][] = [];
    board.changed.connect((_, ids) => changed.push(ids));
    server.set('a', { state: 'running', run_id: 'r1' });
    server.set('b', { state: 'queued', run_id: 'r2' });
    expect(changed).toEqual([['a'], ['b']]);
  });

  it('resolves a run when the server marks it done', async () => {
    server.set('a', { state: 'queued', run_id: 'r1' });
    const ended = board.waitForRun('a', 'r1');
    server.set('a', { state: 'running', run_id: 'r1' });
    server.set('a', { state: 'done', run_id: 'r1', status: 'error' });
    await expect(ended).resolves.toEqual({
      state: 'done',
      run_id: 'r1',
      status: 'error'
    });
  });

  it('waits while the marker still shows an earlier run', async () => {
    server.set('a', { state: 'done', run_id: 'old', status: 'ok' });
    let settled = false;
    const ended = board.waitForRun('a', 'new').then(marker => {
      settled = true;
      return marker;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    server.set('a', { state: 'done', run_id: 'new', status: 'ok' });
    await expect(ended).resolves.toMatchObject({ run_id: 'new', status: 'ok' });
  });

  it('ends the wait when a later run replaces the awaited one', async () => {
    server.set('a', { state: 'running', run_id: 'r1' });
    const ended = board.waitForRun('a', 'r1');
    server.set('a', { state: 'queued', run_id: 'r2' });
    await expect(ended).resolves.toMatchObject({ run_id: 'r2' });
  });

  it('rejects waits when the notebook closes', async () => {
    server.set('a', { state: 'running', run_id: 'r1' });
    const ended = board.waitForRun('a', 'r1');
    board.dispose();
    await expect(ended).rejects.toThrow('Canceled');
  });
});
