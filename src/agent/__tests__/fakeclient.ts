import { ServerConnection } from '@jupyterlab/services';

import {
  ApprovalDecision,
  IAgentClient,
  IAgentsReply,
  IClaimReply,
  IConversationReply,
  IJournalReply,
  IModelsReply,
  INewConversationReply,
  ITurnRequest,
  ITurnStarted
} from '../../payloads';

/** A REST failure as `requestAPI` raises it. */
export function responseError(
  status: number,
  message: string
): ServerConnection.ResponseError {
  return new ServerConnection.ResponseError(
    new Response(JSON.stringify({ message }), { status }),
    message
  );
}

/** The agent's REST API in memory: records calls, answers or fails as told. */
export class FakeAgentClient implements IAgentClient {
  calls: { name: string; args: unknown[] }[] = [];
  conversationReply: IConversationReply = {
    file_id: 'f1',
    messages: [],
    turn: null
  };
  modelsReply: IModelsReply = {
    provider: 'openai',
    configured: true,
    default_model: 'scripted-tools',
    models: ['scripted-tools', 'scripted-plain'],
    hint: null
  };
  agentsReply: IAgentsReply = {
    agents: [
      {
        name: 'builtin',
        kind: 'builtin',
        label: 'Assistant',
        available: true,
        why_not: null
      }
    ]
  };
  /** Errors to throw, by call name, first in first out. */
  failures = new Map<string, unknown[]>();
  /** Runs when a claim is asked for (e.g. to look at the fake server). */
  onClaim: ((id: string) => void) | null = null;

  fail(name: string, ...errors: unknown[]): void {
    this.failures.set(name, [...(this.failures.get(name) ?? []), ...errors]);
  }

  names(): string[] {
    return this.calls.map(call => call.name);
  }

  private async _call<T>(
    name: string,
    args: unknown[],
    reply: () => T
  ): Promise<T> {
    this.calls.push({ name, args });
    const queued = this.failures.get(name);
    if (queued && queued.length > 0) {
      throw queued.shift();
    }
    return reply();
  }

  agents(): Promise<IAgentsReply> {
    return this._call('agents', [], () => this.agentsReply);
  }

  models(provider?: string): Promise<IModelsReply> {
    return this._call('models', [provider], () => this.modelsReply);
  }

  conversation(path: string): Promise<IConversationReply> {
    return this._call('conversation', [path], () => this.conversationReply);
  }

  newConversation(path: string): Promise<INewConversationReply> {
    return this._call('newConversation', [path], () => ({
      conversation: {
        id: 'c-new',
        started_at: '2025-01-02T00:00:00Z',
        by: 'ada'
      }
    }));
  }

  startTurn(request: ITurnRequest): Promise<ITurnStarted> {
    return this._call('startTurn', [request], () => ({ turn_id: 't-new' }));
  }

  stopTurn(path: string, turnId: string): Promise<void> {
    return this._call('stopTurn', [path, turnId], () => undefined);
  }

  answerApproval(
    path: string,
    approvalId: string,
    decision: ApprovalDecision,
    sourceHashes: { [cellId: string]: string }
  ): Promise<void> {
    return this._call(
      'answerApproval',
      [path, approvalId, decision, sourceHashes],
      () => undefined
    );
  }

  claimProposal(path: string, proposalId: string): Promise<IClaimReply> {
    return this._call('claimProposal', [path, proposalId], () => {
      this.onClaim?.(proposalId);
      return { claim: `claim-${proposalId}`, by: 'ada', expires_in: 30 };
    });
  }

  rejectProposal(path: string, proposalId: string): Promise<void> {
    return this._call('rejectProposal', [path, proposalId], () => undefined);
  }

  journal(path: string): Promise<IJournalReply> {
    return this._call('journal', [path], () => ({ entries: [] }));
  }
}
