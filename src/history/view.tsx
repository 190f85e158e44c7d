import type { YNotebook } from '@jupyter/ydoc';
import { ReactWidget } from '@jupyterlab/apputils';
import { NotebookPanel } from '@jupyterlab/notebook';
import { Contents } from '@jupyterlab/services';
import * as React from 'react';

import type * as Y from 'yjs';

import { lineDiff } from '../agent/diff';
import { plain } from '../agent/ydata';
import { boardOf, ExecutionBoard } from '../execution/board';
import { postJSON, requestAPI } from '../request';
import { IProposal, PROPOSALS_MAP } from '../payloads';
import { kernelLabel, outcome, runDuration, startedBy, when } from './describe';
import { RunOutputs } from './outputs';
import { IHistoryReply, IRunRecord } from './types';

/** Most runs the view lists (the server keeps up to 1000 per cell). */
const SHOWN_RUNS = 200;
/** After a run of the cell ends, its record reaches the history a moment later. */
const AFTER_RUN_MS = 1500;

/**
 * A cell's History view: its runs, newest first (when, how long, how it ended,
 * who started it through what, the kernel), and for the run picked the source
 * it ran against the source now, its outputs where they are still kept, and
 * "Restore this source" and "Restore these outputs" as proposals on the cell
 * (accept or reject them there, undo with Ctrl-Z). Nothing here changes the
 * notebook by itself.
 */
export class CellHistoryView extends ReactWidget {
  constructor(
    private readonly _panel: NotebookPanel,
    readonly cellId: string,
    private readonly _contents: Contents.IManager,
    private readonly _showVersions: () => void
  ) {
    super();
    this.addClass('jp-Loop-history');
    this.id = `jp-Loop-history-${cellId}-${Math.random().toString(36).slice(2)}`;
    this.title.label = `History: cell ${this._cellNumber() ?? cellId}`;
    this.title.closable = true;
    const model = _panel.content.model;
    this._board = model ? boardOf(model) : null;
    this._board?.changed.connect(this._onBoardChanged, this);
    model?.contentChanged.connect(this._onNotebookChanged, this);
    this._proposals = model
      ? (model.sharedModel as YNotebook).ydoc.getMap(PROPOSALS_MAP)
      : null;
    this._proposals?.observe(this._onProposals);
    _panel.disposed.connect(() => this.dispose());
    void this.refresh();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    window.clearTimeout(this._timer);
    this._proposals?.unobserve(this._onProposals);
    this._board?.changed.disconnect(this._onBoardChanged, this);
    this._panel.content.model?.contentChanged.disconnect(
      this._onNotebookChanged,
      this
    );
    super.dispose();
  }

  /** Ask the server for the cell's runs again. */
  async refresh(): Promise<void> {
    try {
      const reply = await requestAPI<IHistoryReply>(
        `history?path=${encodeURIComponent(this._path())}` +
          `&cell_id=${encodeURIComponent(this.cellId)}&limit=${SHOWN_RUNS}`
      );
      this._runs = reply.runs;
      this._error = '';
      if (!this._runs.some(run => run.run_id === this._picked)) {
        this._picked = this._runs[0]?.run_id ?? '';
      }
    } catch (error) {
      this._error = `Could not read the history: ${(error as Error).message}`;
    }
    this._loaded = true;
    this.update();
  }

  render(): JSX.Element {
    const picked = this._runs.find(run => run.run_id === this._picked);
    return (
      <div className="jp-Loop-historyBody">
        <div className="jp-Loop-historyHeader">
          <span>
            Runs of cell {this._cellNumber() ?? '(deleted)'} in{' '}
            {this._panel.context.path}, newest first
          </span>
          <span className="jp-Loop-historyButtons">
            <button
              className="jp-mod-styled"
              title="The whole notebook as each save left it, to restore"
              onClick={() => this._showVersions()}
            >
              Notebook versions
            </button>
            <button
              className="jp-mod-styled"
              onClick={() => void this.refresh()}
            >
              Refresh
            </button>
          </span>
        </div>
        {this._error && (
          <div className="jp-Loop-historyError">{this._error}</div>
        )}
        {this._loaded && !this._runs.length && !this._error && (
          <div className="jp-Loop-historyEmpty">
            This cell has not run since the run history began.
          </div>
        )}
        <ol className="jp-Loop-historyRuns">
          {this._runs.map(run => (
            <li
              key={run.run_id}
              className={
                'jp-Loop-historyRun' +
                (run.run_id === this._picked ? ' jp-mod-selected' : '')
              }
              data-run-id={run.run_id}
              onClick={() => this._pick(run.run_id)}
            >
              <div className="jp-Loop-historyLine">
                <span className="jp-Loop-historyWhen">{when(run.ended)}</span>
                <span>{runDuration(run)}</span>
                <span className={`jp-Loop-historyStatus jp-mod-${run.status}`}>
                  {outcome(run)}
                </span>
              </div>
              <div className="jp-Loop-historyLine jp-Loop-historyWho">
                <span className="jp-Loop-historyBy">{startedBy(run)}</span>
                <span title={run.kernel_id}>
                  kernel {kernelLabel(run, this._runs)}
                </span>
              </div>
            </li>
          ))}
        </ol>
        {picked && this._detail(picked)}
      </div>
    );
  }

  private _detail(run: IRunRecord): JSX.Element {
    const now = this._sourceNow();
    const same = now === run.source;
    return (
      <div className="jp-Loop-historyDetail">
        <h3>
          Source it ran
          {same
            ? ' (the same as now)'
            : ' (+ this run’s lines, − the source now)'}
        </h3>
        <pre className="jp-Loop-historyDiff">
          {same
            ? run.source
            : lineDiff(now ?? '', run.source).map((line, index) => (
                <div key={index} className={`jp-Loop-diff-${line.kind}`}>
                  {line.kind === 'add'
                    ? '+ '
                    : line.kind === 'del'
                      ? '- '
                      : '  '}
                  {line.text}
                </div>
              ))}
        </pre>
        <div className="jp-Loop-historyActions">
          <button
            className="jp-mod-styled jp-mod-accept"
            disabled={same || now === null}
            title={
              same
                ? 'The cell already has this source'
                : 'Propose this source on the cell: accept or reject it there'
            }
            onClick={() => void this._restore(run, 'source')}
          >
            Restore this source
          </button>
          <button
            className="jp-mod-styled jp-mod-accept"
            disabled={!run.outputs_url || run.outputs_shown === true}
            title={
              run.outputs_shown
                ? 'The cell shows these outputs now'
                : run.outputs_url
                  ? 'Propose these outputs on the cell: accept or reject them there'
                  : 'The outputs of this run are no longer kept'
            }
            onClick={() => void this._restore(run, 'outputs')}
          >
            Restore these outputs
          </button>
          {this._notice && (
            <span className="jp-Loop-historyNotice">{this._notice}</span>
          )}
          {this._restoredNow()}
        </div>
        <h3>Outputs of this run</h3>
        <RunOutputs
          key={run.run_id}
          run={run}
          panel={this._panel}
          cellId={this.cellId}
        />
      </div>
    );
  }

  private _pick(runId: string): void {
    this._picked = runId;
    this._notice = '';
    this.update();
  }

  /** Outputs restored from here and accepted: say so, with their undo. */
  private _restoredNow(): JSX.Element | null {
    const id = this._restoredOutputs;
    const proposal = id
      ? plain<IProposal>(this._proposals?.get(id))
      : undefined;
    if (proposal?.status === 'undone') {
      return (
        <span className="jp-Loop-historyNotice">
          Undone: the cell shows the outputs it had before.
        </span>
      );
    }
    if (proposal?.status !== 'accepted') {
      return null;
    }
    return (
      <span className="jp-Loop-historyNotice">
        The cell shows the restored outputs.{' '}
        <button
          className="jp-mod-styled jp-mod-reject"
          onClick={() => void this._undoOutputs(proposal.id)}
        >
          Undo
        </button>
      </span>
    );
  }

  private async _undoOutputs(proposalId: string): Promise<void> {
    try {
      await requestAPI(
        `agent/proposals/${encodeURIComponent(proposalId)}/undo`,
        postJSON({ path: this._path() })
      );
      this._notice = '';
    } catch (error) {
      this._notice = (error as Error).message;
    }
    this.update();
  }

  private async _restore(
    run: IRunRecord,
    what: 'source' | 'outputs'
  ): Promise<void> {
    try {
      const proposal = await requestAPI<IProposal>(
        'history/restore',
        postJSON({
          path: this._path(),
          cell_id: run.cell_id,
          run_id: run.run_id,
          what
        })
      );
      if (what === 'outputs') {
        this._restoredOutputs = proposal.id;
      }
      this._notice =
        'Proposed on the cell: accept or reject it there (Ctrl-Z undoes an accepted one).';
    } catch (error) {
      this._notice = (error as Error).message;
    }
    this.update();
  }

  private _onBoardChanged(_: ExecutionBoard, cellIds: string[]): void {
    if (cellIds.includes(this.cellId)) {
      window.clearTimeout(this._timer);
      this._timer = window.setTimeout(() => void this.refresh(), AFTER_RUN_MS);
    }
  }

  private _onProposals = (): void => {
    if (this._restoredOutputs) {
      this.update();
    }
  };

  private _onNotebookChanged(): void {
    this.update(); // the diff is against the source now
  }

  private _path(): string {
    return this._contents.localPath(this._panel.context.path);
  }

  private _cellNumber(): number | null {
    const index = this._panel.content.widgets.findIndex(
      cell => cell.model.id === this.cellId
    );
    return index >= 0 ? index + 1 : null;
  }

  private _sourceNow(): string | null {
    const cell = this._panel.content.widgets.find(
      cell => cell.model.id === this.cellId
    );
    return cell ? cell.model.sharedModel.getSource() : null;
  }

  private _board: ExecutionBoard | null;
  private _proposals: Y.Map<unknown> | null;
  /** The outputs proposal last made from this view, to follow to its undo. */
  private _restoredOutputs = '';
  private _runs: IRunRecord[] = [];
  private _picked = '';
  private _error = '';
  private _notice = '';
  private _loaded = false;
  private _timer = 0;
}
