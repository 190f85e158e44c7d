import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import * as React from 'react';

import { renumberCells } from '../agent/cellnumbers';
import {
  ConversationEntry,
  ITurnView,
  footerError
} from '../agent/conversation';
import { AgentSession } from '../agent/session';
import { IAgentTurn } from '../payloads';
import { formatTokens } from './hooks';
import { MarkdownBlock } from './markdown';
import { ProposalCard } from './proposalcard';

/** One line of a turn. */
export function EntryView(props: {
  entry: ConversationEntry;
  rendermime: IRenderMimeRegistry;
  /** A user name as shown ("You" for this user). */
  displayName: (name: string | undefined) => string;
  /** The 1-based position of a cell (0: gone). */
  position: (cellId: string) => number;
  onReveal?: (cellId: string) => void;
}): JSX.Element {
  const { entry } = props;
  switch (entry.kind) {
    case 'user':
      return (
        <div className="jp-Loop-Message jp-mod-user" data-entry-id={entry.id}>
          {!['', 'You'].includes(props.displayName(entry.by)) && (
            <span className="jp-Loop-Message-by">
              {props.displayName(entry.by)}
            </span>
          )}
          <div className="jp-Loop-Message-text">{entry.text}</div>
        </div>
      );
    case 'assistant':
      return (
        <div
          className="jp-Loop-Message jp-mod-assistant"
          data-entry-id={entry.id}
        >
          <MarkdownBlock text={entry.text} rendermime={props.rendermime} />
        </div>
      );
    case 'tool':
      return (
        <details
          className={`jp-Loop-ToolStep ${entry.ok === false ? 'jp-mod-failed' : ''}`}
          data-entry-id={entry.id}
          data-tool={entry.name}
        >
          <summary>
            <span className="jp-Loop-ToolStep-mark" aria-hidden="true">
              {entry.ok === false ? '✗' : '✓'}
            </span>
            {entry.summary
              ? renumberCells(
                  entry.summary,
                  entry.cell_ids ?? [],
                  props.position
                )
              : entry.name}
          </summary>
          <pre className="jp-Loop-ToolStep-detail">
            {entry.detail || `${entry.name}: no details`}
          </pre>
          {props.onReveal && (entry.cell_ids ?? []).length > 0 && (
            <div className="jp-Loop-ToolStep-cells">
              {(entry.cell_ids ?? [])
                .filter(id => props.position(id) > 0)
                .map(id => (
                  <button
                    key={id}
                    className="jp-Loop-Link"
                    onClick={() => props.onReveal?.(id)}
                    aria-label={`Show cell ${props.position(id)} in the notebook`}
                  >
                    cell {props.position(id)}
                  </button>
                ))}
            </div>
          )}
        </details>
      );
    case 'thought':
      // An agent's thinking: there if wanted, out of the way of what it says.
      return (
        <details className="jp-Loop-Thought" data-entry-id={entry.id}>
          <summary>Thought</summary>
          <div className="jp-Loop-Thought-text">{entry.text}</div>
        </details>
      );
    case 'notice':
      return (
        <div
          className={`jp-Loop-Notice jp-mod-${entry.level}`}
          role={entry.level === 'error' ? 'alert' : 'status'}
          data-entry-id={entry.id}
        >
          {entry.text}
        </div>
      );
  }
}

const STATE_TEXT: { [state: string]: string } = {
  running: 'Working…',
  waiting_approval: 'Waiting for your approval…',
  stopped: 'Stopped.',
  done: '',
  error: 'The turn ended with an error.'
};

/**
 * The state and token use of a turn, and its error when no notice of the turn
 * shows it already (`error`, see {@link footerError}).
 */
export function TurnFooter(props: {
  turn: IAgentTurn;
  error: string | null;
}): JSX.Element {
  const { turn, error } = props;
  const usage = turn.usage;
  const stateText = STATE_TEXT[turn.state] ?? turn.state;
  return (
    <footer className={`jp-Loop-Turn-footer jp-mod-${turn.state}`}>
      {stateText && (
        <span className="jp-Loop-Turn-state" role="status">
          {turn.state === 'running' && (
            <span className="jp-Loop-Spinner" aria-hidden="true" />
          )}
          {stateText}
        </span>
      )}
      {error && (
        <span className="jp-Loop-Turn-error" role="alert">
          {error}
        </span>
      )}
      {usage && (usage.input_tokens > 0 || usage.output_tokens > 0) && (
        <span
          className="jp-Loop-Turn-usage"
          title={`${usage.input_tokens} input tokens, ${usage.output_tokens} output tokens${
            turn.model ? ` (${turn.model})` : ''
          }`}
        >
          {formatTokens(usage.input_tokens)} in ·{' '}
          {formatTokens(usage.output_tokens)} out tokens
          {turn.model ? ` · ${turn.model}` : ''}
        </span>
      )}
    </footer>
  );
}

/** A turn: its entries, its proposals (with Accept all / Reject all) and its footer. */
export function TurnView(props: {
  session: AgentSession;
  view: ITurnView;
  rendermime: IRenderMimeRegistry;
  onReveal?: (cellId: string) => void;
}): JSX.Element {
  const { session, view } = props;
  const proposals = session.proposals.forTurn(view.turnId);
  const pending = proposals.filter(p => p.state === 'pending');
  const open = proposals.filter(
    p => p.state === 'pending' || p.state === 'stale'
  );
  return (
    <section
      className="jp-Loop-Turn"
      data-turn-id={view.turnId}
      aria-label="Turn"
    >
      {view.entries.map(entry => (
        <EntryView
          key={entry.id}
          entry={entry}
          rendermime={props.rendermime}
          displayName={name => session.service.displayName(name)}
          position={id => session.proposals.position(id)}
          onReveal={props.onReveal}
        />
      ))}
      {proposals.length > 0 && (
        <div className="jp-Loop-Proposals">
          {proposals.map(p => (
            <ProposalCard
              key={p.proposal.id}
              session={session}
              view={p}
              onReveal={props.onReveal}
            />
          ))}
          {open.length > 1 && (
            <div className="jp-Loop-Actions jp-Loop-Proposals-all">
              <button
                className="jp-Button jp-mod-styled jp-mod-accept jp-Loop-accept-all"
                disabled={pending.length === 0}
                onClick={() =>
                  void session.proposalActions.acceptAll(view.turnId)
                }
              >
                Accept all ({pending.length})
              </button>
              <button
                className="jp-Button jp-mod-styled jp-mod-reject jp-Loop-reject-all"
                onClick={() =>
                  void session.proposalActions.rejectAll(view.turnId)
                }
              >
                Reject all ({open.length})
              </button>
            </div>
          )}
        </div>
      )}
      {view.turn && <TurnFooter turn={view.turn} error={footerError(view)} />}
    </section>
  );
}
