import { CodeCellModel } from '@jupyterlab/cells';

import { clearAsSent } from '../clearing';

function cellWithOutputs(): CodeCellModel {
  const model = new CodeCellModel({});
  model.outputs.add({ output_type: 'stream', name: 'stdout', text: 'old\n' });
  model.outputs.add({
    output_type: 'execute_result',
    execution_count: 1,
    data: { 'text/plain': '2' },
    metadata: {}
  });
  return model;
}

describe('a cell run from this tab', () => {
  it('loses its old outputs as it is sent, in its shared model too', () => {
    const model = cellWithOutputs();
    clearAsSent(model, undefined, false);
    expect(model.outputs.length).toBe(0);
    expect(model.sharedModel.getOutputs()).toEqual([]);
    model.dispose();
  });

  it('gets them back when the server refuses the run', () => {
    const model = cellWithOutputs();
    const before = model.sharedModel.getOutputs();
    const putBack = clearAsSent(
      model,
      { state: 'done', run_id: 'r0', status: 'ok' },
      false
    );
    putBack();
    expect(model.sharedModel.getOutputs()).toEqual(before);
    model.dispose();
  });

  it('but not over what a run wrote meanwhile', () => {
    const model = cellWithOutputs();
    const putBack = clearAsSent(model, undefined, false);
    model.outputs.add({ output_type: 'stream', name: 'stdout', text: 'new\n' });
    putBack();
    expect(model.outputs.toJSON()).toEqual([
      { output_type: 'stream', name: 'stdout', text: 'new\n' }
    ]);
    model.dispose();
  });

  it('keeps them while it is queued or running: its turn clears them', () => {
    for (const state of ['queued', 'running'] as const) {
      const model = cellWithOutputs();
      clearAsSent(model, { state, run_id: 'r1' }, false);
      expect(model.outputs.length).toBe(2);
      model.dispose();
    }
  });

  it('keeps them in a read-only notebook', () => {
    const model = cellWithOutputs();
    clearAsSent(model, undefined, true);
    expect(model.outputs.length).toBe(2);
    model.dispose();
  });

  it('is not undone by the notebook undo, as in stock JupyterLab', () => {
    const model = cellWithOutputs();
    clearAsSent(model, undefined, false);
    expect(model.sharedModel.canUndo()).toBe(false);
    model.dispose();
  });
});
