import { NotebookPanel, INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { Contents } from '@jupyterlab/services';
import { ReactWidget } from '@jupyterlab/ui-components';
import type { Message } from '@lumino/messaging';
import { ISignal, Signal } from '@lumino/signaling';
import * as React from 'react';

import { sessionOfPanel } from '../agent/panels';
import { AgentService } from '../agent/service';
import { AgentSession } from '../agent/session';
import { CompletionUsage } from '../completion/usage';
import { ServerFigures } from '../serverfigures';
import { IServerStatus } from '../payloads';
import { ApprovalCard } from './approval';
import { Composer } from './composer';
import { Banners, Header } from './header';
import { BudgetLine } from './budgetline';
import { CompletionUsageLine } from './completionusage';
import { TurnView } from './conversation';
import { useSignal } from './hooks';
import { assistantIcon } from './icons';

/** The id of the side panel (for `shell.activateById`). */
export const PANEL_ID = 'jupyter-loop-assistant';

/**
 * The AI assistant's side panel. It follows the active notebook and shows that
 * notebook's conversation, proposals and approvals, the same in every tab.
 */
export class AgentPanel extends ReactWidget {
  constructor(private readonly _options: AgentPanel.IOptions) {
    super();
    this.id = PANEL_ID;
    this.addClass('jp-Loop-AgentPanel');
    this.title.icon = assistantIcon;
    this.title.caption = 'AI assistant';
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', 'AI assistant');
    _options.tracker.currentChanged.connect(this._onCurrentChanged, this);
    this._onCurrentChanged();
  }

  /** The notebook the panel shows. */
  get notebook(): NotebookPanel | null {
    return this._notebook;
  }

  /** The session of the notebook the panel shows. */
  get session(): AgentSession | null {
    return this._notebook
      ? sessionOfPanel(
          this._options.service,
          this._notebook,
          this._options.contents
        )
      : null;
  }

  /** Emitted when the panel switches to another notebook. */
  get notebookChanged(): ISignal<this, NotebookPanel | null> {
    return this._notebookChanged;
  }

  /** Put the keyboard focus in the message box. */
  focusInput(): void {
    requestAnimationFrame(() => this._input.current?.focus());
  }

  protected render(): JSX.Element {
    return (
      <AgentView
        panel={this}
        service={this._options.service}
        rendermime={this._options.rendermime}
        inputRef={this._input}
        onReveal={this._options.onReveal}
        completionUsage={this._options.completionUsage ?? null}
        budget={this._options.budget ?? null}
      />
    );
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    void this._options.completionUsage?.refresh();
    void this._options.budget?.refresh();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this._options.completionUsage?.refresh();
    void this._options.budget?.refresh();
  }

  dispose(): void {
    this._options.tracker.currentChanged.disconnect(
      this._onCurrentChanged,
      this
    );
    super.dispose();
  }

  private _onCurrentChanged(): void {
    const current = this._options.tracker.currentWidget;
    if (current === this._notebook) {
      return;
    }
    this._notebook = current;
    if (current) {
      void current.context.ready.then(() => {
        if (this._notebook === current) {
          this._notebookChanged.emit(current);
          this.update();
        }
      });
    }
    this._notebookChanged.emit(current);
    this.update();
  }

  private _notebook: NotebookPanel | null = null;
  private _input = React.createRef<HTMLTextAreaElement>();
  private _notebookChanged = new Signal<this, NotebookPanel | null>(this);
}

export namespace AgentPanel {
  export interface IOptions {
    service: AgentService;
    tracker: INotebookTracker;
    rendermime: IRenderMimeRegistry;
    contents: Contents.IManager;
    /** Show a cell of the panel's notebook. */
    onReveal: (panel: NotebookPanel, cellId: string) => void;
    /** The server's inline completion usage, shown at the foot (if any). */
    completionUsage?: CompletionUsage | null;
    /** The server's status, for the day's token budget at the foot (if capped). */
    budget?: ServerFigures<IServerStatus> | null;
  }
}

/** The panel's content for the current notebook. */
function AgentView(props: {
  panel: AgentPanel;
  service: AgentService;
  rendermime: IRenderMimeRegistry;
  inputRef: React.RefObject<HTMLTextAreaElement>;
  onReveal: (panel: NotebookPanel, cellId: string) => void;
  completionUsage: CompletionUsage | null;
  budget: ServerFigures<IServerStatus> | null;
}): JSX.Element {
  const { panel, service } = props;
  useSignal(panel.notebookChanged);
  useSignal(service.changed);
  const notebook = panel.notebook;
  const session = panel.session;
  return (
    <div className="jp-Loop-AgentView">
      <Header service={service} notebook={notebook} session={session} />
      <Banners service={service} />
      {session && notebook ? (
        <SessionView
          key={session.path}
          session={session}
          service={service}
          notebook={notebook}
          rendermime={props.rendermime}
          inputRef={props.inputRef}
          onReveal={cellId => props.onReveal(notebook, cellId)}
        />
      ) : (
        <p className="jp-Loop-Empty">
          {notebook
            ? 'Loading the notebook…'
            : 'Open a notebook to talk with the assistant about it.'}
        </p>
      )}
      {props.completionUsage && (
        <CompletionUsageLine usage={props.completionUsage} />
      )}
      {props.budget && <BudgetLine budget={props.budget} session={session} />}
    </div>
  );
}

function SessionView(props: {
  session: AgentSession;
  service: AgentService;
  notebook: NotebookPanel;
  rendermime: IRenderMimeRegistry;
  inputRef: React.RefObject<HTMLTextAreaElement>;
  onReveal: (cellId: string) => void;
}): JSX.Element {
  const { session, service, notebook } = props;
  useSignal(session.changed);
  useSignal(session.conversation.changed);
  useSignal(session.proposals.changed);
  const log = React.useRef<HTMLDivElement>(null);
  const stick = React.useRef(true);
  const turns = session.conversation.turns();
  const outgoing = session.outgoing;
  const approval = session.conversation.approval;

  React.useLayoutEffect(() => {
    const node = log.current;
    if (node && stick.current) {
      node.scrollTop = node.scrollHeight;
    }
  });

  const models = service.models;
  const disabled = !!models && !models.configured;
  return (
    <>
      <div
        ref={log}
        className="jp-Loop-Conversation"
        role="log"
        aria-live="polite"
        aria-label="Conversation"
        tabIndex={0}
        onScroll={event => {
          const node = event.currentTarget;
          stick.current =
            node.scrollHeight - node.scrollTop - node.clientHeight < 40;
        }}
      >
        {turns.length === 0 && !outgoing && (
          <div className="jp-Loop-Empty">
            {session.loadError ? (
              <p role="alert">{session.loadError}</p>
            ) : (
              <p>
                Ask about this notebook. The assistant reads the cells and their
                real outputs, proposes edits you accept or reject, and asks
                before it runs cells.
              </p>
            )}
          </div>
        )}
        {turns.map(view => (
          <TurnView
            key={view.turnId}
            session={session}
            view={view}
            rendermime={props.rendermime}
            onReveal={props.onReveal}
          />
        ))}
        {outgoing && (
          <section className="jp-Loop-Turn jp-mod-outgoing">
            <div className="jp-Loop-Message jp-mod-user">
              <div className="jp-Loop-Message-text">{outgoing.text}</div>
            </div>
            <footer className="jp-Loop-Turn-footer">
              <span className="jp-Loop-Turn-state" role="status">
                <span className="jp-Loop-Spinner" aria-hidden="true" />
                Sending…
              </span>
            </footer>
          </section>
        )}
      </div>
      {approval && (
        <ApprovalCard
          session={session}
          approval={approval}
          onReveal={props.onReveal}
        />
      )}
      <Composer
        session={session}
        disabled={disabled}
        inputRef={props.inputRef}
        activeCellId={() => notebook.content.activeCell?.model.id ?? null}
      />
    </>
  );
}
