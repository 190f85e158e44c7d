import { Notification } from '@jupyterlab/apputils';
import { CodeCell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { ServerConnection } from '@jupyterlab/services';
import { IDisposable } from '@lumino/disposable';
import { Signal } from '@lumino/signaling';
import { PanelLayout, Widget } from '@lumino/widgets';

import { postJSON, requestAPI } from '../request';
import { IInputReply, IInputRequest } from '../payloads';
import { StdinItem } from './stdin';

/**
 * As in JupyterLab, an answered box stays, soft-hidden and focused, a moment after
 * the answer: keys pressed in quick succession must not reach the notebook.
 */
const ANSWERED_LINGER_MS = 500;

/**
 * The pending `input()` prompts of one notebook panel, shown in the cells' output
 * areas as JupyterLab shows its own, and answered through jupyter-loop so that
 * every tab sees the prompt, the first answer wins and a later tab shows it too.
 */
export class CellPrompts implements IDisposable {
  /**
   * @param _panel - the notebook panel the prompts belong to
   * @param _path - the notebook's path on the server
   * @param _refresh - shows a cell's prompt again from the run markers, for a
   *   prompt that went away while its request is still pending
   */
  constructor(
    private readonly _panel: NotebookPanel,
    private readonly _path: () => string,
    private readonly _refresh: (cellId: string) => void
  ) {}

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    const items = [...this._items.values()];
    this._items.clear();
    items.forEach(item => item.dispose());
  }

  /** Show `request` on `cell`, or no prompt if it is undefined. */
  show(
    cell: CodeCell,
    request: IInputRequest | undefined,
    kernelId: string | undefined
  ): void {
    const cellId = cell.model.id;
    const current = this._items.get(cellId);
    if (
      current &&
      current.request.request_id === request?.request_id &&
      (current.answered || current.parent === cell.outputArea)
    ) {
      return; // shown already (in this cell's widget, if the cell was rebuilt)
    }
    this._items.delete(cellId);
    if (request) {
      this._add(cell, request, kernelId);
    }
    if (current?.answered) {
      window.setTimeout(() => disposeKeepingFocus(current), ANSWERED_LINGER_MS);
    } else if (current) {
      disposeKeepingFocus(current);
    }
  }

  private _add(
    cell: CodeCell,
    request: IInputRequest,
    kernelId: string | undefined
  ): void {
    const outputArea = cell.outputArea;
    const layout = outputArea.layout;
    if (!(layout instanceof PanelLayout)) {
      return;
    }
    const cellId = cell.model.id;
    const config = this._panel.content.notebookConfig;
    const item = new StdinItem({
      outputArea,
      request,
      kernelId,
      send: value => this._send(cellId, request, value),
      inputHistoryScope: config.inputHistoryScope,
      showInputPlaceholder: config.showInputPlaceholder
    });
    item.failed.connect(this._onFailed, this);
    item.disposed.connect(() => this._onItemDisposed(cellId, item));
    this._items.set(cellId, item);
    // Every output up to the prompt shows while it waits, and the answer echoed after
    // it; outputs after that are trimmed again, as in JupyterLab (see showAll).
    showAll(outputArea);
    const follow = (): void => {
      showAll(outputArea);
      if (item.answered) {
        outputArea.model.changed.disconnect(follow); // that change was the echo
      }
    };
    outputArea.model.changed.connect(follow);
    item.disposed.connect(() => outputArea.model.changed.disconnect(follow));
    layout.addWidget(item);
    // Tell the notebook, as JupyterLab's output area does: it scrolls the cell into
    // view and puts the focus back on the cell when the prompt goes.
    const requested = outputArea.inputRequested;
    if (requested instanceof Signal) {
      requested.emit(item.stdin);
    }
  }

  private async _send(
    cellId: string,
    request: IInputRequest,
    value: string
  ): Promise<void> {
    const reply: IInputReply = {
      path: this._path(),
      cell_id: cellId,
      request_id: request.request_id,
      value
    };
    await requestAPI<unknown>('input', postJSON(reply));
  }

  private _onFailed(item: StdinItem, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    Notification.warning(`The answer was not sent: ${message}`, {
      autoClose: 6000
    });
    const answeredElsewhere =
      error instanceof ServerConnection.ResponseError &&
      error.response.status === 409;
    // A refused answer leaves the prompt pending: offer a fresh one. A prompt
    // answered from another tab goes when the server clears it.
    if (answeredElsewhere || this._isDisposed) {
      return;
    }
    for (const [cellId, shown] of this._items) {
      if (shown === item) {
        this._items.delete(cellId);
        item.dispose();
        this._refresh(cellId);
        return;
      }
    }
  }

  /**
   * The output area disposes its widgets when its outputs are cleared or a capped
   * count is raised: an unanswered prompt comes back while the server still asks.
   */
  private _onItemDisposed(cellId: string, item: StdinItem): void {
    // An answered box stays listed until the server clears its request, so that
    // the same request is not asked again.
    if (this._isDisposed || item.answered || this._items.get(cellId) !== item) {
      return;
    }
    this._items.delete(cellId);
    // Not from inside the output area's own loop over its widgets.
    void Promise.resolve().then(() => {
      if (!this._isDisposed) {
        this._refresh(cellId);
      }
    });
  }

  private _items = new Map<string, StdinItem>();
  private _isDisposed = false;
}

/**
 * Dispose a widget; if the focus was elsewhere (say, in the next prompt of an ipdb
 * session), keep it there despite the notebook refocusing the cell.
 */
/**
 * Lift the output area's `maxNumberOutputs` trim so that all its outputs show, as
 * JupyterLab's own output area does on an input request: a person answering `input()`
 * sees every output the cell printed before it asked (its test "Don't limit cell
 * outputs if input is requested"). jupyter-loop shows the prompt itself, so the output
 * area never heard of the request and kept them trimmed to the first few.
 *
 * Only when outputs are hidden: the trim notice then sits at `maxNumberOutputs`, which
 * is what the setter removes (with nothing hidden it would remove the widget there, the
 * prompt).
 */
function showAll(outputArea: CodeCell['outputArea']): void {
  const count = outputArea.model.length;
  if (count > outputArea.maxNumberOutputs) {
    outputArea.maxNumberOutputs = count;
  }
}

function disposeKeepingFocus(widget: Widget): void {
  const focused = document.activeElement;
  widget.dispose();
  if (
    focused instanceof HTMLElement &&
    focused.isConnected &&
    !widget.node.contains(focused) &&
    document.activeElement !== focused
  ) {
    focused.focus();
  }
}
