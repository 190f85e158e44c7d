import {
  Dialog,
  ISessionContext,
  Notification,
  showDialog
} from '@jupyterlab/apputils';
import type { YNotebook } from '@jupyter/ydoc';
import { Cell, CodeCell, MarkdownCell } from '@jupyterlab/cells';
import type { IOutput } from '@jupyterlab/nbformat';
import {
  INotebookCellExecutor,
  INotebookTracker,
  KernelError,
  NotebookPanel
} from '@jupyterlab/notebook';
import { Contents } from '@jupyterlab/services';
import { nullTranslator } from '@jupyterlab/translation';

import { ICellMarker } from '../payloads';
import { RunBatcher } from './batcher';
import { boardOf } from './board';
import { clearAsSent } from './clearing';
import { RunSocket } from './runsocket';

/**
 * Runs cells on the server: the request names the cells, the server reads their
 * source from the shared notebook, runs them and writes every output back into it.
 *
 * `runCell` resolves when the server marks the run as ended, so "run all",
 * stop-on-error and the execution-time display behave as in stock JupyterLab.
 */
export class ServerCellExecutor implements INotebookCellExecutor {
  constructor(private readonly _contents: Contents.IManager) {}

  /**
   * Let the executor find a notebook's panel (and so its current path).
   *
   * The notebook tracker itself needs a cell executor, so it is handed over
   * once both exist rather than required by this plugin.
   */
  useTracker(tracker: INotebookTracker): void {
    this._tracker = tracker;
  }

  async runCell(
    options: INotebookCellExecutor.IRunCellOptions
  ): Promise<boolean> {
    const { cell, onCellExecuted } = options;
    if (cell.model.type === 'markdown') {
      (cell as MarkdownCell).rendered = true;
      cell.inputHidden = false;
      onCellExecuted({ cell, success: true });
      return true;
    }
    if (cell.model.type !== 'code') {
      return true;
    }
    // With its kernel up, the cell reaches the batcher inside JupyterLab's own
    // loop over the cells run, before the page advances (see `RunBatcher`).
    const kernelId =
      readyKernel(options.sessionContext) ?? (await this._kernelFor(options));
    if (!kernelId || !options.sessionContext) {
      return true;
    }
    options.onCellExecutionScheduled({ cell });
    const marker = await this._run(cell as CodeCell, options, kernelId);
    return this._report(cell, marker, onCellExecuted);
  }

  private async _kernelFor(
    options: INotebookCellExecutor.IRunCellOptions
  ): Promise<string | null> {
    const { sessionContext, sessionDialogs } = options;
    if (!sessionContext) {
      return null;
    }
    const trans = (options.translator ?? nullTranslator).load('jupyterlab');
    if (sessionContext.isTerminating) {
      await showDialog({
        title: trans.__('Kernel Terminating'),
        body: trans.__(
          'The kernel for %1 appears to be terminating. You can not run any cell for now.',
          sessionContext.session?.path
        ),
        buttons: [Dialog.okButton()]
      });
      return null;
    }
    const starting = !sessionContext.isReady || !sessionContext.hasNoKernel;
    if (!sessionContext.session?.kernel && starting) {
      // The notebook opened a moment ago: its session and kernel are still being
      // created. Run once they are there, as a kernel connection queues its first
      // requests, rather than drop the run without a word. Not ready yet also counts
      // while the page still lists the running sessions, before it names a kernel
      // (`hasNoKernel` is true then): starting one from here would race the page's
      // own start, and JupyterLab's session context answers two starts by shutting
      // the first kernel down under the tab.
      await kernelSettled(sessionContext, KERNEL_START_WAIT_MS);
    }
    if (sessionContext.hasNoKernel) {
      const shouldSelect = await sessionContext.startKernel();
      if (shouldSelect && sessionDialogs) {
        await sessionDialogs.selectKernel(sessionContext);
      }
      if (sessionContext.hasNoKernel) {
        return null; // "No Kernel" chosen: nothing to run, as in stock JupyterLab
      }
    }
    const kernelId = sessionContext.session?.kernel?.id ?? null;
    if (!kernelId) {
      Notification.error(
        trans.__(
          'The cell was not run: the kernel of %1 has not started yet. Run it again in a moment.',
          sessionContext.path
        ),
        { autoClose: 8000 }
      );
    }
    return kernelId;
  }

  private async _run(
    cell: CodeCell,
    options: INotebookCellExecutor.IRunCellOptions,
    kernelId: string
  ): Promise<ICellMarker | null> {
    const path = this._pathOf(options);
    const batcher = this._batcherFor(
      path,
      kernelId,
      !!options.notebookConfig.recordTiming
    );
    const board = boardOf(options.notebook);
    const cellId = cell.model.sharedModel.getId();
    const putBack = clearAsSent(
      cell.model,
      board.marker(cellId),
      options.notebook.readOnly
    );
    try {
      const queued = await batcher
        .add(
          cellId,
          cell.model.sharedModel.getSource(),
          options.notebook,
          moveOn => this._watchMoveOn(options, moveOn),
          () => this._runsOnlyThisCell(options, cell)
        )
        .catch(refused => {
          putBack(); // the server did not queue it: nothing was lost
          throw refused;
        });
      if (queued.state === 'done') {
        return null;
      }
      return await board.waitForRun(queued.cell_id, queued.run_id);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (!message.startsWith('Canceled')) {
        Notification.error(`Could not run the cell: ${message}`, {
          autoClose: 8000
        });
      }
      return { state: 'done', run_id: '', status: 'aborted' };
    }
  }

  /** The panel showing the notebook whose cell is run (none: not tracked). */
  private _panelOf(
    options: INotebookCellExecutor.IRunCellOptions
  ): NotebookPanel | undefined {
    return this._tracker?.find(
      candidate => candidate.content.model === options.notebook
    );
  }

  /**
   * The notebook's current path: its document context follows renames (the
   * session's path may lag behind a rename made elsewhere).
   */
  private _pathOf(options: INotebookCellExecutor.IRunCellOptions): string {
    const path =
      this._panelOf(options)?.context.path ??
      options.sessionContext?.path ??
      '';
    return this._contents.localPath(path);
  }

  /**
   * Whether the command running `cell` runs no other. JupyterLab's run commands
   * make the last selected cell active, clear the selection, then run the cells
   * that were selected in order: the active cell alone is a one-cell command,
   * and a selection's first cell is not active. Run All (and Run All Below)
   * runs cells without selecting them, from the first code cell (the active
   * one): a Shift-Enter there cannot be told from it, so that cell is gathered
   * as before, and a Run All keeps its one request (the run history's "Run
   * All"). Run All Below from another cell, or an extension's `runCells`, may
   * go in two requests, in order (an error still drops the cells queued).
   */
  private _runsOnlyThisCell(
    options: INotebookCellExecutor.IRunCellOptions,
    cell: Cell
  ): boolean {
    const notebook = this._panelOf(options)?.content;
    if (!notebook || notebook.activeCell !== cell) {
      return false;
    }
    const code = notebook.widgets.filter(other => other.model.type === 'code');
    if (code[0] === cell && code.length > 1) {
      return false; // maybe a Run All
    }
    return !notebook.widgets.some(
      other => other !== cell && notebook.isSelectedOrActive(other)
    );
  }

  /**
   * Call `moveOn` when the page moves on from the cells being run: the
   * notebook's active cell changes (JupyterLab advances after Shift-Enter, and
   * goes to the end after Run All), or a change of the notebook begins (a new
   * cell after the last one). Neither happens inside JupyterLab's loop over the
   * cells it runs, so the cells of one command stay one request.
   */
  private _watchMoveOn(
    options: INotebookCellExecutor.IRunCellOptions,
    moveOn: () => void
  ): () => void {
    const notebook = this._panelOf(options)?.content;
    const ydoc = (options.notebook.sharedModel as YNotebook).ydoc;
    ydoc.on('beforeTransaction', moveOn);
    notebook?.activeCellChanged.connect(moveOn);
    return () => {
      ydoc.off('beforeTransaction', moveOn);
      notebook?.activeCellChanged.disconnect(moveOn);
    };
  }

  private _batcherFor(
    path: string,
    kernelId: string,
    recordTiming: boolean
  ): RunBatcher {
    const key = `${kernelId}\n${path}\n${recordTiming}`;
    let batcher = this._batchers.get(key);
    if (!batcher) {
      batcher = new RunBatcher(path, kernelId, recordTiming, request =>
        this._socket.run(request)
      );
      this._batchers.set(key, batcher);
    }
    return batcher;
  }

  private _report(
    cell: Cell,
    marker: ICellMarker | null,
    onCellExecuted: INotebookCellExecutor.IRunCellOptions['onCellExecuted']
  ): boolean {
    const status = marker?.status ?? 'ok';
    if (status === 'ok') {
      onCellExecuted({ cell, success: true });
      return true;
    }
    if (status === 'error') {
      const error = new KernelError(errorContent(cell as CodeCell));
      onCellExecuted({ cell, success: false, error });
      throw error;
    }
    return false;
  }

  private _batchers = new Map<string, RunBatcher>();
  private _socket = new RunSocket();
  private _tracker: INotebookTracker | null = null;
}

/**
 * The session's kernel when a cell can be sent at once: the session is up, has
 * a kernel and is not ending (else `_kernelFor` waits, starts or says why not).
 */
function readyKernel(
  sessionContext: ISessionContext | undefined
): string | null {
  if (
    !sessionContext ||
    sessionContext.isTerminating ||
    sessionContext.hasNoKernel
  ) {
    return null;
  }
  return sessionContext.session?.kernel?.id ?? null;
}

/** How long a run waits for a kernel that is being started when it is asked for. */
const KERNEL_START_WAIT_MS = 120000;

/**
 * Resolves once the session has a kernel or will have none (its start ended, or
 * "No Kernel" was chosen), or after `timeoutMs`.
 */
function kernelSettled(
  context: ISessionContext,
  timeoutMs: number
): Promise<void> {
  return new Promise(resolve => {
    const settle = () => {
      clearTimeout(timer);
      context.kernelChanged.disconnect(check);
      resolve();
    };
    const check = () => {
      if (context.session?.kernel || context.hasNoKernel) {
        settle();
      }
    };
    const timer = setTimeout(settle, timeoutMs);
    context.kernelChanged.connect(check);
    if (!context.isReady) {
      void context.ready.then(settle, settle); // its first start ended, however
    }
  });
}

/**
 * The error a cell's outputs show, in the shape of an execute reply's content.
 */
function errorContent(cell: CodeCell): {
  status: 'error';
  ename: string;
  evalue: string;
  traceback: string[];
  execution_count: number | null;
} {
  const outputs = cell.model.outputs.toJSON() as IOutput[];
  const error = outputs
    .reverse()
    .find(output => output.output_type === 'error');
  return {
    status: 'error',
    ename: String(error?.ename ?? 'Error'),
    evalue: String(error?.evalue ?? ''),
    traceback: (error?.traceback as string[] | undefined) ?? [],
    execution_count: cell.model.executionCount
  };
}
