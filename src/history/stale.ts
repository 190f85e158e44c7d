import { Cell, CodeCell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { Contents, Kernel } from '@jupyterlab/services';
import type { YNotebook } from '@jupyter/ydoc';
import { IDisposable } from '@lumino/disposable';
import { PanelLayout, Widget } from '@lumino/widgets';
import type * as Y from 'yjs';

import { boardOf, ExecutionBoard } from '../execution/board';
import { requestAPI } from '../request';
import { KERNEL_LIFE } from '../payloads';
import { IStaleReply } from './types';

/** Class of a cell whose outputs are stale; its outputs are dimmed. */
export const STALE_CLASS = 'jp-Loop-stale';
/** Class of the quiet mark above a stale cell's outputs. */
export const STALE_MARK_CLASS = 'jp-Loop-staleMark';

/** Wait after a change before asking again: typing asks once, not per key. */
const DEBOUNCE_MS = 400;
/** A run's record reaches the history a moment after its outputs: ask again then. */
const AFTER_RUN_MS = 1500;
/** Kernel statuses after which the marks may have changed (a restart, a death). */
const REFRESH_ON: Kernel.Status[] = [
  'idle',
  'starting',
  'restarting',
  'autorestarting',
  'dead'
];

/**
 * The "edited since this output" and "kernel restarted since this output" marks
 * on the cells of one notebook panel.
 *
 * Why asked of the server (`GET stale`) rather than computed here: the mark
 * compares the source now with the source the cell's last run ran and the
 * kernel's start now with the one that run had, which only the run history
 * knows (see `jupyter_loop/history/handlers.py` for the rejected alternatives). Every
 * tab asks on open, after a change to the notebook (an edit in any tab reaches
 * every tab), after a run ends and after its kernel restarts; so every tab, and
 * a reopened one, shows the same marks.
 *
 * A restart is heard twice: as a status of the tab's kernel, and as the
 * server's note of the kernel's new life in the shared document. The note is
 * what every tab gets (a kernel connection may hear no status of a restart made
 * elsewhere); the status comes first when it comes.
 */
export class StaleMarks implements IDisposable {
  constructor(
    private readonly _panel: NotebookPanel,
    private readonly _contents: Contents.IManager,
    private readonly _openHistory: (cellId: string) => void
  ) {
    const model = _panel.content.model;
    if (!model) {
      throw new Error('The notebook has no model yet');
    }
    this._board = boardOf(model);
    this._board.changed.connect(this._refreshTwice, this);
    this._kernelLife = (model.sharedModel as YNotebook).ydoc.getMap(
      KERNEL_LIFE
    );
    this._kernelLife.observe(this._onKernelLife);
    model.contentChanged.connect(this._refreshSoon, this);
    model.cells.changed.connect(this._show, this);
    _panel.sessionContext.statusChanged.connect(this._onKernelStatus, this);
    this._refresh();
  }

  /** Why each cell's outputs are stale, as last told by the server. */
  get marks(): Readonly<Record<string, string>> {
    return this._marks;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    window.clearTimeout(this._timer);
    window.clearTimeout(this._afterRunTimer);
    this._board.changed.disconnect(this._refreshTwice, this);
    this._kernelLife.unobserve(this._onKernelLife);
    const model = this._panel.content.model;
    model?.contentChanged.disconnect(this._refreshSoon, this);
    model?.cells.changed.disconnect(this._show, this);
    this._panel.sessionContext.statusChanged.disconnect(
      this._onKernelStatus,
      this
    );
    for (const mark of this._shown.values()) {
      mark.dispose();
    }
    this._shown.clear();
  }

  /** Ask soon, and again once the run's record or the kernel's new start is in. */
  private _refreshTwice(): void {
    this._refreshSoon();
    window.clearTimeout(this._afterRunTimer);
    this._afterRunTimer = window.setTimeout(
      () => void this._refresh(),
      AFTER_RUN_MS
    );
  }

  private _onKernelStatus(_: unknown, status: Kernel.Status): void {
    // A restart from any tab (or REST) reaches this tab as a status of the kernel:
    // "restarting" only when restarted here, else at least the idle that follows
    // the server's kernel_info request. A run's idle is asked for once more, cheaply.
    if (REFRESH_ON.includes(status)) {
      this._refreshTwice();
    }
  }

  /** The server noted a new life of the kernel; its marks already say so. */
  private _onKernelLife = (): void => {
    this._refreshSoon();
  };

  private _refreshSoon(): void {
    window.clearTimeout(this._timer);
    this._timer = window.setTimeout(() => void this._refresh(), DEBOUNCE_MS);
  }

  private async _refresh(): Promise<void> {
    if (this._isDisposed) {
      return;
    }
    const asked = ++this._asked;
    try {
      const path = this._contents.localPath(this._panel.context.path);
      const reply = await requestAPI<IStaleReply>(
        `stale?path=${encodeURIComponent(path)}`
      );
      if (asked !== this._asked || this._isDisposed) {
        return; // a later answer is on its way
      }
      this._marks = reply.marks;
      this._show();
    } catch (error) {
      // No mark is better than a wrong one; the next change asks again.
      console.warn('jupyter-loop could not read stale outputs:', error);
    }
  }

  private _show(): void {
    if (this._isDisposed) {
      return;
    }
    const cells = new Map<string, Cell>();
    for (const cell of this._panel.content.widgets) {
      cells.set(cell.model.id, cell);
      cell.toggleClass(STALE_CLASS, cell.model.id in this._marks);
    }
    for (const [cellId, mark] of Array.from(this._shown)) {
      const cell = cells.get(cellId);
      const reason = this._marks[cellId];
      if (!reason || !cell || !cell.node.contains(mark.node)) {
        mark.dispose();
        this._shown.delete(cellId);
      } else {
        mark.reason = reason;
      }
    }
    for (const [cellId, reason] of Object.entries(this._marks)) {
      const cell = cells.get(cellId);
      if (this._shown.has(cellId) || !(cell instanceof CodeCell)) {
        continue;
      }
      const mark = new StaleMark(reason, () => this._openHistory(cellId));
      placeAboveOutputs(cell, mark);
      this._shown.set(cellId, mark);
    }
  }

  private _board: ExecutionBoard;
  private _kernelLife: Y.Map<unknown>;
  private _marks: Record<string, string> = {};
  private _shown = new Map<string, StaleMark>();
  private _timer = 0;
  private _afterRunTimer = 0;
  private _asked = 0;
  private _isDisposed = false;
}

/** The quiet line above stale outputs: why, and a way to the cell's history. */
class StaleMark extends Widget {
  constructor(reason: string, openHistory: () => void) {
    super();
    this.addClass(STALE_MARK_CLASS);
    this._text = document.createElement('span');
    const link = document.createElement('button');
    link.className = 'jp-Loop-staleHistory';
    link.textContent = 'History';
    link.title = "See this cell's runs";
    link.addEventListener('click', openHistory);
    this.node.append(this._text, link);
    this.reason = reason;
  }

  set reason(reason: string) {
    this._text.textContent = reason;
  }

  private _text: HTMLSpanElement;
}

/** Put `widget` in the cell right after its input, above its outputs. */
function placeAboveOutputs(cell: Cell, widget: Widget): void {
  const layout = cell.layout as PanelLayout;
  const input = cell.inputArea?.node;
  const index = input
    ? layout.widgets.findIndex(child => child.node.contains(input))
    : -1;
  layout.insertWidget(index >= 0 ? index + 1 : layout.widgets.length, widget);
}
