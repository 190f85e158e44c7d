import { INotebookModel } from '@jupyterlab/notebook';
import { PromiseDelegate } from '@lumino/coreutils';

import { IQueuedCell, IRunRequest, IRunTicket } from '../payloads';

/** Turns of the microtask queue a batch waits for the cells run with its first. */
const GATHER_TURNS = 10;

/** Sends one run request to the server (see `RunSocket`). */
export type SendRun = (request: IRunRequest) => Promise<IRunTicket>;

/**
 * Calls `moveOn` once the page moves on from the cells JupyterLab is running
 * (see `ServerCellExecutor`); returns how to stop watching.
 */
export type WatchMoveOn = (moveOn: () => void) => () => void;

interface IPending {
  cellId: string;
  source: string;
  delegate: PromiseDelegate<IQueuedCell>;
}

/**
 * Gathers the cells JupyterLab asks to run in one go into a single request.
 *
 * "Run all" calls the executor once per cell in the same tick; separate requests
 * could reach the server out of order, one request keeps the order of the notebook.
 */
export class RunBatcher {
  constructor(
    readonly path: string,
    readonly kernelId: string,
    readonly recordTiming: boolean,
    private readonly _sendRun: SendRun
  ) {}

  /**
   * Queue a cell of `notebook` showing `source`; resolves with what the server
   * queued for it. (The notebook tells a Run All apart for the run history.)
   *
   * `onlyCell` says whether the command that runs this cell runs no other
   * (Shift-Enter on one cell): asked of a batch's first cell only, and then the
   * request leaves at once, with nothing to gather.
   */
  add(
    cellId: string,
    source: string,
    notebook?: INotebookModel,
    watchMoveOn?: WatchMoveOn,
    onlyCell?: () => boolean
  ): Promise<IQueuedCell> {
    const delegate = new PromiseDelegate<IQueuedCell>();
    this._notebook = notebook ?? this._notebook;
    this._pending.push({ cellId, source, delegate });
    if (this._pending.length === 1) {
      if (onlyCell?.()) {
        void this._send();
        return delegate.promise;
      }
      this._stopWatching = watchMoveOn?.(() => void this._send()) ?? null;
      void this._sendSoon();
    }
    return delegate.promise;
  }

  /**
   * Send once the cells run together have been added: when the page moves on
   * from them (JupyterLab starts every cell's run in one synchronous loop, then
   * advances to the next cell), else once they all are, within a few turns of
   * the microtask queue. Moving on comes first: JupyterLab's advance (focus,
   * scrolling, a new cell's editor) runs before any microtask, and with the
   * turns alone the request left 10 to 18 ms after Shift-Enter; it leaves in
   * 4.5 ms now, stock JupyterLab's execute request in 3 ms. Rejected: a task
   * (`setTimeout(0)`), which waits for the page's next render: 15 to 25 ms;
   * sending each cell as it is added, which splits a Run All in as many
   * requests; and sending the first cell at once with the rest as a request
   * joining it (395ff81, reverted): it left 1.3 ms after the key, yet results
   * showed 5 to 7% later, since the page handles no frame until 30 to 50 ms
   * after the key and the run's early marks only queued up with its output
   * (`bench/browser_latency.js --breakdown`). A command that runs one cell
   * alone (the notebook's selection says so) sends it at once, in `add`: no
   * joining request, nothing to wait for; what it gains is the line a running
   * cell prints later, once the page is idle.
   */
  private async _sendSoon(): Promise<void> {
    for (let turn = 0; turn < GATHER_TURNS; turn++) {
      await Promise.resolve();
    }
    await this._send();
  }

  private async _send(): Promise<void> {
    this._stopWatching?.();
    this._stopWatching = null;
    const batch = this._pending;
    this._pending = [];
    if (!batch.length) {
      return; // sent already, when the page moved on
    }
    const cellIds = batch.map(item => item.cellId);
    try {
      const ticket = await this._sendRun({
        path: this.path,
        cell_ids: cellIds,
        kernel_id: this.kernelId,
        record_timing: this.recordTiming,
        sources: Object.fromEntries(
          batch.map(item => [item.cellId, item.source])
        ),
        ...(isRunAll(cellIds, this._notebook)
          ? { started_from: 'run_all' }
          : {})
      });
      for (const item of batch) {
        const queued = ticket.cells.find(cell => cell.cell_id === item.cellId);
        if (queued) {
          item.delegate.resolve(queued);
        } else {
          item.delegate.reject(new Error(`Cell ${item.cellId} was not queued`));
        }
      }
    } catch (error) {
      for (const item of batch) {
        item.delegate.reject(error);
      }
    }
  }

  private _pending: IPending[] = [];
  private _notebook: INotebookModel | undefined;
  private _stopWatching: (() => void) | null = null;
}

/**
 * Whether one request runs every code cell of the notebook, in order: what the
 * run history calls a Run All (a label, not a right). JupyterLab does not tell
 * the executor which command asked; rejected: watching the commands run (Run
 * All reaches the executor after an await, so a flag could label the next
 * request instead). Selecting every cell and running them counts as a Run All
 * too, which it is; a notebook of one code cell has no Run All to tell apart.
 */
export function isRunAll(
  cellIds: string[],
  notebook: INotebookModel | undefined
): boolean {
  if (!notebook || cellIds.length < 2) {
    return false;
  }
  const codeCells: string[] = [];
  for (const cell of notebook.sharedModel.cells) {
    if (cell.cell_type === 'code') {
      codeCells.push(cell.getId());
    }
  }
  return (
    codeCells.length === cellIds.length &&
    codeCells.every((id, index) => id === cellIds[index])
  );
}
