import { Notebook } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';

import { FOCUS_FIELD, ICellFocus } from '../payloads';

/** How long the cell in hand must stay put before the others are told of it. */
export const FOCUS_SETTLE_MS = 300;

/** The part of a notebook's awareness (y-protocols) that the focus is put in. */
export interface IFocusAwareness {
  getLocalState(): { [field: string]: unknown } | null;
  setLocalStateField(field: string, value: unknown): void;
}

/**
 * What this tab's person has in hand: the active cell and the cells selected with
 * it, in notebook order.
 */
export function focusOf(notebook: Notebook): ICellFocus {
  const active = notebook.activeCell?.model.id ?? null;
  const selected = notebook.widgets
    .filter(cell => notebook.isSelectedOrActive(cell))
    .map(cell => cell.model.id);
  return { cell_id: active, selected_cell_ids: selected };
}

/**
 * Publishes the cell in hand in the notebook's awareness once it has stayed put for
 * {@link FOCUS_SETTLE_MS}, so an outside agent asked about "this cell" knows which
 * one (issue 21, item 4).
 *
 * Not at once: Shift-Enter moves the active cell inside the key's own work, and an
 * awareness message then (sent, relayed by the server to every tab, echoed back) is
 * work on the page and on the server that stock JupyterLab does not do while the
 * run's first output is on its way; stepping through cells sent one per key for
 * every collaborator's tab. An agent asked about a cell within 0.3 s of the click
 * reads the one before.
 */
export class FocusPublisher implements IDisposable {
  constructor(
    private readonly _awareness: () => IFocusAwareness | undefined,
    private readonly _focus: () => ICellFocus,
    private readonly _settleMs = FOCUS_SETTLE_MS
  ) {}

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** The cell in hand or the selection changed: publish once it settles. */
  changed(): void {
    if (this.isDisposed) {
      return;
    }
    window.clearTimeout(this._timer);
    this._timer = window.setTimeout(() => this.publish(), this._settleMs);
  }

  /** Publish the focus now, if it differs from what the awareness holds. */
  publish(): void {
    const awareness = this._awareness();
    if (!awareness || this.isDisposed) {
      return;
    }
    const focus = this._focus();
    const previous = awareness.getLocalState()?.[FOCUS_FIELD] as
      ICellFocus | undefined;
    if (
      previous?.cell_id === focus.cell_id &&
      JSON.stringify(previous?.selected_cell_ids) ===
        JSON.stringify(focus.selected_cell_ids)
    ) {
      return; // unchanged: no awareness message for every keystroke or scroll
    }
    awareness.setLocalStateField(FOCUS_FIELD, focus);
  }

  dispose(): void {
    this._isDisposed = true;
    window.clearTimeout(this._timer);
  }

  private _timer = 0;
  private _isDisposed = false;
}
