import { PromiseDelegate } from '@lumino/coreutils';

import { IQueuedCell, IRunRequest, IRunTicket } from '../tokens';

/** Sends one run request to the server (see `RunSocket`). */
export type SendRun = (request: IRunRequest) => Promise<IRunTicket>;

interface IPending {
  cellId: string;
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

  /** Queue a cell; resolves with what the server queued for it. */
  add(cellId: string): Promise<IQueuedCell> {
    const delegate = new PromiseDelegate<IQueuedCell>();
    this._pending.push({ cellId, delegate });
    if (this._pending.length === 1) {
      setTimeout(() => void this._send(), 0);
    }
    return delegate.promise;
  }

  private async _send(): Promise<void> {
    const batch = this._pending;
    this._pending = [];
    try {
      const ticket = await this._sendRun({
        path: this.path,
        cell_ids: batch.map(item => item.cellId),
        kernel_id: this.kernelId,
        record_timing: this.recordTiming
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
}
