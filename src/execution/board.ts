import type { INotebookModel } from '@jupyterlab/notebook';
import type { YNotebook } from '@jupyter/ydoc';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';
import type * as Y from 'yjs';

import { EXECUTION_BOARD, ICellMarker } from '../payloads';

/**
 * The server's run markers of one notebook, read from its shared document.
 *
 * The server is their only writer; this model only observes them.
 */
export class ExecutionBoard implements IDisposable {
  constructor(model: INotebookModel) {
    const shared = model.sharedModel as YNotebook;
    this._map = shared.ydoc.getMap<ICellMarker>(EXECUTION_BOARD);
    this._map.observe(this._onChange);
  }

  /** Cell ids whose marker changed. */
  get changed(): ISignal<this, string[]> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  marker(cellId: string): ICellMarker | undefined {
    return this._map.get(cellId);
  }

  /** Every cell id with a marker. */
  cellIds(): string[] {
    return Array.from(this._map.keys());
  }

  /**
   * Resolve when the run `runId` of `cellId` has ended, with its final marker.
   *
   * A later run of the same cell ends the wait too (with that run's marker):
   * once somebody queues the cell again, the earlier run is over.
   */
  waitForRun(cellId: string, runId: string): Promise<ICellMarker> {
    return new Promise<ICellMarker>((resolve, reject) => {
      let seen = false;
      const check = (): boolean => {
        const marker = this._map.get(cellId);
        if (!marker) {
          return false;
        }
        if (marker.run_id === runId) {
          seen = true;
          return marker.state === 'done';
        }
        return seen;
      };
      const settle = (): void => {
        this._changed.disconnect(onChanged);
        this._disposed.disconnect(onDisposed);
      };
      const onChanged = (_: ExecutionBoard, ids: string[]): void => {
        if (ids.includes(cellId) && check()) {
          settle();
          resolve(this._map.get(cellId) as ICellMarker);
        }
      };
      const onDisposed = (): void => {
        settle();
        reject(new Error('Canceled: the notebook was closed'));
      };
      if (check()) {
        resolve(this._map.get(cellId) as ICellMarker);
        return;
      }
      this._changed.connect(onChanged);
      this._disposed.connect(onDisposed);
    });
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._map.unobserve(this._onChange);
    this._disposed.emit();
    Signal.clearData(this);
  }

  private _onChange = (event: Y.YMapEvent<ICellMarker>): void => {
    this._changed.emit(Array.from(event.keysChanged));
  };

  private _map: Y.Map<ICellMarker>;
  private _isDisposed = false;
  private _changed = new Signal<this, string[]>(this);
  private _disposed = new Signal<this, void>(this);
}

const boards = new WeakMap<INotebookModel, ExecutionBoard>();

/**
 * The board of a notebook model, made on first use and disposed with the model.
 */
export function boardOf(model: INotebookModel): ExecutionBoard {
  let board = boards.get(model);
  if (!board || board.isDisposed) {
    const made = new ExecutionBoard(model);
    model.sharedModel.disposed.connect(() => made.dispose());
    boards.set(model, made);
    board = made;
  }
  return board;
}
