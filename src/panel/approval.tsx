import * as React from 'react';

import { askerOf } from '../agent/asker';
import { AgentSession } from '../agent/session';
import { ApprovalDecision, IApprovalRequest } from '../payloads';

const CHOICES: { decision: ApprovalDecision; label: string; title: string }[] =
  [
    {
      decision: 'once',
      label: 'Allow once',
      title: 'Allow it now; ask again next time'
    },
    {
      decision: 'turn',
      label: 'Allow for this turn',
      title: 'Allow it and what else this turn asks, until the turn ends'
    },
    { decision: 'deny', label: 'Deny', title: 'Do not allow it' }
  ];

/** Allow once / Allow for this turn / Deny, answered from any tab. */
export function ApprovalButtons(props: {
  session: AgentSession;
  approval: IApprovalRequest;
}): JSX.Element {
  const { session, approval } = props;
  const busy = session.isPending(approval.id);
  return (
    <div className="jp-Loop-Actions" role="group" aria-label="Answer">
      {CHOICES.map(choice => (
        <button
          key={choice.decision}
          className={`jp-Button jp-mod-styled jp-Loop-approve-${choice.decision} ${
            choice.decision === 'deny' ? 'jp-mod-reject' : 'jp-mod-accept'
          }`}
          disabled={busy}
          title={choice.title}
          onClick={() => void session.answer(choice.decision)}
        >
          {choice.label}
        </button>
      ))}
    </div>
  );
}

/**
 * An ACP agent's own permission request (`session/request_permission`): it names no
 * cell, so the card shows the agent's words (what it asks to do, its options). Rejected:
 * the cells card for it, which said "The assistant wants to run 0 cells" and nothing of
 * what the agent asked.
 */
function PermissionCard(props: {
  session: AgentSession;
  approval: IApprovalRequest;
}): JSX.Element {
  const { session, approval } = props;
  const asker = askerOf(approval);
  return (
    <section
      className="jp-Loop-Approval jp-mod-permission"
      role="group"
      aria-label={`${asker} asks permission`}
    >
      <p className="jp-Loop-Approval-title">{asker} asks permission:</p>
      {Object.entries(approval.sources).map(([callId, words]) => (
        <pre key={callId} className="jp-Loop-Approval-source">
          {words}
        </pre>
      ))}
      <ApprovalButtons session={session} approval={approval} />
    </section>
  );
}

/** The agent asks to run cells: which ones, their source, and the answers. */
export function ApprovalCard(props: {
  session: AgentSession;
  approval: IApprovalRequest;
  onReveal?: (cellId: string) => void;
}): JSX.Element {
  const { session, approval } = props;
  const count = approval.cell_ids.length;
  if (count === 0) {
    return <PermissionCard session={session} approval={approval} />;
  }
  const asker = askerOf(approval);
  return (
    <section
      className="jp-Loop-Approval"
      role="group"
      aria-label={`${asker} asks to run cells`}
    >
      <p className="jp-Loop-Approval-title">
        {asker} wants to run {count === 1 ? 'a cell' : `${count} cells`}:
      </p>
      <ul className="jp-Loop-Approval-cells">
        {approval.cell_ids.map(cellId => {
          const at = session.proposals.position(cellId);
          return (
            <li key={cellId}>
              <button
                className="jp-Loop-Link"
                onClick={() => props.onReveal?.(cellId)}
                aria-label={`Show cell ${at} in the notebook`}
              >
                {at > 0 ? `cell ${at}` : 'a deleted cell'}
              </button>
              {/* What the request shows is what an answer allows to run. */}
              <pre className="jp-Loop-Approval-source">
                {approval.sources[cellId] ?? ''}
              </pre>
            </li>
          );
        })}
      </ul>
      <ApprovalButtons session={session} approval={approval} />
    </section>
  );
}
