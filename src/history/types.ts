/**
 * What the server answers the History view and the stale marks
 * (`GET history`, `GET stale`, `POST history/restore`): mirrors
 * `RunEntry.to_json` and `runs_payload` in jupyter_loop.
 */

/** One ended run of a cell, newest first in a history reply. */
export interface IRunRecord {
  path: string;
  cell_id: string;
  run_id: string;
  /** Who started it and through what, in words ("a tab of ada"). */
  by: string;
  user: string;
  channel: 'tab' | 'runs_api' | 'assistant' | 'mcp' | 'terminal' | 'acp';
  turn: string | null;
  approval: string | null;
  client: string | null;
  run_all: boolean;
  /** The source it ran, masked. */
  source: string;
  kernel_id: string;
  /** Which start of the kernel it ran on (the id survives restarts). */
  kernel_run: string;
  /** Seconds since the epoch; `started` is null for a run dropped before it started. */
  queued: number;
  started: number | null;
  ended: number;
  status: string;
  note: string | null;
  execution_count: number | null;
  /** The cell shows this run's outputs now (null: not compared, a notebook's listing). */
  outputs_shown: boolean | null;
  /** Under the server's base URL: the full-output store keeps this run's record. */
  outputs_url: string | null;
  /**
   * A server started after the one that started the run (it died or stopped
   * while the run went on, on a kept kernel) followed the run to its end.
   */
  taken_over: boolean;
}

export interface IHistoryReply {
  path: string;
  cell_id: string | null;
  runs: IRunRecord[];
}

/** Why a cell's outputs are stale, by cell id (absent: not stale). */
export interface IStaleReply {
  path: string;
  marks: Record<string, string>;
}

/** One kept version of a notebook (`GET versions`): mirrors `Version.to_json`. */
export interface IVersion {
  /** Names it for good: `jupyter loop restore NOTEBOOK NUMBER`. */
  number: number;
  path: string;
  kind: 'saved' | 'found on disk' | 'restored';
  /** For a restore's save: the version it brought back. */
  restored_from: number | null;
  /** Seconds since the epoch: first and last written (saves of outputs only fold in). */
  created: number;
  saved: number;
  sha256: string;
  cells: number;
  size: number;
}

export interface IVersionsReply {
  path: string;
  versions: IVersion[];
}

/** What a restore did (`POST versions/N/restore`): mirrors `Restored.to_json`. */
export interface IRestored {
  path: string;
  restored: number;
  /** Open tabs saw the restore at once. */
  live: boolean;
  /** The version the restore's save made (null: the file held those bytes already). */
  version: IVersion | null;
  /** The notebook is open: the proposal at its top that puts the version in. */
  proposal: string | null;
}
