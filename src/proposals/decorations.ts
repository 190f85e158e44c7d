import { Cell } from '@jupyterlab/cells';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { NotebookPanel } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';
import { PanelLayout, Widget } from '@lumino/widgets';

import { AgentSession } from '../agent/session';
import { ApprovalOnCell, ProposalOnCell } from './cellviews';

/** Class of a cell a pending proposal would delete. */
const DELETE_CLASS = 'jp-Loop-proposedDelete';

/** Where a decoration goes in its cell. */
type Placement = 'afterInput' | 'start' | 'end';

interface IWanted {
  cellId: string;
  placement: Placement;
  markDelete: boolean;
  make: () => Widget;
}

interface IShown {
  cell: Cell;
  widget: Widget;
  markDelete: boolean;
}

/**
 * Shows the agent's open proposals and its pending approval on the cells of
 * one notebook panel, the same in every tab: a merge view on a cell to modify,
 * a ghost cell where a cell would be inserted, a mark on a cell to delete, and
 * Allow / Deny on cells the agent wants to run.
 */
export class CellDecorations implements IDisposable {
  constructor(
    private readonly _panel: NotebookPanel,
    private readonly _session: AgentSession,
    private readonly _languages: IEditorLanguageRegistry | null
  ) {
    _session.proposals.changed.connect(this._sync, this);
    _session.conversation.changed.connect(this._onConversationChanged, this);
    _panel.content.model?.cells.changed.connect(this._sync, this);
    this._sync();
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._session.proposals.changed.disconnect(this._sync, this);
    this._session.conversation.changed.disconnect(
      this._onConversationChanged,
      this
    );
    this._panel.content.model?.cells.changed.disconnect(this._sync, this);
    for (const key of Array.from(this._shown.keys())) {
      this._remove(key);
    }
  }

  private _onConversationChanged(): void {
    const approval = this._session.conversation.approval;
    const key = approval ? `${approval.id}:${approval.cell_ids.join(',')}` : '';
    if (key !== this._approvalKey) {
      this._approvalKey = key;
      this._sync();
    }
  }

  private _sync(): void {
    if (this._isDisposed || this._panel.isDisposed) {
      return;
    }
    const wanted = this._wanted();
    for (const [key, shown] of Array.from(this._shown)) {
      const want = wanted.get(key);
      if (
        !want ||
        shown.cell.isDisposed ||
        this._cell(want.cellId) !== shown.cell
      ) {
        this._remove(key);
      }
    }
    for (const [key, want] of wanted) {
      if (this._shown.has(key)) {
        continue;
      }
      const cell = this._cell(want.cellId);
      if (!cell) {
        continue;
      }
      const widget = want.make();
      place(cell, widget, want.placement);
      if (want.markDelete) {
        cell.addClass(DELETE_CLASS);
      }
      this._shown.set(key, { cell, widget, markDelete: want.markDelete });
    }
  }

  private _wanted(): Map<string, IWanted> {
    const wanted = new Map<string, IWanted>();
    const session = this._session;
    const notebook = this._panel.content;
    for (const view of session.proposals.open()) {
      const { proposal } = view;
      const anchor = proposal.cell_id ?? notebook.widgets[0]?.model.id;
      if (!anchor) {
        continue;
      }
      const cellType =
        proposal.kind === 'insert'
          ? (proposal.cell_type ?? 'code')
          : (this._cell(anchor)?.model.type ?? 'code');
      wanted.set(`p:${proposal.id}`, {
        cellId: anchor,
        placement:
          proposal.cell_id === null
            ? 'start' // an insert at the top, or a whole version
            : proposal.kind === 'insert'
              ? 'end'
              : 'afterInput',
        markDelete: proposal.kind === 'delete',
        make: () =>
          new ProposalOnCell({
            session,
            proposalId: proposal.id,
            mimeType: this._mimeType(cellType),
            languages: this._languages
          })
      });
    }
    const approval = session.conversation.approval;
    for (const cellId of approval?.cell_ids ?? []) {
      wanted.set(`a:${approval?.id}:${cellId}`, {
        cellId,
        placement: 'afterInput',
        markDelete: false,
        make: () => new ApprovalOnCell(session, cellId)
      });
    }
    return wanted;
  }

  private _mimeType(cellType: string): string {
    switch (cellType) {
      case 'markdown':
        return 'text/x-ipythongfm';
      case 'raw':
        return 'text/plain';
      default:
        return this._panel.content.codeMimetype;
    }
  }

  private _cell(cellId: string): Cell | undefined {
    return this._panel.content.widgets.find(cell => cell.model.id === cellId);
  }

  private _remove(key: string): void {
    const shown = this._shown.get(key);
    if (!shown) {
      return;
    }
    this._shown.delete(key);
    shown.widget.dispose();
    if (
      shown.markDelete &&
      !Array.from(this._shown.values()).some(
        other => other.markDelete && other.cell === shown.cell
      )
    ) {
      shown.cell.removeClass(DELETE_CLASS);
    }
  }

  private _shown = new Map<string, IShown>();
  private _approvalKey = '';
  private _isDisposed = false;
}

/** Add a decoration to a cell: after its input, or at its start or end. */
function place(cell: Cell, widget: Widget, placement: Placement): void {
  const layout = cell.layout as PanelLayout;
  if (placement === 'start') {
    layout.insertWidget(0, widget);
    return;
  }
  if (placement === 'afterInput') {
    const input = cell.inputArea?.node;
    const index = input
      ? layout.widgets.findIndex(child => child.node.contains(input))
      : -1;
    if (index >= 0) {
      layout.insertWidget(index + 1, widget);
      return;
    }
  }
  layout.addWidget(widget);
}
