/**
 * Payloads of the inline completions' REST API
 * (`jupyter_loop/completion/payloads.py`).
 */

/** A completion request (POST /api/jupyter-loop/completion/stream). */
export interface ICompletionRequest {
  path: string;
  cell_id: string;
  /** The editor asking: a new request from it cancels its previous one. */
  editor_id: string;
  before: string;
  after: string;
  /** Empty or absent: the server's completion model. */
  model?: string;
  /** The cells on screen: their recent outputs join the prompt. */
  visible_cell_ids?: string[];
  /**
   * This tab's count of its requests: each travels on its own connection, so the
   * server may get a keystroke's request after the next one's; the number says
   * which is newer.
   */
  sequence?: number;
}

/** One line of a streamed completion: text, or the end (with an error). */
export interface ICompletionChunk {
  text?: string;
  done?: boolean;
  error?: string | null;
}

/** GET /api/jupyter-loop/completion/status: usable, with which model, usage. */
export interface ICompletionStatus {
  configured: boolean;
  provider: string | null;
  model: string | null;
  hint: string | null;
  usage: {
    requests: number;
    input_tokens: number;
    output_tokens: number;
    failures: number;
    cancelled: number;
    last_error: string | null;
  };
}
