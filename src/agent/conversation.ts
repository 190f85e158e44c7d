import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';
import * as Y from 'yjs';

import {
  AGENT_MAP,
  IAgentTurn,
  IApprovalRequest,
  IConversationMessage,
  IConversationStart,
  IConversationReply,
  ILiveEntry,
  TurnState
} from '../payloads';
import { plain } from './ydata';

/** A line of the conversation as the panel shows it. */
export type ConversationEntry = ILiveEntry;

/** The entries of one turn, with the turn's record when it is the current or last one. */
export interface ITurnView {
  turnId: string;
  entries: ConversationEntry[];
  /** The turn's record (state, usage), known for the current or last turn. */
  turn?: IAgentTurn;
}

/** States in which a turn is still going on. */
const ACTIVE_STATES: ReadonlySet<TurnState> = new Set([
  'running',
  'waiting_approval'
]);

/** Whether a turn is still going on. */
export function isActive(turn: IAgentTurn | null | undefined): boolean {
  return !!turn && ACTIVE_STATES.has(turn.state);
}

/**
 * The error a turn's footer should state: the turn's error, unless a notice of
 * the turn already shows it (the server writes both when an error ends a turn;
 * a turn cut off by a restart has no such notice among its live entries).
 */
export function footerError(view: ITurnView): string | null {
  const error = view.turn?.state === 'error' ? view.turn.error : undefined;
  if (!error) {
    return null;
  }
  const noticed = view.entries.some(
    entry =>
      entry.kind === 'notice' &&
      entry.level === 'error' &&
      entry.text.trim() === error.trim()
  );
  return noticed ? null : error;
}

/** A durable message as a conversation entry. */
export function entryOf(message: IConversationMessage): ConversationEntry {
  switch (message.role) {
    case 'user':
      return {
        id: message.id,
        kind: 'user',
        text: message.text,
        by: message.by ?? undefined
      };
    case 'tool':
      return {
        id: message.id,
        kind: 'tool',
        name: message.tool?.name ?? 'tool',
        summary:
          message.tool?.summary || message.text || message.tool?.name || '',
        detail: message.tool?.detail ?? undefined,
        ok: message.tool?.ok
      };
    case 'thought':
      return { id: message.id, kind: 'thought', text: message.text };
    case 'notice':
    case 'system':
      return {
        id: message.id,
        kind: 'notice',
        text: message.text,
        level: message.level ?? 'info'
      };
    default:
      return { id: message.id, kind: 'assistant', text: message.text };
  }
}

/**
 * The conversation of one notebook: the durable history loaded from the server,
 * and the live turn observed in the shared document ({@link AGENT_MAP}).
 *
 * The live turn wins over the history for its own turn id, while it has
 * entries; the server is the only writer of both. A new conversation (its
 * start changes in the map) empties both, in every tab.
 */
export class ConversationModel implements IDisposable {
  constructor(ydoc: Y.Doc) {
    this._map = ydoc.getMap<unknown>(AGENT_MAP);
    this._map.observeDeep(this._onChange);
    this._read();
  }

  /** Anything shown changed. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** A new turn replaced the previous one: the history should be reloaded. */
  get turnChanged(): ISignal<this, IAgentTurn | null> {
    return this._turnChanged;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** The current or last turn. */
  get turn(): IAgentTurn | null {
    return this._turn;
  }

  /** Whether a turn is running or waiting for an approval. */
  get isBusy(): boolean {
    return isActive(this._turn);
  }

  /** The pending approval, if the agent waits for one. */
  get approval(): IApprovalRequest | null {
    return this._approval;
  }

  /** The current turn's entries, as the server streams them. */
  get live(): ReadonlyArray<ConversationEntry> {
    return this._live;
  }

  /** Whether the history was loaded from the server at least once. */
  get loaded(): boolean {
    return this._loaded;
  }

  /** The id of the current conversation, once one was started anew. */
  get conversationId(): string | null {
    return this._conversationId;
  }

  /**
   * Replace the durable history with the server's. A reply of an earlier
   * conversation than the shared document shows (loaded before a "New
   * conversation") is ignored: the reload it triggered brings the new one.
   */
  setHistory(reply: IConversationReply): void {
    const replied = reply.conversation?.id ?? null;
    if (this._conversationId !== null && replied !== this._conversationId) {
      return;
    }
    this._history = reply.messages.slice();
    for (const turn of reply.turns ?? []) {
      this._records.set(turn.id, turn);
    }
    this._loaded = true;
    if (!this._turn && reply.turn) {
      this._historyTurn = reply.turn;
    }
    this._changed.emit();
  }

  /** The turns to show, oldest first. */
  turns(): ITurnView[] {
    const current = this._turn ?? this._historyTurn;
    const liveId = this._live.length > 0 ? current?.id : undefined;
    const order: string[] = [];
    const byTurn = new Map<string, ConversationEntry[]>();
    const add = (turnId: string, entry: ConversationEntry) => {
      let list = byTurn.get(turnId);
      if (!list) {
        list = [];
        byTurn.set(turnId, list);
        order.push(turnId);
      }
      list.push(entry);
    };
    for (const message of this._history) {
      if (message.turn_id !== liveId) {
        add(message.turn_id, entryOf(message));
      }
    }
    if (liveId) {
      for (const entry of this._live) {
        add(liveId, entry);
      }
    } else if (current && !byTurn.has(current.id) && isActive(current)) {
      // A turn that started but has no entry yet.
      byTurn.set(current.id, []);
      order.push(current.id);
    }
    return order.map(turnId => ({
      turnId,
      entries: byTurn.get(turnId) ?? [],
      turn:
        current && current.id === turnId ? current : this._records.get(turnId)
    }));
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._map.unobserveDeep(this._onChange);
    Signal.clearData(this);
  }

  private _onChange = (): void => {
    this._read();
    this._changed.emit();
  };

  private _read(): void {
    const turn = plain<IAgentTurn>(this._map.get('turn')) ?? null;
    const live = plain<ConversationEntry[]>(this._map.get('live')) ?? [];
    const started =
      plain<IConversationStart>(this._map.get('conversation'))?.id ?? null;
    const renewed = this._readOnce && started !== this._conversationId;
    this._readOnce = true;
    this._conversationId = started;
    const previous = this._turn;
    if (renewed) {
      // A new conversation: nothing of the old one is kept, not even archived.
      this._history = [];
      this._records.clear();
      this._historyTurn = null;
    } else if (previous && turn?.id !== previous.id) {
      this._archive(previous.id);
      this._records.set(previous.id, previous);
    }
    this._turn = turn;
    this._approval = plain<IApprovalRequest>(this._map.get('approval')) ?? null;
    this._live = live;
    if (turn) {
      this._historyTurn = null;
    }
    if (renewed) {
      this._turnChanged.emit(turn);
    } else if (turn && previous && turn.id !== previous.id) {
      this._turnChanged.emit(turn);
    }
  }

  /**
   * Keep the entries of a turn that left the live map until the history is
   * reloaded, unless the history has them already.
   */
  private _archive(turnId: string): void {
    if (
      this._live.length === 0 ||
      this._history.some(message => message.turn_id === turnId)
    ) {
      return;
    }
    for (const entry of this._live) {
      this._history.push(messageOf(turnId, entry));
    }
  }

  private _map: Y.Map<unknown>;
  private _turn: IAgentTurn | null = null;
  private _historyTurn: IAgentTurn | null = null;
  private _approval: IApprovalRequest | null = null;
  private _live: ConversationEntry[] = [];
  private _history: IConversationMessage[] = [];
  private _records = new Map<string, IAgentTurn>();
  private _conversationId: string | null = null;
  private _readOnce = false;
  private _loaded = false;
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
  private _turnChanged = new Signal<this, IAgentTurn | null>(this);
}

/** A live entry as a durable message (kept until the history is reloaded). */
function messageOf(
  turnId: string,
  entry: ConversationEntry
): IConversationMessage {
  switch (entry.kind) {
    case 'tool':
      return {
        id: entry.id,
        turn_id: turnId,
        role: 'tool',
        text: entry.summary,
        tool: {
          name: entry.name,
          summary: entry.summary,
          detail: entry.detail,
          ok: entry.ok
        }
      };
    case 'thought':
      return {
        id: entry.id,
        turn_id: turnId,
        role: 'thought',
        text: entry.text
      };
    case 'notice':
      return {
        id: entry.id,
        turn_id: turnId,
        role: 'notice',
        text: entry.text,
        level: entry.level
      };
    case 'user':
      return {
        id: entry.id,
        turn_id: turnId,
        role: 'user',
        text: entry.text,
        by: entry.by
      };
    default:
      return {
        id: entry.id,
        turn_id: turnId,
        role: 'assistant',
        text: entry.text
      };
  }
}
