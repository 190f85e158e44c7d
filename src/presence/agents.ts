import { NotebookPanel } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';

import { AGENT_FIELD, IAgentAtWork } from '../payloads';

/** The badge on a cell an agent is working on. */
export const AGENT_BADGE_CLASS = 'jp-Loop-agentAtWork';

const COLOUR = /^var\(--jp-collaborator-color\d\)$/;

interface IShownAgent {
  name: string;
  action: string;
  colour: string | null;
}

/**
 * The agents at work in a notebook (the server puts each in the notebook's
 * awareness), each shown on the cell it reads, runs or proposes for: "claude-code
 * for ada · running". A badge goes when its agent does, 30 s after its last call.
 */
export class AgentsAtWork implements IDisposable {
  constructor(private readonly _panel: NotebookPanel) {
    void _panel.context.ready.then(() => {
      if (this._isDisposed) {
        return;
      }
      this._panel.model?.sharedModel.awareness.on('change', this._show);
      this._panel.model?.cells.changed.connect(this._show, this);
      this._show();
    });
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._panel.model?.sharedModel.awareness.off('change', this._show);
    this._panel.model?.cells.changed.disconnect(this._show, this);
  }

  private _show = (): void => {
    const awareness = this._panel.model?.sharedModel.awareness;
    if (!awareness || this._isDisposed) {
      return;
    }
    const byCell = new Map<string, IShownAgent[]>();
    awareness.getStates().forEach(state => {
      const work = state[AGENT_FIELD] as IAgentAtWork | undefined;
      const user = state.user as
        { display_name?: string; name?: string; color?: string } | undefined;
      if (!work?.cell_id || typeof work.action !== 'string') {
        return;
      }
      const name = String(user?.display_name ?? user?.name ?? 'An agent');
      const colour =
        typeof user?.color === 'string' && COLOUR.test(user.color)
          ? user.color
          : null;
      const shown = byCell.get(work.cell_id) ?? [];
      shown.push({ name, action: work.action, colour });
      byCell.set(work.cell_id, shown);
    });
    for (const cell of this._panel.content.widgets) {
      const agents = byCell.get(cell.model.id) ?? [];
      let badge = cell.node.querySelector<HTMLElement>(
        `:scope > .${AGENT_BADGE_CLASS}`
      );
      if (!agents.length) {
        badge?.remove();
        continue;
      }
      if (!badge) {
        badge = document.createElement('div');
        badge.className = AGENT_BADGE_CLASS;
        cell.node.append(badge);
      }
      badge.textContent = agents.map(a => `${a.name} · ${a.action}`).join('; ');
      badge.style.borderLeftColor = agents[0].colour ?? '';
    }
  };

  private _isDisposed = false;
}
