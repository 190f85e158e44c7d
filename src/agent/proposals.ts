import type { ISharedCodeCell, ISharedNotebook } from '@jupyter/ydoc';
import type * as nbformat from '@jupyterlab/nbformat';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';
import * as Y from 'yjs';

import { IClaimReply, IProposal, PROPOSALS_MAP } from '../payloads';
import { replacement } from './diff';
import { plain } from './ydata';

/**
 * Where a proposal stands for this tab: the server's status, `stale` when a
 * pending proposal no longer fits the notebook, or `undone` when the notebook
 * no longer holds an accepted change (docs/agent.md).
 */
export type ProposalState =
  'pending' | 'stale' | 'accepted' | 'undone' | 'rejected';

export interface IProposalView {
  proposal: IProposal;
  state: ProposalState;
  /** Why a stale proposal cannot be accepted, or how an accepted one was undone. */
  reason?: string;
}

/** The current source of a cell by id; undefined when the cell is gone. */
export type SourceLookup = (cellId: string) => string | undefined;

/** A proposal's state against the notebook's current cells. */
export function proposalState(
  proposal: IProposal,
  sourceOf: SourceLookup
): Pick<IProposalView, 'state' | 'reason'> {
  if (proposal.status === 'accepted') {
    const undone = undoneReason(proposal, sourceOf);
    return undone ? { state: 'undone', reason: undone } : { state: 'accepted' };
  }
  if (proposal.status !== 'pending') {
    return { state: proposal.status };
  }
  if (proposal.kind === 'version') {
    return { state: 'pending' }; // a whole notebook, put back over whatever it holds
  }
  if (proposal.kind === 'outputs') {
    // Outputs are put back over whatever the cell shows: stale only with the cell.
    return proposal.cell_id && sourceOf(proposal.cell_id) !== undefined
      ? { state: 'pending' }
      : { state: 'stale', reason: 'The cell has been deleted.' };
  }
  if (proposal.kind === 'insert') {
    if (proposal.cell_id && sourceOf(proposal.cell_id) === undefined) {
      return {
        state: 'stale',
        reason: 'The cell it was to follow has been deleted.'
      };
    }
    return { state: 'pending' };
  }
  const current = proposal.cell_id ? sourceOf(proposal.cell_id) : undefined;
  if (current === undefined) {
    return { state: 'stale', reason: 'The cell has been deleted.' };
  }
  if (current !== (proposal.base_source ?? '')) {
    return {
      state: 'stale',
      reason: 'The cell changed since this was proposed.'
    };
  }
  return { state: 'pending' };
}

/**
 * How the notebook undid an accepted proposal, or null while it holds it.
 *
 * Derived from the cells, not recorded: an undo in a tab (Ctrl-Z) reverts the
 * cell through that tab's undo manager, which does not track the proposals map,
 * so the server's status stays `accepted` (and a redo brings the change back).
 * Only a return to exactly the state before the change counts: a cell edited
 * further, or deleted since, still holds (or lost) the change as the user made it.
 */
function undoneReason(
  proposal: IProposal,
  sourceOf: SourceLookup
): string | null {
  switch (proposal.kind) {
    case 'insert':
      return proposal.new_cell_id &&
        sourceOf(proposal.new_cell_id) === undefined
        ? 'The inserted cell is no longer in the notebook.'
        : null;
    case 'delete':
      return proposal.cell_id && sourceOf(proposal.cell_id) !== undefined
        ? 'The deleted cell is back in the notebook.'
        : null;
    case 'outputs':
      return null; // the outputs it replaced are not kept to compare with
    case 'version':
      return null; // the notebook it replaced is a version; Z (undo) brings it back
    default: {
      const before = proposal.base_source ?? '';
      const current = proposal.cell_id ? sourceOf(proposal.cell_id) : undefined;
      return current === before && before !== (proposal.new_source ?? '')
        ? 'The cell holds its source from before the change again.'
        : null;
    }
  }
}

/** What applying a proposal adds to it once accepted. */
export interface IApplied {
  /** An insert: the new cell. */
  new_cell_id?: string;
  /** Outputs put back: the outputs they replaced (JSON text), for an undo. */
  base_outputs?: string;
  /** A version put back: its notebook is no longer kept in the proposal. */
  new_notebook?: null;
}

/** A proposal that no longer fits the notebook. */
export class StaleProposalError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'StaleProposalError';
  }
}

/**
 * Apply a proposal to a notebook as one undoable change of this document:
 * modify replaces the changed span of the source, insert adds a cell after its
 * anchor (or at the top), delete removes the cell; outputs replaces the cell's
 * outputs, outside the undo history (the server undoes it); version replaces
 * every cell (and the metadata) with the version's. `andThen` runs inside the
 * same transaction (to mark the proposal accepted with the edit).
 *
 * @returns the id of the inserted cell (insert), the outputs replaced (outputs)
 * @throws StaleProposalError when the proposal does not fit the notebook
 */
export function applyProposal(
  notebook: ISharedNotebook,
  proposal: IProposal,
  andThen: (applied: IApplied) => void = () => undefined
): IApplied {
  const index = (cellId: string | null): number =>
    cellId === null ? -1 : notebook.cells.findIndex(c => c.getId() === cellId);
  const { state, reason } = proposalState(proposal, id => {
    const at = index(id);
    return at < 0 ? undefined : notebook.cells[at].getSource();
  });
  if (state !== 'pending') {
    throw new StaleProposalError(
      reason ?? `The proposal was already ${state}.`
    );
  }
  if (proposal.kind === 'outputs') {
    const cell = notebook.cells[index(proposal.cell_id)];
    if (cell.cell_type !== 'code') {
      throw new StaleProposalError('The cell is no longer a code cell.');
    }
    const outputs = JSON.parse(
      proposal.new_outputs ?? '[]'
    ) as nbformat.IOutput[];
    const code = cell as ISharedCodeCell;
    const replaced = code.getOutputs();
    const old = replaced.length;
    const applied = { base_outputs: JSON.stringify(replaced) };
    // Appended, then the old ones deleted: replaced in place, the change reads
    // "insert, then delete", and the cell model merges an inserted stream into
    // the same-name stream still before it (its text doubled or lost). Outside
    // the undo history: Ctrl-Z would be read that way, so the server undoes it.
    cell.transact(() => {
      code.updateOutputs(old, old, outputs);
      code.updateOutputs(0, old, []);
      andThen(applied);
    }, false);
    return applied;
  }
  if (proposal.kind === 'version') {
    return putVersion(notebook, proposal, andThen);
  }
  if (proposal.kind === 'modify') {
    // The cell's own transaction: its undo manager tracks that origin.
    const cell = notebook.cells[index(proposal.cell_id)];
    const edit = replacement(cell.getSource(), proposal.new_source ?? '');
    cell.transact(() => {
      cell.updateSource(edit.start, edit.end, edit.text);
      andThen({});
    });
    return {};
  }
  let applied: IApplied = {};
  notebook.transact(() => {
    if (proposal.kind === 'delete') {
      notebook.deleteCell(index(proposal.cell_id));
    } else {
      const at = proposal.cell_id === null ? 0 : index(proposal.cell_id) + 1;
      const cell = notebook.insertCell(at, {
        cell_type: proposal.cell_type ?? 'code',
        source: proposal.new_source ?? '',
        metadata: {}
      });
      applied = { new_cell_id: cell.getId() };
    }
    andThen(applied);
  });
  return applied;
}

/**
 * Replace the notebook's cells with a version's, as one change of the notebook
 * (its own transaction: the notebook's undo manager tracks that origin, so `Z`
 * in command mode takes the whole restore back, the cells as they were).
 */
function putVersion(
  notebook: ISharedNotebook,
  proposal: IProposal,
  andThen: (applied: IApplied) => void
): IApplied {
  let version: nbformat.INotebookContent;
  try {
    version = JSON.parse(
      proposal.new_notebook ?? ''
    ) as nbformat.INotebookContent;
  } catch {
    throw new StaleProposalError('The proposal no longer holds its version.');
  }
  const applied: IApplied = { new_notebook: null };
  notebook.transact(() => {
    notebook.deleteCellRange(0, notebook.cells.length);
    notebook.insertCells(0, version.cells);
    notebook.setMetadata(version.metadata ?? {});
    andThen(applied);
  });
  return applied;
}

/**
 * The agent's proposals for one notebook ({@link PROPOSALS_MAP}), each with its
 * state against the current cells; stale detection follows every edit.
 */
export class ProposalModel implements IDisposable {
  constructor(private readonly _notebook: ISharedNotebook & { ydoc: Y.Doc }) {
    this._map = _notebook.ydoc.getMap<unknown>(PROPOSALS_MAP);
    this._cells = _notebook.ydoc.getArray('cells');
    this._map.observeDeep(this._onChange);
    this._cells.observeDeep(this._onCellsChange);
    this._read();
  }

  /** A proposal was added, resolved or turned stale (or fresh again). */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Every proposal, oldest first. */
  all(): IProposalView[] {
    return this._views;
  }

  get(id: string): IProposalView | undefined {
    return this._views.find(view => view.proposal.id === id);
  }

  /** The proposals of a turn, oldest first. */
  forTurn(turnId: string): IProposalView[] {
    return this._views.filter(view => view.proposal.turn_id === turnId);
  }

  /** Pending or stale proposals, those that wait for a user. */
  open(): IProposalView[] {
    return this._views.filter(
      view => view.state === 'pending' || view.state === 'stale'
    );
  }

  /** The 1-based position of a cell, for labels ("cell 3"); 0 when gone. */
  position(cellId: string | null): number {
    if (cellId === null) {
      return 0;
    }
    return this._notebook.cells.findIndex(c => c.getId() === cellId) + 1;
  }

  /** How many cells the notebook has. */
  cellCount(): number {
    return this._notebook.cells.length;
  }

  /** The current source of a cell, undefined when gone. */
  source(cellId: string): string | undefined {
    return this._notebook.cells.find(c => c.getId() === cellId)?.getSource();
  }

  /**
   * Apply a pending proposal to this document (see {@link applyProposal}) and,
   * in the same transaction, mark it accepted under the server's claim.
   */
  apply(id: string, claim: IClaimReply): IApplied {
    const view = this.get(id);
    if (!view) {
      throw new StaleProposalError('The proposal is gone.');
    }
    const { proposal } = view;
    return applyProposal(this._notebook, proposal, applied => {
      const accepted: IProposal = {
        ...proposal,
        ...applied,
        status: 'accepted',
        resolved_by: claim.by,
        resolved_at: new Date().toISOString(),
        claim: claim.claim
      };
      this._map.set(id, accepted);
    });
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._map.unobserveDeep(this._onChange);
    this._cells.unobserveDeep(this._onCellsChange);
    Signal.clearData(this);
  }

  private _onChange = (): void => {
    this._read();
  };

  private _onCellsChange = (): void => {
    // Outputs stream through the cells too: only re-check when a proposal waits
    // (it may turn stale) or was accepted (it may be undone).
    if (this._views.some(view => view.proposal.status !== 'rejected')) {
      this._evaluate();
    }
  };

  private _read(): void {
    const proposals: IProposal[] = [];
    this._map.forEach(value => {
      const proposal = plain<IProposal>(value);
      if (proposal && proposal.id) {
        proposals.push(proposal);
      }
    });
    proposals.sort(byCreation);
    this._proposals = proposals;
    this._evaluate(true);
  }

  private _evaluate(force = false): void {
    // Sources are read only for the cells proposals name (outputs stream often).
    const cells = new Map(
      this._notebook.cells.map(cell => [cell.getId(), cell])
    );
    const views = this._proposals.map(proposal => ({
      proposal,
      ...proposalState(proposal, id => cells.get(id)?.getSource())
    }));
    const key = views.map(v => `${v.proposal.id}:${v.state}`).join('|');
    this._views = views;
    if (force || key !== this._key) {
      this._key = key;
      this._changed.emit();
    }
  }

  private _map: Y.Map<unknown>;
  private _cells: Y.Array<unknown>;
  private _proposals: IProposal[] = [];
  private _views: IProposalView[] = [];
  private _key = '';
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
}

function byCreation(a: IProposal, b: IProposal): number {
  const at = (p: IProposal) =>
    typeof p.created_at === 'number'
      ? p.created_at
      : Date.parse(p.created_at ?? '') || 0;
  return at(a) - at(b) || a.id.localeCompare(b.id);
}
