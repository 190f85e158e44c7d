/**
 * What a notebook's session asks of the agent service that made it: the
 * client, the settings and chosen agent/model, failure reports, reconnection.
 *
 * The service makes the sessions, so the sessions see it through this
 * interface rather than import its class (which would close an import circle).
 */

import type { ISharedNotebook } from '@jupyter/ydoc';
import type { ISignal } from '@lumino/signaling';
import type * as Y from 'yjs';

import { IAgentClient } from '../payloads';
import { IAgentSettings } from './settings';

/** A notebook as the agent needs it: its shared model and where it lives. */
export interface IAgentNotebook {
  sharedModel: ISharedNotebook & { ydoc: Y.Doc };
  /** The notebook's path on the server, as the REST API takes it. */
  path: () => string;
}

/** The agent service as its sessions see it (`AgentService` implements it). */
export interface IAgentHost {
  readonly client: IAgentClient;
  readonly settings: IAgentSettings;
  /** The model new turns use: the chosen one, else the server's default. */
  readonly model: string;
  /** The agent new turns go to: `builtin` or an ACP agent's name. */
  readonly agent: string;
  /** The server can be reached again after a loss. */
  readonly reconnected: ISignal<unknown, void>;
  /** Report a failed call; returns the message in plain words. */
  report(error: unknown, action: string): string;
  /** A user name as the conversation shows it ("You" for this user). */
  displayName(name: string | null | undefined): string;
}
