import { Cell, CodeCell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { Contents } from '@jupyterlab/services';
import { IDisposable } from '@lumino/disposable';

import { ICellMarker } from '../payloads';
import { ExecutionBoard, boardOf } from './board';
import { CellPrompts } from './prompts';

const QUEUED_CLASS = 'jp-Loop-queued';
const RUNNING_CLASS = 'jp-Loop-running';

/**
 * Shows the server's run markers on the cells of one notebook panel: queued and
 * running classes, and the pending `input()` prompt, the same in every tab.
 */
export class CellMarkers implements IDisposable {
  constructor(
    private readonly _panel: NotebookPanel,
    contents: Contents.IManager
  ) {
    const model = _panel.content.model;
    if (!model) {
      throw new Error('The notebook has no model yet');
    }
    this._board = boardOf(model);
    this._prompts = new CellPrompts(
      _panel,
      () => contents.localPath(_panel.context.path),
      cellId => this._onBoardChanged(this._board, [cellId])
    );
    this._board.changed.connect(this._onBoardChanged, this);
    model.cells.changed.connect(this._refreshAll, this);
    this._refreshAll();
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._board.changed.disconnect(this._onBoardChanged, this);
    this._panel.content.model?.cells.changed.disconnect(this._refreshAll, this);
    this._prompts.dispose();
  }

  private _onBoardChanged(_: ExecutionBoard, cellIds: string[]): void {
    for (const cellId of cellIds) {
      const cell = this._cellWidget(cellId);
      if (cell) {
        this._show(cell, this._board.marker(cellId));
      }
    }
  }

  private _refreshAll(): void {
    for (const cell of this._panel.content.widgets) {
      this._show(cell, this._board.marker(cell.model.id));
    }
  }

  private _cellWidget(cellId: string): Cell | undefined {
    return this._panel.content.widgets.find(cell => cell.model.id === cellId);
  }

  private _show(cell: Cell, marker: ICellMarker | undefined): void {
    cell.toggleClass(QUEUED_CLASS, marker?.state === 'queued');
    cell.toggleClass(RUNNING_CLASS, marker?.state === 'running');
    this._showPrompt(cell, marker);
  }

  private _showPrompt(cell: Cell, marker: ICellMarker | undefined): void {
    if (cell instanceof CodeCell) {
      const request = marker?.state === 'running' ? marker.input : undefined;
      this._prompts.show(cell, request, marker?.kernel_id);
    }
  }

  private _board: ExecutionBoard;
  private _prompts: CellPrompts;
  private _isDisposed = false;
}
