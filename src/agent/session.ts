import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { ApprovalDecision, ITurnRequest } from '../payloads';
import { ConversationModel } from './conversation';
import { mentionedCells, union } from './mentions';
import { PendingActions } from './pending';
import { ProposalActions } from './proposalActions';
import { ProposalModel } from './proposals';
import type { IAgentHost, IAgentNotebook } from './host';

/** A message sent but whose turn has not reached the shared document yet. */
export interface IOutgoing {
  text: string;
  turnId: string | null;
}

/**
 * The agent for one notebook: its conversation and proposals (observed in the
 * shared document), the cells in focus and the draft, and the user's actions
 * (send, stop, approve, new conversation; the answers to proposals are
 * {@link ProposalActions}) as REST calls.
 */
export class AgentSession implements IDisposable {
  constructor(options: AgentSession.IOptions) {
    this._service = options.service;
    this._notebook = options.notebook;
    const ydoc = this._notebook.sharedModel.ydoc;
    this.conversation = new ConversationModel(ydoc);
    this.proposals = new ProposalModel(this._notebook.sharedModel);
    this._pending = new PendingActions(
      (error, failure) => this._service.report(error, failure),
      () => {
        if (!this._isDisposed) {
          this._changed.emit();
        }
      }
    );
    this.proposalActions = new ProposalActions({
      service: this._service,
      proposals: this.proposals,
      pending: this._pending,
      path: () => this.path,
      isBusy: () => this.conversation.isBusy,
      focus: cellIds => this.addFocus(cellIds),
      ask: message => this.send(message, null)
    });
    this.conversation.turnChanged.connect(this._onTurnChanged, this);
    this.conversation.changed.connect(this._onConversationChanged, this);
    this._service.reconnected.connect(this._onReconnected, this);
  }

  readonly conversation: ConversationModel;
  readonly proposals: ProposalModel;
  /** Accept, reject or regenerate the proposals. */
  readonly proposalActions: ProposalActions;

  /** Focus, draft, outgoing message or actions in flight changed. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  get service(): IAgentHost {
    return this._service;
  }

  /** The notebook's path on the server. */
  get path(): string {
    return this._notebook.path();
  }

  /** Cells the next message puts in focus. */
  get focus(): ReadonlyArray<string> {
    return this._focus;
  }

  /** The unsent message, kept across panel switches and failures. */
  get draft(): string {
    return this._draft;
  }

  set draft(value: string) {
    this._draft = value;
  }

  /** The message being sent, until its turn shows in the conversation. */
  get outgoing(): IOutgoing | null {
    const outgoing = this._outgoing;
    if (outgoing && !outgoing.turnId && this.conversation.isBusy) {
      // The turn may reach the document before the server's reply.
      const shown = this.conversation.live.some(
        entry => entry.kind === 'user' && entry.text === outgoing.text
      );
      if (shown) {
        return null;
      }
    }
    return outgoing;
  }

  /** Why the last history load failed, if it did. */
  get loadError(): string | null {
    return this._loadError;
  }

  /** Whether an action (a key such as a proposal id, `send`, `stop`) is in flight. */
  isPending(key: string): boolean {
    return this._pending.has(key);
  }

  addFocus(cellIds: ReadonlyArray<string>): void {
    this._focus = union(this._focus, cellIds);
    this._changed.emit();
  }

  removeFocus(cellId: string): void {
    this._focus = this._focus.filter(id => id !== cellId);
    this._changed.emit();
  }

  /** The notebook's cell ids, in order. */
  cellIds(): string[] {
    return this._notebook.sharedModel.cells.map(cell => cell.getId());
  }

  /** Load the durable conversation from the server. */
  async load(): Promise<void> {
    if (this._loading) {
      this._reloadAfter = true;
      return this._loading;
    }
    this._loading = (async () => {
      try {
        const reply = await this._service.client.conversation(this.path);
        if (!this._isDisposed) {
          this.conversation.setHistory(reply);
          this._loadError = null;
        }
      } catch (error) {
        this._loadError = this._service.report(
          error,
          'The conversation could not be loaded'
        );
      } finally {
        this._loading = null;
        this._changed.emit();
      }
      if (this._reloadAfter && !this._isDisposed) {
        this._reloadAfter = false;
        await this.load();
      }
    })();
    return this._loading;
  }

  /**
   * Start a turn with a message. Cells in focus and cells the message mentions
   * (`@cell`, `@cell3`) go with it, and the active cell (shown to the model in full). The draft is kept if the server refuses.
   *
   * @returns whether the turn started
   */
  async send(text: string, activeCellId: string | null): Promise<boolean> {
    const message = text.trim();
    if (!message || this.conversation.isBusy || this._pending.has('send')) {
      return false;
    }
    const settings = this._service.settings;
    const focus = union(
      this._focus,
      mentionedCells(message, this.cellIds(), activeCellId)
    );
    const request: ITurnRequest = { path: this.path, message };
    if (this._service.model) {
      request.model = this._service.model;
    }
    if (focus.length > 0) {
      request.focus_cell_ids = focus;
    }
    if (settings.approvalPolicy !== 'server') {
      request.approval = settings.approvalPolicy;
    }
    if (settings.provider) {
      request.provider = settings.provider;
    }
    if (settings.maxSteps > 0) {
      request.max_steps = settings.maxSteps;
    }
    if (activeCellId) {
      request.active_cell_id = activeCellId;
    }
    if (this._service.agent !== 'builtin') {
      request.agent = this._service.agent;
    }
    this._outgoing = { text: message, turnId: null };
    const started = await this._pending.run(
      'send',
      'The message was not sent',
      () => this._service.client.startTurn(request)
    );
    if (started === undefined) {
      this._outgoing = null;
      this._changed.emit();
      return false;
    }
    this._outgoing = { text: message, turnId: started.turn_id };
    this._draft = '';
    this._focus = [];
    this._onConversationChanged();
    this._changed.emit();
    return true;
  }

  /** Stop the running turn. */
  async stop(): Promise<void> {
    const turn = this.conversation.turn;
    if (!turn) {
      return;
    }
    await this._pending.run('stop', 'The turn could not be stopped', () =>
      this._service.client.stopTurn(this.path, turn.id)
    );
  }

  /**
   * Start a new conversation: later turns are sent none of the earlier
   * messages, and every tab's panel empties (the server clears the shared
   * document's turn; {@link ConversationModel} follows it). Not while a turn
   * runs (the server refuses it too).
   *
   * @returns whether it started
   */
  async newConversation(): Promise<boolean> {
    if (this.conversation.isBusy) {
      return false;
    }
    const started = await this._pending.run(
      'new-conversation',
      'A new conversation could not be started',
      () => this._service.client.newConversation(this.path)
    );
    if (started === undefined) {
      return false;
    }
    this._outgoing = null;
    await this.load();
    return true;
  }

  /** Answer the pending approval. */
  async answer(decision: ApprovalDecision): Promise<void> {
    const approval = this.conversation.approval;
    if (!approval) {
      return;
    }
    await this._pending.run(approval.id, 'The answer was not sent', () =>
      // The hashes of the sources this panel showed: only those may run.
      this._service.client.answerApproval(
        this.path,
        approval.id,
        decision,
        approval.source_hashes
      )
    );
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._service.reconnected.disconnect(this._onReconnected, this);
    this.conversation.dispose();
    this.proposals.dispose();
    Signal.clearData(this);
  }

  private _onTurnChanged(): void {
    void this.load();
  }

  private _onConversationChanged(): void {
    const outgoing = this._outgoing;
    if (!outgoing?.turnId) {
      return;
    }
    const turn = this.conversation.turn;
    if (turn && turn.id === outgoing.turnId) {
      this._outgoing = null;
      this._changed.emit();
    }
  }

  private _onReconnected(): void {
    void this.load();
  }

  private _service: IAgentHost;
  private _notebook: IAgentNotebook;
  private _focus: string[] = [];
  private _draft = '';
  private _outgoing: IOutgoing | null = null;
  private _loadError: string | null = null;
  private _loading: Promise<void> | null = null;
  private _reloadAfter = false;
  private _pending: PendingActions;
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
}

export namespace AgentSession {
  export interface IOptions {
    service: IAgentHost;
    notebook: IAgentNotebook;
  }
}
