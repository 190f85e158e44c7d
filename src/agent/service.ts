import type { ISharedNotebook } from '@jupyter/ydoc';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { IAgentClient, IAgentListing, IModelsReply } from '../payloads';
import { describeError, isConnectionError } from './errors';
import { IAgentHost, IAgentNotebook } from './host';
import { AgentSession } from './session';
import { DEFAULT_SETTINGS, IAgentSettings } from './settings';

/** Whether the panel can reach the server. */
export type ConnectionState = 'connected' | 'lost';

/** Tells the user about a failure (a JupyterLab notification in the app). */
export type Notify = (message: string, level: 'error' | 'warning') => void;

/**
 * The agent front end's shared state: the server's models, the settings, the
 * connection, and one {@link AgentSession} per open notebook.
 */
export class AgentService implements IDisposable, IAgentHost {
  constructor(options: AgentService.IOptions) {
    this.client = options.client;
    this._notify = options.notify ?? (() => undefined);
    this._delays = options.reconnectDelays ?? [1000, 2000, 4000, 8000, 15000];
  }

  readonly client: IAgentClient;

  /** Models, settings or the connection changed. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** The server can be reached again after a loss. */
  get reconnected(): ISignal<this, void> {
    return this._reconnected;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  get settings(): IAgentSettings {
    return this._settings;
  }

  /** The server's models and provider status, once known. */
  get models(): IModelsReply | null {
    return this._models;
  }

  /** Why the model list could not be loaded, if it could not. */
  get modelsError(): string | null {
    return this._modelsError;
  }

  get connection(): ConnectionState {
    return this._connection;
  }

  /** Who this browser's user is on the server (for "You" in the conversation). */
  setIdentity(identity: { username?: string; name?: string } | null): void {
    this._identity = identity;
    this._changed.emit();
  }

  /**
   * A user name as the conversation shows it: "You" for this user, '' when
   * it says nothing (anonymous users of a server without accounts are random
   * hex ids).
   */
  displayName(name: string | null | undefined): string {
    if (!name || /^[0-9a-f]{32}$/.test(name)) {
      return '';
    }
    const me = this._identity;
    if (me && (name === me.username || name === me.name)) {
      return 'You';
    }
    return name;
  }

  /** The agents the server offers (the assistant first), once known. */
  get agents(): IAgentListing[] {
    return this._agents;
  }

  /** The agent new turns go to: `builtin` (the assistant) or an ACP agent's name. */
  get agent(): string {
    return this._agent;
  }

  /** Pick the agent for new turns (kept for this page only). */
  chooseAgent(name: string): void {
    this._agent = name;
    this._changed.emit();
  }

  /** The model new turns use: the chosen one, else the server's default. */
  get model(): string {
    return this._settings.model || this._models?.default_model || '';
  }

  /** Apply settings (from the settings registry). */
  setSettings(settings: Partial<IAgentSettings>): void {
    const next = { ...this._settings, ...settings };
    const providerChanged = next.provider !== this._settings.provider;
    this._settings = next;
    this._changed.emit();
    if (providerChanged) {
      void this.refreshModels();
    }
  }

  /** Pick the model for new turns; `persist` saves it to the settings. */
  chooseModel(model: string): void {
    this.setSettings({ model });
    void this._persistModel?.(model);
  }

  /** How the chosen model is saved (the settings registry, in the app). */
  set persistModel(persist: ((model: string) => Promise<void>) | null) {
    this._persistModel = persist;
  }

  /** Load the model list and whether a provider is configured. */
  async refreshModels(): Promise<void> {
    try {
      this._models = await this.client.models(
        this._settings.provider || undefined
      );
      this._modelsError = null;
      this._setConnection('connected');
    } catch (error) {
      this._modelsError = describeError(error);
      if (isConnectionError(error)) {
        this._lost();
      }
    }
    this._changed.emit();
  }

  /** Load the agents the server offers (`GET agents`). */
  async refreshAgents(): Promise<void> {
    try {
      this._agents = (await this.client.agents?.())?.agents ?? [];
    } catch {
      this._agents = []; // an older server, or no right to see them: the assistant only
    }
    this._changed.emit();
  }

  /**
   * Report a failed call: a lost connection starts reconnecting, anything else
   * is shown to the user. Returns the message in plain words.
   */
  report(error: unknown, action: string): string {
    const message = describeError(error);
    if (isConnectionError(error)) {
      this._lost();
      this._notify(`${action}: ${message}`, 'warning');
    } else {
      this._notify(`${action}: ${message}`, 'error');
    }
    return message;
  }

  /** The session of a notebook, made on first use and disposed with its model. */
  sessionFor(notebook: IAgentNotebook): AgentSession {
    let session = this._sessions.get(notebook.sharedModel);
    if (!session || session.isDisposed) {
      const made = new AgentSession({ service: this, notebook });
      notebook.sharedModel.disposed.connect(() => {
        made.dispose();
        this._sessions.delete(notebook.sharedModel);
      });
      this._sessions.set(notebook.sharedModel, made);
      session = made;
    }
    return session;
  }

  /** The session of a notebook if one was made. */
  findSession(sharedModel: ISharedNotebook): AgentSession | undefined {
    const session = this._sessions.get(sharedModel);
    return session && !session.isDisposed ? session : undefined;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    if (this._timer !== null) {
      clearTimeout(this._timer);
    }
    Signal.clearData(this);
  }

  private _lost(): void {
    this._setConnection('lost');
    if (this._timer === null) {
      this._scheduleReconnect(0);
    }
  }

  private _scheduleReconnect(attempt: number): void {
    const delay = this._delays[Math.min(attempt, this._delays.length - 1)];
    this._timer = setTimeout(async () => {
      this._timer = null;
      if (this._isDisposed) {
        return;
      }
      try {
        this._models = await this.client.models(
          this._settings.provider || undefined
        );
        this._modelsError = null;
        this._setConnection('connected');
        this._changed.emit();
      } catch (error) {
        if (isConnectionError(error)) {
          this._scheduleReconnect(attempt + 1);
        } else {
          // The server answers: the connection is back even if this call failed.
          this._modelsError = describeError(error);
          this._setConnection('connected');
          this._changed.emit();
        }
      }
    }, delay);
  }

  private _setConnection(state: ConnectionState): void {
    if (state === this._connection) {
      return;
    }
    this._connection = state;
    this._changed.emit();
    if (state === 'connected') {
      this._reconnected.emit();
    }
  }

  private _settings: IAgentSettings = { ...DEFAULT_SETTINGS };
  private _models: IModelsReply | null = null;
  private _agents: IAgentListing[] = [];
  private _agent = 'builtin';
  private _modelsError: string | null = null;
  private _connection: ConnectionState = 'connected';
  private _persistModel: ((model: string) => Promise<void>) | null = null;
  private _identity: { username?: string; name?: string } | null = null;
  private _notify: Notify;
  private _delays: number[];
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _sessions = new WeakMap<ISharedNotebook, AgentSession>();
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
  private _reconnected = new Signal<this, void>(this);
}

export namespace AgentService {
  export interface IOptions {
    client: IAgentClient;
    notify?: Notify;
    /** Milliseconds between reconnection attempts (the last repeats). */
    reconnectDelays?: number[];
  }
}
