import * as React from 'react';

import { compactDiff, diffStats, lineDiff } from '../agent/diff';
import { IProposalView } from '../agent/proposals';
import { AgentSession } from '../agent/session';
import { IProposal } from '../payloads';

/** What a proposal does, in words: "Edit cell 3", "New code cell after cell 2". */
export function proposalLabel(
  proposal: IProposal,
  position: (cellId: string | null) => number
): string {
  const at = position(proposal.cell_id);
  const cell = at > 0 ? `cell ${at}` : 'a deleted cell';
  switch (proposal.kind) {
    case 'insert': {
      const type = proposal.cell_type === 'markdown' ? 'Markdown' : 'code';
      return proposal.cell_id === null
        ? `New ${type} cell at the top`
        : `New ${type} cell after ${cell}`;
    }
    case 'delete':
      return `Delete ${cell}`;
    case 'outputs':
      return `Restore outputs of ${cell}`;
    case 'version':
      return `Restore version ${proposal.version ?? '?'} of the notebook`;
    default:
      return `Edit ${cell}`;
  }
}

const STATE_TEXT: { [state: string]: string } = {
  pending: 'Proposed',
  stale: 'Out of date',
  accepted: 'Accepted',
  undone: 'Undone',
  rejected: 'Rejected'
};

/** The before and after of a proposal's cell. */
export function proposalTexts(proposal: IProposal): [string, string] {
  switch (proposal.kind) {
    case 'insert':
      return ['', proposal.new_source ?? ''];
    case 'delete':
      return [proposal.base_source ?? '', ''];
    case 'outputs':
    case 'version':
      return ['', ''];
    default:
      return [proposal.base_source ?? '', proposal.new_source ?? ''];
  }
}

/** A compact unified diff: changed lines with a little context. */
export function DiffLines(props: {
  before: string;
  after: string;
}): JSX.Element {
  const lines = React.useMemo(
    () => lineDiff(props.before, props.after),
    [props.before, props.after]
  );
  const stats = diffStats(lines);
  const shown = compactDiff(lines, 2);
  return (
    <pre
      className="jp-Loop-Diff"
      aria-label={`Changes: ${stats.added} lines added, ${stats.removed} removed`}
      tabIndex={0}
    >
      {shown.map((line, index) =>
        line.kind === 'gap' ? (
          <div key={index} className="jp-Loop-DiffLine jp-mod-gap">
            {`⋯ ${line.lines} unchanged line${line.lines === 1 ? '' : 's'}`}
          </div>
        ) : (
          <div key={index} className={`jp-Loop-DiffLine jp-mod-${line.kind}`}>
            <span className="jp-Loop-DiffLine-sign" aria-hidden="true">
              {line.kind === 'add' ? '+' : line.kind === 'del' ? '−' : ' '}
            </span>
            {line.text || ' '}
          </div>
        )
      )}
    </pre>
  );
}

/**
 * A proposal in the panel: what it changes, its diff, and Accept / Reject, or
 * why it is out of date with a way to regenerate it.
 */
export function ProposalCard(props: {
  session: AgentSession;
  view: IProposalView;
  onReveal?: (cellId: string) => void;
}): JSX.Element {
  const { session, view } = props;
  const { proposal, state } = view;
  const label = proposalLabel(proposal, id => session.proposals.position(id));
  const [before, after] = proposalTexts(proposal);
  const busy = session.isPending(proposal.id);
  const revealId =
    proposal.kind === 'insert' && proposal.status === 'accepted'
      ? proposal.new_cell_id
      : proposal.cell_id;
  return (
    <article
      className={`jp-Loop-Proposal jp-mod-${state}`}
      data-proposal-id={proposal.id}
      data-kind={proposal.kind}
      aria-label={`${label}: ${STATE_TEXT[state]}`}
    >
      <header className="jp-Loop-Proposal-header">
        <span className="jp-Loop-Proposal-label">{label}</span>
        <span className={`jp-Loop-Badge jp-mod-${state}`}>
          {STATE_TEXT[state]}
        </span>
      </header>
      {proposal.summary && (
        <p className="jp-Loop-Proposal-summary">{proposal.summary}</p>
      )}
      <DiffLines before={before} after={after} />
      {state === 'stale' && (
        <p className="jp-Loop-Proposal-stale" role="status">
          {view.reason} It can no longer be applied as it is.
        </p>
      )}
      {(state === 'pending' || state === 'stale') && (
        <div className="jp-Loop-Actions">
          {state === 'pending' ? (
            <button
              className="jp-Button jp-mod-styled jp-mod-accept jp-Loop-accept"
              disabled={busy}
              onClick={() => void session.proposalActions.accept(proposal.id)}
              aria-label={`Accept: ${label}`}
            >
              Accept
            </button>
          ) : (
            <button
              className="jp-Button jp-mod-styled jp-mod-accept jp-Loop-regenerate"
              disabled={busy || session.conversation.isBusy}
              onClick={() =>
                void session.proposalActions.regenerate(proposal.id)
              }
              aria-label={`Regenerate: ${label}`}
              title="Ask the assistant to propose it again for the cell as it is now"
            >
              Regenerate
            </button>
          )}
          <button
            className="jp-Button jp-mod-styled jp-mod-reject jp-Loop-reject"
            disabled={busy}
            onClick={() => void session.proposalActions.reject(proposal.id)}
            aria-label={`Reject: ${label}`}
          >
            Reject
          </button>
          {props.onReveal && revealId && (
            <button
              className="jp-Button jp-mod-styled jp-Loop-reveal"
              onClick={() => props.onReveal?.(revealId)}
              aria-label={`Show ${label} in the notebook`}
            >
              Show
            </button>
          )}
        </div>
      )}
      {(state === 'accepted' || state === 'rejected') && (
        <p className="jp-Loop-Proposal-resolved">
          {resolvedText(
            state,
            session.service.displayName(proposal.resolved_by)
          )}
        </p>
      )}
      {state === 'undone' && (
        <p className="jp-Loop-Proposal-resolved jp-mod-undone" role="status">
          {resolvedText(
            'accepted',
            session.service.displayName(proposal.resolved_by)
          ).replace(/\.$/, ', then undone in the notebook.')}{' '}
          {view.reason}
        </p>
      )}
    </article>
  );
}

/** "Accepted by you", "Rejected by ada", or just "Accepted". */
function resolvedText(state: string, by: string): string {
  const done = STATE_TEXT[state];
  if (!by) {
    return `${done}.`;
  }
  return `${done} by ${by === 'You' ? 'you' : by}.`;
}
