/**
 * The plugins' tokens: what one plugin provides and others require.
 *
 * Only plugins import this module. It names the classes behind the tokens
 * (type imports), so a class importing it back would close a circle; the
 * payloads every module shares live in `payloads.ts`, which imports nothing
 * of ours.
 */

import { Token } from '@lumino/coreutils';

import type { AgentService } from './agent/service';
import type { CompletionUsage } from './completion/usage';

/**
 * The AI agent's front end: models, settings, connection, and one session
 * (conversation, proposals, actions) per open notebook.
 */
export const IAgentService = new Token<AgentService>(
  'jupyter-loop:IAgentService',
  'The AI agent of jupyter-loop: sessions of open notebooks and their actions.'
);

/**
 * What inline completions cost on this server (requests, tokens, failures),
 * shown in the assistant's panel.
 */
export const ICompletionUsage = new Token<CompletionUsage>(
  'jupyter-loop:ICompletionUsage',
  'The inline completions’ usage counters of the jupyter-loop server.'
);
