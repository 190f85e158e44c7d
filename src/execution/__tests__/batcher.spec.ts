import { NotebookModel } from '@jupyterlab/notebook';

import { IRunRequest, IRunTicket } from '../../payloads';
import { isRunAll, RunBatcher } from '../batcher';

function notebookOf(...types: ('code' | 'markdown')[]): NotebookModel {
  const model = new NotebookModel();
  model.sharedModel.insertCells(
    0,
    types.map((cell_type, index) => ({
      cell_type,
      id: `c${index}`,
      source: '',
      metadata: {}
    }))
  );
  return model;
}

/** What the server answers a request: each cell queued. */
function queued(request: IRunRequest): IRunTicket {
  return {
    path: request.path,
    kernel_id: 'k',
    cells: request.cell_ids.map(cell_id => ({
      cell_id,
      run_id: `r-${cell_id}`,
      state: 'queued' as const
    }))
  };
}

describe('a Run All is told apart', () => {
  it('when one request runs every code cell, in order', () => {
    const model = notebookOf('code', 'markdown', 'code', 'code');
    expect(isRunAll(['c0', 'c2', 'c3'], model)).toBe(true);
    expect(isRunAll(['c2', 'c3'], model)).toBe(false); // run below
    expect(isRunAll(['c0', 'c3', 'c2'], model)).toBe(false);
    expect(isRunAll(['c0'], notebookOf('code'))).toBe(false);
    model.dispose();
  });

  it('and the request says so', async () => {
    const model = notebookOf('code', 'code');
    const sent: IRunRequest[] = [];
    const batcher = new RunBatcher('a.ipynb', 'k', false, async request => {
      sent.push(request);
      return queued(request);
    });
    await Promise.all([
      batcher.add('c0', 'a = 1', model),
      batcher.add('c1', 'a', model)
    ]);
    await batcher.add('c1', 'a + 1', model);
    expect(sent.map(request => request.started_from)).toEqual([
      'run_all',
      undefined
    ]);
    // and each says what the tab shows, for the server to wait for
    expect(sent.map(request => request.sources)).toEqual([
      { c0: 'a = 1', c1: 'a' },
      { c1: 'a + 1' }
    ]);
    model.dispose();
  });
});

describe('a run request leaves', () => {
  function recording(sent: { cells: string[]; timerRan: boolean }[]) {
    let timerRan = false;
    setTimeout(() => (timerRan = true), 0);
    return new RunBatcher('a.ipynb', 'k', false, async request => {
      sent.push({ cells: request.cell_ids, timerRan });
      return queued(request);
    });
  }

  it('before any task, so not after the page renders', async () => {
    const sent: { cells: string[]; timerRan: boolean }[] = [];
    await recording(sent).add('c0', '1+1');
    expect(sent).toEqual([{ cells: ['c0'], timerRan: false }]);
  });

  it('with the cells added a few microtask turns after the first', async () => {
    const sent: { cells: string[]; timerRan: boolean }[] = [];
    const batcher = recording(sent);
    const later = async (cellId: string, turns: number) => {
      for (let turn = 0; turn < turns; turn++) {
        await Promise.resolve();
      }
      return batcher.add(cellId, '');
    };
    await Promise.all([batcher.add('c0', ''), later('c1', 2), later('c2', 4)]);
    expect(sent.map(request => request.cells)).toEqual([['c0', 'c1', 'c2']]);
  });

  it('as the page moves on from the cells, before any microtask', async () => {
    const sent: { cells: string[]; timerRan: boolean }[] = [];
    const batcher = recording(sent);
    let moveOn = (): void => undefined;
    let watching = 0;
    const watch = (callback: () => void) => {
      moveOn = callback;
      watching++;
      return () => watching--;
    };
    const runs = [batcher.add('c0', '', undefined, watch)];
    runs.push(batcher.add('c1', '', undefined, watch));
    expect(sent).toEqual([]);
    moveOn(); // JupyterLab advances: synchronously, in the same loop
    expect(sent.map(request => request.cells)).toEqual([['c0', 'c1']]);
    expect(watching).toBe(0);
    moveOn(); // a second change sends nothing more
    await Promise.all(runs);
    expect(sent).toHaveLength(1);
  });
});

describe('the only cell a command runs', () => {
  it('leaves at once, with no cell gathered and nothing watched', async () => {
    const sent: string[][] = [];
    const batcher = new RunBatcher('a.ipynb', 'k', false, async request => {
      sent.push(request.cell_ids);
      return queued(request);
    });
    let watched = false;
    const watch = () => {
      watched = true;
      return () => undefined;
    };
    const first = batcher.add('c0', '', undefined, watch, () => true);
    expect(sent).toEqual([['c0']]); // before any microtask
    expect(watched).toBe(false);
    // Another command's cells in the same turn make a batch of their own.
    const others = [
      batcher.add('c1', '', undefined, undefined, () => false),
      batcher.add('c2', '', undefined, undefined, () => true)
    ];
    await Promise.all([first, ...others]);
    expect(sent).toEqual([['c0'], ['c1', 'c2']]);
  });
});
