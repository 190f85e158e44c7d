import * as React from 'react';

import { askerOf } from '../agent/asker';
import { AgentSession } from '../agent/session';
import { ApprovalDecision, IApprovalRequest } from '../payloads';

const CHOICES: { decision: ApprovalDecision; label: string; title: string }[] =
  [
    {
      decision: 'once',
      label: 'Allow once',
      title: 'Run these cells now; ask again next time'
    },
    {
      decision: 'turn',
      label: 'Allow for this turn',
      title: 'Run these and any other cells until this turn ends'
    },
    { decision: 'deny', label: 'Deny', title: 'Do not run them' }
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

/** The agent asks to run cells: which ones, their source, and the answers. */
export function ApprovalCard(props: {
  session: AgentSession;
  approval: IApprovalRequest;
  onReveal?: (cellId: string) => void;
}): JSX.Element {
  const { session, approval } = props;
  const count = approval.cell_ids.length;
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
