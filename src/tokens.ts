/**
 * Payloads of the jupyter-loop REST API and shared document, mirroring
 * `jupyter_loop/payloads.py` and `jupyter_loop/execution/board.py`.
 */

/** Name of the map beside the cells where the server marks runs. */
export const EXECUTION_BOARD = 'jupyter_loop:execution';

export interface IRunRequest {
  path: string;
  cell_ids: string[];
  kernel_id?: string;
  record_timing?: boolean;
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
