import type { PendingActions } from './pending';
import { ProposalModel, StaleProposalError } from './proposals';
import type { IAgentHost } from './host';

/**
 * A user's answers to the assistant's proposals in one notebook: accept
 * (exactly once, whichever tab asks first), reject, all of a turn's at once,
 * and regenerate a stale one. Each is a REST call; what it changes shows in
 * the shared document ({@link ProposalModel}).
 */
export class ProposalActions {
  constructor(options: ProposalActions.IOptions) {
    this._options = options;
  }

  /**
   * Accept a proposal exactly once: ask the server for the claim (one tab at a
   * time gets it), then apply it in this tab's notebook (so undo reverts it) and
   * mark it accepted in the same transaction (docs/agent.md).
   */
  async accept(proposalId: string): Promise<boolean> {
    const { proposals, service, pending } = this._options;
    const view = proposals.get(proposalId);
    if (view?.state !== 'pending') {
      const reason = view?.reason ?? `The proposal was already ${view?.state}.`;
      service.report(
        new StaleProposalError(view ? reason : 'The proposal is gone.'),
        'The proposal cannot be accepted'
      );
      return false;
    }
    const asked = Date.now();
    const claim = await pending.run(
      proposalId,
      'The proposal could not be accepted',
      () => service.client.claimProposal(this._options.path(), proposalId)
    );
    if (claim === undefined) {
      return false;
    }
    try {
      if (Date.now() - asked >= claim.expires_in * 1000) {
        throw new StaleProposalError(
          'The claim lapsed before it could be used.'
        );
      }
      proposals.apply(proposalId, claim);
    } catch (error) {
      if (error instanceof StaleProposalError) {
        service.report(error, 'The proposal cannot be accepted');
        return false;
      }
      throw error;
    }
    return true;
  }

  /** Reject a proposal; the notebook is left as it is. */
  async reject(proposalId: string): Promise<boolean> {
    const { service, pending } = this._options;
    if (pending.has(proposalId)) {
      return false;
    }
    const done = await pending.run(
      proposalId,
      'The proposal could not be rejected',
      async () => {
        await service.client.rejectProposal(this._options.path(), proposalId);
        return true;
      }
    );
    return done === true;
  }

  /** Accept every pending (not stale) proposal of a turn, in order. */
  async acceptAll(turnId: string): Promise<void> {
    for (const view of this._options.proposals.forTurn(turnId)) {
      if (view.state === 'pending' && !(await this.accept(view.proposal.id))) {
        break;
      }
    }
  }

  /** Reject every open proposal of a turn. */
  async rejectAll(turnId: string): Promise<void> {
    for (const view of this._options.proposals.forTurn(turnId)) {
      if (view.state === 'pending' || view.state === 'stale') {
        await this.reject(view.proposal.id);
      }
    }
  }

  /**
   * Replace a stale proposal: reject it and ask the agent to propose the edit
   * again against the cell as it is now.
   */
  async regenerate(proposalId: string): Promise<boolean> {
    const { proposals, isBusy, focus, ask } = this._options;
    const view = proposals.get(proposalId);
    if (!view || isBusy()) {
      return false;
    }
    const { proposal } = view;
    if (proposal.status === 'pending' && !(await this.reject(proposal.id))) {
      return false;
    }
    const target = proposal.cell_id;
    const position = proposals.position(target);
    const where = position > 0 ? `cell ${position}` : 'the notebook';
    const what = proposal.summary ? ` ("${proposal.summary}")` : '';
    const message =
      `Your proposed ${proposal.kind} for ${where}${what} no longer fits: ` +
      'the notebook changed since. Look at the current source and propose it again.';
    if (target && position > 0) {
      focus([target]);
    }
    return ask(message);
  }

  private _options: ProposalActions.IOptions;
}

export namespace ProposalActions {
  export interface IOptions {
    service: IAgentHost;
    proposals: ProposalModel;
    /** The session's actions in flight, shared with its other actions. */
    pending: PendingActions;
    /** The notebook's path on the server (it changes when the file is renamed). */
    path: () => string;
    /** Whether a turn runs (no regenerating then). */
    isBusy: () => boolean;
    /** Put cells in focus for the next message. */
    focus: (cellIds: ReadonlyArray<string>) => void;
    /** Send a message to the agent, as the user would. */
    ask: (message: string) => Promise<boolean>;
  }
}
