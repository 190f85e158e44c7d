/**
 * Payloads of the jupyter-loop REST API and shared document, mirroring
 * `jupyter_loop/execution/payloads.py` and (every shared-document record)
 * `jupyter_loop/records.py`.
 */

/** Name of the map beside the cells where the server marks runs. */
export const EXECUTION_BOARD = 'jupyter_loop:execution';

/**
 * Name of the map where the server notes each new life of the notebook's
 * kernel (`execution/kernel/notices.py`): the stale marks are asked for again.
 */
export const KERNEL_LIFE = 'jupyter_loop:kernel_life';

/** What `POST runs` (or a frame of the runs socket) asks the server to run. */
export interface IRunRequest {
  path: string;
  cell_ids: string[];
  kernel_id?: string;
  record_timing?: boolean;
  /** What the request says of itself, for the run history (a label, not a right). */
  started_from?: 'run_all' | 'terminal';
  /**
   * The source this tab shows for each cell: its last keystrokes may reach the
   * server after the request, which waits for them (`execution/tab_sources.py`).
   */
  sources?: Record<string, string>;
}

export interface IQueuedCell {
  cell_id: string;
  run_id: string;
  state: 'queued' | 'done';
}

export interface IRunTicket {
  path: string;
  kernel_id: string;
  cells: IQueuedCell[];
}

export type RunStatus = 'ok' | 'error' | 'aborted' | 'cut_off';

/**
 * The cell a person's tab has active and the cells selected with it, in the
 * notebook's awareness under {@link FOCUS_FIELD}: outside agents read it.
 */
export interface ICellFocus {
  cell_id: string | null;
  selected_cell_ids?: string[];
}

/** The awareness field of {@link ICellFocus}. */
export const FOCUS_FIELD = 'jupyter_loop_focus';

/**
 * What an agent is doing in the notebook (the server publishes it in the
 * notebook's awareness under {@link AGENT_FIELD}, its name in the state's `user`).
 */
export interface IAgentAtWork {
  cell_id: string | null;
  action: string;
}

/** The awareness field of {@link IAgentAtWork}. */
export const AGENT_FIELD = 'jupyter_loop_agent';

/** A pending `input()` prompt of a running cell. */
export interface IInputRequest {
  request_id: string;
  prompt: string;
  password: boolean;
}

/** The server's marker for a cell, keyed by cell id in {@link EXECUTION_BOARD}. */
export interface ICellMarker {
  state: 'queued' | 'running' | 'done';
  run_id: string;
  kernel_id?: string;
  by?: string;
  status?: RunStatus;
  note?: string;
  input?: IInputRequest;
}

export interface IInputReply {
  path: string;
  cell_id: string;
  request_id: string;
  value: string;
}

/*
 * The agent: REST payloads and the shared-document maps of docs/agent.md,
 * mirroring `jupyter_loop/agent/payloads.py`.
 */

/** The map beside the cells holding the current turn, its live entries and a pending approval. */
export const AGENT_MAP = 'jupyter_loop:agent';

/** The map beside the cells holding the agent's proposals, keyed by proposal id. */
export const PROPOSALS_MAP = 'jupyter_loop:proposals';

export type TurnState =
  'running' | 'waiting_approval' | 'done' | 'stopped' | 'error';

/** `ask` (default), `turn` (allowed for the rest of the turn once approved), `always`, `never`. */
export type ApprovalPolicy = 'ask' | 'turn' | 'always' | 'never';

/** An answer to an approval: allow once, allow for the rest of the turn, or deny. */
export type ApprovalDecision = 'once' | 'turn' | 'deny';

export interface ITokenUsage {
  input_tokens: number;
  output_tokens: number;
}

/** The current or last turn of a notebook (`turn` in {@link AGENT_MAP}). */
export interface IAgentTurn {
  id: string;
  state: TurnState;
  model: string;
  provider: string;
  started_by?: string;
  started_at: string | number;
  ended_at?: string | number | null;
  error?: string | null;
  usage?: ITokenUsage | null;
  steps?: number;
  /** The turn's approval policy. */
  approval?: ApprovalPolicy;
}

/** The user's message that started the turn (an entry of `live`). */
export interface ILiveUserEntry {
  id: string;
  kind: 'user';
  text: string;
  by?: string;
}

/** Text the model streams (an entry of `live`; a Y.Text in the document). */
export interface ILiveAssistantEntry {
  id: string;
  kind: 'assistant';
  text: string;
}

/** A tool call of the turn (an entry of `live`). */
export interface ILiveToolEntry {
  id: string;
  kind: 'tool';
  name: string;
  summary: string;
  detail?: string;
  ok?: boolean;
  /** The cells the call was about. */
  cell_ids?: string[];
}

/** What an ACP agent thought aloud, whole (an entry of `live`): shown collapsed. */
export interface ILiveThoughtEntry {
  id: string;
  kind: 'thought';
  text: string;
}

/** A notice to the user (an entry of `live`). */
export interface ILiveNoticeEntry {
  id: string;
  kind: 'notice';
  text: string;
  level: 'info' | 'error';
}

/** An entry of the current turn (`live` in {@link AGENT_MAP}), as plain data. */
export type ILiveEntry =
  | ILiveUserEntry
  | ILiveAssistantEntry
  | ILiveToolEntry
  | ILiveThoughtEntry
  | ILiveNoticeEntry;

/** The agent waits for permission to run cells (`approval` in {@link AGENT_MAP}). */
export interface IApprovalRequest {
  id: string;
  turn_id: string;
  cell_ids: string[];
  sources: { [cellId: string]: string };
  /** A hash of each source as shown; the answer sends them back (only those run). */
  source_hashes: { [cellId: string]: string };
  requested_at?: string | number;
  /**
   * An external client (MCP, the terminal) or an ACP agent asked, not the built-in
   * assistant's turn. An ACP agent's permission request names no cell: its words are
   * the values of `sources` (keyed by its tool call).
   */
  requested_by?: string;
}

/** `outputs`: outputs put back from the History view (never an agent's). */
export type ProposalKind =
  'insert' | 'modify' | 'delete' | 'outputs' | 'version';

/** `undone`: accepted outputs put back as they were (only `outputs` proposals). */
export type ProposalStatus = 'pending' | 'accepted' | 'rejected' | 'undone';

/** A proposed cell edit, a value of {@link PROPOSALS_MAP}. */
export interface IProposal {
  id: string;
  turn_id: string;
  kind: ProposalKind;
  /** modify/delete: the target; insert: the cell to insert after (null: at the top). */
  cell_id: string | null;
  cell_type?: 'code' | 'markdown' | 'raw' | null;
  base_source?: string | null;
  new_source?: string | null;
  summary?: string;
  status: ProposalStatus;
  created_at?: string | number;
  resolved_by?: string | null;
  resolved_at?: string | number | null;
  new_cell_id?: string | null;
  /** The claim of the tab that applied it (see {@link IClaimReply}). */
  claim?: string | null;
  /**
   * Who proposes it: an agent, or a tab back from offline whose edits met a reload of
   * the file (absent in proposals made before there was a choice: an agent).
   */
  origin?: ProposalOrigin;
  /** `outputs` proposals: the outputs to put back, as nbformat JSON text. */
  new_outputs?: string | null;
  /** `outputs` proposals once accepted: the outputs they replaced (JSON text). */
  base_outputs?: string | null;
  /** `version` proposals: the number of the kept version of the notebook. */
  version?: number | null;
  /** `version` proposals while pending: that version's notebook (JSON text). */
  new_notebook?: string | null;
}

export type ProposalOrigin = 'agent' | 'offline';

/** `GET agent/models` */
export interface IModelsReply {
  provider: string;
  configured: boolean;
  default_model: string | null;
  models: string[];
  hint?: string | null;
}

/** What a tool step of a past turn carries in the conversation. */
export interface IToolStepInfo {
  name?: string;
  summary?: string;
  detail?: string;
  ok?: boolean;
}

/** A durable message of the conversation. */
export interface IConversationMessage {
  id: string;
  turn_id: string;
  role: 'user' | 'assistant' | 'tool' | 'thought' | 'notice' | 'system';
  text: string;
  tool?: IToolStepInfo | null;
  created_at?: string | number;
  by?: string | null;
  level?: 'info' | 'error';
}

/** Where the current conversation of a notebook began (a "New conversation"). */
export interface IConversationStart {
  id: string;
  started_at: string;
  by: string;
}

/** `POST agent/conversations` */
export interface INewConversationReply {
  conversation: IConversationStart;
}

/** `GET agent/conversation?path=` */
export interface IConversationReply {
  file_id: string;
  /** The current conversation's start; null when none was ever started anew. */
  conversation?: IConversationStart | null;
  messages: IConversationMessage[];
  turn: IAgentTurn | null;
  /** Every turn's last record, oldest first (for each turn's token use). */
  turns?: IAgentTurn[];
}

/** `POST agent/turns` */
export interface ITurnRequest {
  path: string;
  message: string;
  model?: string;
  focus_cell_ids?: string[];
  approval?: ApprovalPolicy;
  /** Another configured provider kind for this turn (from the settings). */
  provider?: string;
  /** A lower step budget for this turn (from the settings). */
  max_steps?: number;
  /** The notebook's active cell: the model sees it in full. */
  active_cell_id?: string;
  /** An ACP agent the server hosts (`GET agents`); absent: the built-in assistant. */
  agent?: string;
}

/** One agent of `GET /api/jupyter-loop/agents` (never its command or environment). */
export interface IAgentListing {
  name: string;
  kind: 'builtin' | 'acp';
  label: string;
  available: boolean;
  why_not: string | null;
}

export interface IAgentsReply {
  agents: IAgentListing[];
}

export interface ITurnStarted {
  turn_id: string;
}

/**
 * `POST agent/proposals/{id}/claim`: this tab alone may apply the proposal
 * (and mark it accepted with `claim`, in the same transaction) for `expires_in` seconds.
 */
export interface IClaimReply {
  claim: string;
  by: string;
  expires_in: number;
}

export interface IJournalEntry {
  at: string | number;
  turn_id: string | null;
  action: string;
  by?: string | null;
  details?: unknown;
}

export interface IJournalReply {
  entries: IJournalEntry[];
}

/** The agent's REST calls (docs/agent.md); tests pass a fake. */
export interface IAgentClient {
  models(provider?: string): Promise<IModelsReply>;
  /** The agents a turn may use (a server without ACP agents lists the assistant). */
  agents?(): Promise<IAgentsReply>;
  conversation(path: string): Promise<IConversationReply>;
  newConversation(path: string): Promise<INewConversationReply>;
  startTurn(request: ITurnRequest): Promise<ITurnStarted>;
  stopTurn(path: string, turnId: string): Promise<void>;
  answerApproval(
    path: string,
    approvalId: string,
    decision: ApprovalDecision,
    sourceHashes: { [cellId: string]: string }
  ): Promise<void>;
  claimProposal(path: string, proposalId: string): Promise<IClaimReply>;
  rejectProposal(path: string, proposalId: string): Promise<void>;
  journal(path: string): Promise<IJournalReply>;
}

/** The caller's model tokens today (UTC) under the administrator's daily cap. */
export interface ITokenBudget {
  day: string;
  used: number;
  /** null: no cap (`budget_tokens_per_user_day` unset). */
  limit: number | null;
  left: number | null;
}

/** GET /api/jupyter-loop/status (the part the panel reads). */
export interface IServerStatus {
  tokens: ITokenBudget;
}
