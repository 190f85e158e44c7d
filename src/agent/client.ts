import { URLExt } from '@jupyterlab/coreutils';

import { postJSON, requestAPI } from '../request';
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
} from '../payloads';

/** The agent's REST calls under `/api/jupyter-loop/agent/` (docs/agent.md). */
export class AgentClient implements IAgentClient {
  models(provider?: string): Promise<IModelsReply> {
    const query = provider ? URLExt.objectToQueryString({ provider }) : '';
    return requestAPI<IModelsReply>('agent/models' + query);
  }

  agents(): Promise<IAgentsReply> {
    return requestAPI<IAgentsReply>('agents');
  }

  conversation(path: string): Promise<IConversationReply> {
    return requestAPI<IConversationReply>(
      'agent/conversation' + URLExt.objectToQueryString({ path })
    );
  }

  newConversation(path: string): Promise<INewConversationReply> {
    return requestAPI<INewConversationReply>(
      'agent/conversations',
      postJSON({ path })
    );
  }

  startTurn(request: ITurnRequest): Promise<ITurnStarted> {
    return requestAPI<ITurnStarted>('agent/turns', postJSON(request));
  }

  async stopTurn(path: string, turnId: string): Promise<void> {
    await requestAPI<{ stopped: boolean }>(
      `agent/turns/${encodeURIComponent(turnId)}/stop`,
      postJSON({ path })
    );
  }

  async answerApproval(
    path: string,
    approvalId: string,
    decision: ApprovalDecision,
    sourceHashes: { [cellId: string]: string }
  ): Promise<void> {
    await requestAPI<{ decision: ApprovalDecision }>(
      `agent/approvals/${encodeURIComponent(approvalId)}`,
      postJSON({ path, decision, source_hashes: sourceHashes })
    );
  }

  claimProposal(path: string, proposalId: string): Promise<IClaimReply> {
    return requestAPI<IClaimReply>(
      `agent/proposals/${encodeURIComponent(proposalId)}/claim`,
      postJSON({ path })
    );
  }

  async rejectProposal(path: string, proposalId: string): Promise<void> {
    await requestAPI<{ status: string }>(
      `agent/proposals/${encodeURIComponent(proposalId)}/reject`,
      postJSON({ path })
    );
  }

  journal(path: string): Promise<IJournalReply> {
    return requestAPI<IJournalReply>(
      'agent/journal' + URLExt.objectToQueryString({ path })
    );
  }
}
