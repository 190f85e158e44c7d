import type { ISharedCodeCell, YNotebook } from '@jupyter/ydoc';
import type * as nbformat from '@jupyterlab/nbformat';
import type { ICodeCellModel } from '@jupyterlab/cells';
import { NotebookModel } from '@jupyterlab/notebook';

import { IProposal } from '../../payloads';
import {
  ProposalModel,
  StaleProposalError,
  applyProposal,
  proposalState
} from '../proposals';
import { FakeServerDoc, notebookWith, quietly } from './ysync';

function proposal(fields: Partial<IProposal>): IProposal {
  return {
    id: 'p1',
    turn_id: 't1',
    kind: 'modify',
    cell_id: 'c1',
    base_source: '1/0',
    new_source: '1/1',
    status: 'pending',
    ...fields
  };
}

describe('proposalState', () => {
  const sources = new Map([
    ['c1', '1/0'],
    ['c2', 'print(2)']
  ]);
  const lookup = (id: string) => sources.get(id);

  it('is the server status once resolved', () => {
    expect(
      proposalState(
        proposal({ status: 'accepted', base_source: '1/1', new_source: '1/0' }),
        lookup
      )
    ).toEqual({ state: 'accepted' });
    expect(
      proposalState(proposal({ status: 'rejected', base_source: 'x' }), lookup)
    ).toEqual({ state: 'rejected' });
  });

  it('is undone once the notebook no longer holds an accepted change', () => {
    const accepted = (fields: Partial<IProposal>) =>
      proposalState(proposal({ status: 'accepted', ...fields }), lookup);
    // The cell holds the source from before the edit again (Ctrl-Z).
    expect(accepted({})).toEqual({
      state: 'undone',
      reason: 'The cell holds its source from before the change again.'
    });
    // Edited further, or deleted since: still accepted, not undone.
    expect(accepted({ base_source: '2/0' }).state).toBe('accepted');
    expect(accepted({ cell_id: 'gone' }).state).toBe('accepted');
    expect(
      accepted({ kind: 'insert', cell_id: 'c1', new_cell_id: 'c9' })
    ).toEqual({
      state: 'undone',
      reason: 'The inserted cell is no longer in the notebook.'
    });
    expect(
      accepted({ kind: 'insert', cell_id: 'c1', new_cell_id: 'c2' }).state
    ).toBe('accepted');
    expect(
      accepted({ kind: 'delete', cell_id: 'c2', base_source: 'print(2)' })
    ).toEqual({
      state: 'undone',
      reason: 'The deleted cell is back in the notebook.'
    });
    expect(
      accepted({ kind: 'delete', cell_id: 'gone', base_source: 'x' }).state
    ).toBe('accepted');
  });

  it('is pending while the target holds the base source', () => {
    expect(proposalState(proposal({}), lookup).state).toBe('pending');
    expect(
      proposalState(
        proposal({ kind: 'delete', cell_id: 'c2', base_source: 'print(2)' }),
        lookup
      ).state
    ).toBe('pending');
  });

  it('is stale when the target changed or is gone', () => {
    expect(proposalState(proposal({ base_source: '2/0' }), lookup)).toEqual({
      state: 'stale',
      reason: 'The cell changed since this was proposed.'
    });
    expect(proposalState(proposal({ cell_id: 'gone' }), lookup)).toEqual({
      state: 'stale',
      reason: 'The cell has been deleted.'
    });
  });

  it('checks only the anchor of an insert', () => {
    const insert = proposal({
      kind: 'insert',
      base_source: null,
      cell_id: 'c2'
    });
    expect(proposalState(insert, lookup).state).toBe('pending');
    expect(proposalState({ ...insert, cell_id: null }, lookup).state).toBe(
      'pending'
    );
    expect(proposalState({ ...insert, cell_id: 'gone' }, lookup).state).toBe(
      'stale'
    );
  });
});

describe('applyProposal', () => {
  it('modifies a cell as one undoable change', () => {
    const { model, ids } = notebookWith('x = 1\ny = x / 0', 'print(y)');
    const shared = model.sharedModel as YNotebook;
    applyProposal(
      shared,
      proposal({
        cell_id: ids[0],
        base_source: 'x = 1\ny = x / 0',
        new_source: 'x = 1\ny = x / 1'
      })
    );
    expect(shared.cells[0].getSource()).toBe('x = 1\ny = x / 1');
    shared.cells[0].undo();
    expect(shared.cells[0].getSource()).toBe('x = 1\ny = x / 0');
    model.dispose();
  });

  it('inserts after the anchor, or at the top, and returns the new id', () => {
    const { model, ids } = notebookWith('a', 'b');
    const shared = model.sharedModel as YNotebook;
    const { new_cell_id } = quietly(() =>
      applyProposal(
        shared,
        proposal({
          kind: 'insert',
          cell_id: ids[0],
          cell_type: 'markdown',
          new_source: '# Note'
        })
      )
    );
    expect(shared.cells.map(c => c.getSource())).toEqual(['a', '# Note', 'b']);
    expect(shared.cells[1].getId()).toBe(new_cell_id);
    expect(shared.cells[1].cell_type).toBe('markdown');
    quietly(() =>
      applyProposal(
        shared,
        proposal({ id: 'p2', kind: 'insert', cell_id: null, new_source: 'top' })
      )
    );
    expect(shared.cells[0].getSource()).toBe('top');
    shared.undo();
    shared.undo();
    expect(shared.cells.map(c => c.getSource())).toEqual(['a', 'b']);
    model.dispose();
  });

  it('puts outputs back into a code cell, leaving its source and undo history', () => {
    const { model, ids } = notebookWith("print('now')");
    const shared = model.sharedModel as YNotebook;
    const cell = shared.cells[0] as ISharedCodeCell;
    const now: nbformat.IOutput[] = [
      { output_type: 'stream', name: 'stdout', text: 'now\n' }
    ];
    cell.setOutputs(now);
    const earlier: nbformat.IOutput[] = [
      { output_type: 'stream', name: 'stdout', text: 'earlier\n' },
      {
        output_type: 'execute_result',
        data: { 'text/plain': "'shown'" },
        metadata: {},
        execution_count: 1
      }
    ];
    const applied = applyProposal(
      shared,
      proposal({
        kind: 'outputs',
        cell_id: ids[0],
        base_source: null,
        new_source: null,
        new_outputs: JSON.stringify(earlier)
      })
    );
    // What the cell's model shows (a stream merged into the one deleted before
    // it would read "now\nearlier\n" or lose its text), and what it replaced.
    const shown = model.cells.get(0) as ICodeCellModel;
    expect(shown.outputs.toJSON()).toEqual(earlier);
    expect(cell.getOutputs()).toEqual(earlier);
    expect(JSON.parse(applied.base_outputs ?? '')).toEqual(now);
    expect(cell.getSource()).toBe("print('now')");
    expect(shared.canUndo()).toBe(false); // the server undoes it, not Ctrl-Z
    model.dispose();
  });

  it('calls an outputs proposal stale only once its cell is gone', () => {
    const outputs = proposal({ kind: 'outputs', base_source: null });
    expect(proposalState(outputs, () => 'edited since').state).toBe('pending');
    expect(proposalState(outputs, () => undefined).state).toBe('stale');
  });

  it('deletes a cell, undoably', () => {
    const { model, ids } = notebookWith('a', 'b');
    const shared = model.sharedModel as YNotebook;
    applyProposal(
      shared,
      proposal({ kind: 'delete', cell_id: ids[1], base_source: 'b' })
    );
    expect(shared.cells.map(c => c.getSource())).toEqual(['a']);
    shared.undo();
    expect(shared.cells.map(c => c.getSource())).toEqual(['a', 'b']);
    model.dispose();
  });

  it('puts a version in place of every cell, as one undoable change', () => {
    const { model } = notebookWith('a', 'b', 'c');
    const shared = model.sharedModel as YNotebook;
    const version = {
      cells: [
        {
          id: 'v1',
          cell_type: 'code',
          source: 'x = 1',
          metadata: {},
          execution_count: 3,
          outputs: [{ output_type: 'stream', name: 'stdout', text: 'kept\n' }]
        }
      ],
      metadata: { kernelspec: { name: 'python3', display_name: 'Python 3' } },
      nbformat: 4,
      nbformat_minor: 5
    };
    const restore = proposal({
      kind: 'version',
      cell_id: null,
      base_source: null,
      version: 7,
      new_notebook: JSON.stringify(version)
    });
    expect(proposalState(restore, () => undefined).state).toBe('pending');
    let marked: unknown = undefined;
    const applied = applyProposal(shared, restore, a => (marked = a));
    expect(applied).toEqual({ new_notebook: null });
    expect(marked).toEqual(applied);
    expect(shared.cells.map(c => c.getSource())).toEqual(['x = 1']);
    expect((shared.cells[0] as ISharedCodeCell).getOutputs()).toEqual(
      version.cells[0].outputs
    );
    // One step of the notebook's undo (Z in command mode) brings all three back.
    shared.undo();
    expect(shared.cells.map(c => c.getSource())).toEqual(['a', 'b', 'c']);
    shared.redo();
    expect(shared.cells.map(c => c.getSource())).toEqual(['x = 1']);
    model.dispose();
  });

  it('refuses a stale proposal and leaves the notebook alone', () => {
    const { model, ids } = notebookWith('changed');
    const shared = model.sharedModel as YNotebook;
    expect(() =>
      applyProposal(
        shared,
        proposal({ cell_id: ids[0], base_source: 'original' })
      )
    ).toThrow(StaleProposalError);
    expect(() =>
      applyProposal(
        shared,
        proposal({
          cell_id: ids[0],
          base_source: 'changed',
          status: 'rejected'
        })
      )
    ).toThrow('already rejected');
    expect(shared.cells[0].getSource()).toBe('changed');
    model.dispose();
  });
});

describe('ProposalModel', () => {
  let model: NotebookModel;
  let ids: string[];
  let server: FakeServerDoc;
  let proposals: ProposalModel;

  beforeEach(() => {
    ({ model, ids } = notebookWith('1/0', 'print("ok")'));
    server = new FakeServerDoc(model);
    proposals = new ProposalModel(model.sharedModel as YNotebook);
  });

  afterEach(() => {
    proposals.dispose();
    model.dispose();
  });

  it('follows proposals the server adds and resolves', () => {
    let changes = 0;
    proposals.changed.connect(() => changes++);
    server.putProposal({
      id: 'p1',
      kind: 'modify',
      cell_id: ids[0],
      base_source: '1/0',
      new_source: '1/1',
      summary: 'avoid dividing by zero'
    });
    expect(proposals.all().map(v => v.state)).toEqual(['pending']);
    expect(proposals.open()).toHaveLength(1);
    expect(proposals.forTurn('t1')[0].proposal.summary).toBe(
      'avoid dividing by zero'
    );
    server.proposals.set('p1', {
      ...(server.proposals.get('p1') as IProposal),
      status: 'rejected',
      resolved_by: 'ada'
    });
    expect(proposals.get('p1')?.state).toBe('rejected');
    expect(proposals.open()).toHaveLength(0);
    expect(changes).toBe(2);
  });

  it('turns stale when the cell is edited, and fresh again when undone', () => {
    server.putProposal({
      id: 'p1',
      cell_id: ids[0],
      kind: 'modify',
      base_source: '1/0',
      new_source: '1/1'
    });
    const states: string[] = [];
    proposals.changed.connect(() => states.push(proposals.get('p1')!.state));
    const cell = model.sharedModel.cells[0];
    cell.setSource('2/0');
    expect(proposals.get('p1')).toMatchObject({
      state: 'stale',
      reason: 'The cell changed since this was proposed.'
    });
    cell.undo();
    expect(states).toEqual(['stale', 'pending']);
  });

  it('says an accepted change was undone, and accepted again when redone', () => {
    server.putProposal({
      id: 'p1',
      cell_id: ids[0],
      kind: 'modify',
      base_source: '1/0',
      new_source: '1/1'
    });
    proposals.apply('p1', { claim: 'c1', by: 'ada', expires_in: 30 });
    expect(proposals.get('p1')?.state).toBe('accepted');
    const cell = model.sharedModel.cells[0];
    cell.undo(); // Ctrl-Z in the cell: the accepted mark stays on the server
    expect(cell.getSource()).toBe('1/0');
    expect(server.proposals.get('p1')).toMatchObject({ status: 'accepted' });
    expect(proposals.get('p1')?.state).toBe('undone');
    expect(proposals.open()).toHaveLength(0);
    cell.redo();
    expect(proposals.get('p1')?.state).toBe('accepted');
  });

  it('turns stale when an edit from another user reaches the tab', () => {
    server.putProposal({
      id: 'p1',
      cell_id: ids[1],
      kind: 'delete',
      base_source: 'print("ok")'
    });
    const cells = server.doc.getArray<any>('cells');
    cells.delete(1, 1);
    expect(proposals.get('p1')).toMatchObject({
      state: 'stale',
      reason: 'The cell has been deleted.'
    });
  });

  it('applies a proposal, which the server then sees', () => {
    server.putProposal({
      id: 'p1',
      cell_id: ids[0],
      kind: 'modify',
      base_source: '1/0',
      new_source: '1/1'
    });
    proposals.apply('p1', { claim: 'c1', by: 'ada', expires_in: 30 });
    expect(server.source(ids[0])).toBe('1/1');
    expect(server.proposals.get('p1')).toMatchObject({
      status: 'accepted',
      claim: 'c1'
    });
  });

  it('orders proposals by creation and numbers cells by position', () => {
    server.putProposal({
      id: 'b',
      cell_id: ids[0],
      kind: 'delete',
      base_source: '1/0',
      created_at: '2025-01-02T00:00:00Z'
    });
    server.putProposal({
      id: 'a',
      cell_id: ids[1],
      kind: 'delete',
      base_source: 'print("ok")',
      created_at: '2025-01-01T00:00:00Z'
    });
    expect(proposals.all().map(v => v.proposal.id)).toEqual(['a', 'b']);
    expect(proposals.position(ids[1])).toBe(2);
    expect(proposals.position('gone')).toBe(0);
  });
});
