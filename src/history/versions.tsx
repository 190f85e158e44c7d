import { ReactWidget } from '@jupyterlab/apputils';
import { NotebookPanel } from '@jupyterlab/notebook';
import { Contents } from '@jupyterlab/services';
import * as React from 'react';

import { postJSON, requestAPI } from '../request';
import { restoredNotice, versionOrigin, versionSize, when } from './describe';
import { IRestored, IVersion, IVersionsReply } from './types';

/**
 * A notebook's kept versions, newest first (what each save left, and a file
 * another program wrote before a save replaced it), each with "Restore".
 *
 * "Restore" asks the server as `jupyter loop restore` does: the notebook being
 * open, the version is proposed at its top, in every tab, and a tab that
 * accepts it can undo it (the proposal is the confirmation, so no dialog). A
 * notebook no tab has open any more is restored into its file; that is undone
 * by restoring the version it replaced, which the server keeps first (the view
 * says which).
 */
export class NotebookVersionsView extends ReactWidget {
  constructor(
    private readonly _panel: NotebookPanel,
    private readonly _contents: Contents.IManager
  ) {
    super();
    this.addClass('jp-Loop-history');
    this.addClass('jp-Loop-versions');
    this.id = `jp-Loop-versions-${Math.random().toString(36).slice(2)}`;
    this.title.label = `Versions: ${_panel.context.localPath}`;
    this.title.closable = true;
    // Each save may keep a version: the list follows them.
    _panel.context.fileChanged.connect(this._onSaved, this);
    _panel.disposed.connect(() => this.dispose());
    void this.refresh();
  }

  /** The notebook whose versions this lists. */
  get panel(): NotebookPanel {
    return this._panel;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._panel.context.fileChanged.disconnect(this._onSaved, this);
    super.dispose();
  }

  /** Ask the server for the notebook's versions again. */
  async refresh(): Promise<void> {
    try {
      const reply = await requestAPI<IVersionsReply>(
        `versions?path=${encodeURIComponent(this._path())}`
      );
      this._versions = reply.versions;
      this._error = '';
    } catch (error) {
      this._error = `Could not read the versions: ${(error as Error).message}`;
    }
    this._loaded = true;
    this.update();
  }

  render(): JSX.Element {
    return (
      <div className="jp-Loop-historyBody">
        <div className="jp-Loop-historyHeader">
          <span>
            Versions of {this._panel.context.localPath} the server kept, newest
            first
          </span>
          <button className="jp-mod-styled" onClick={() => void this.refresh()}>
            Refresh
          </button>
        </div>
        {this._error && (
          <div className="jp-Loop-historyError">{this._error}</div>
        )}
        {this._notice && (
          <div className="jp-Loop-historyNotice">{this._notice}</div>
        )}
        {this._loaded && !this._versions.length && !this._error && (
          <div className="jp-Loop-historyEmpty">
            No version kept yet: the server keeps one at each save.
          </div>
        )}
        <ol className="jp-Loop-historyRuns">
          {this._versions.map((version, index) => (
            <li
              key={version.number}
              className="jp-Loop-historyRun jp-Loop-version"
              data-version={version.number}
            >
              <div className="jp-Loop-historyLine">
                <span className="jp-Loop-historyWhen">
                  Version {version.number} · {when(version.saved)}
                </span>
                <span>{versionSize(version)}</span>
              </div>
              <div className="jp-Loop-historyLine jp-Loop-historyWho">
                <span>
                  from {versionOrigin(version)}
                  {index === 0 ? ' (the file holds it)' : ''}
                </span>
                <button
                  className="jp-mod-styled jp-mod-accept"
                  disabled={index === 0}
                  title={
                    index === 0
                      ? 'The notebook file holds this version'
                      : 'Bring this version back as the notebook, in every tab'
                  }
                  onClick={() => void this._restore(version)}
                >
                  Restore
                </button>
              </div>
            </li>
          ))}
        </ol>
      </div>
    );
  }

  private async _restore(version: IVersion): Promise<void> {
    try {
      const restored = await requestAPI<IRestored>(
        `versions/${version.number}/restore`,
        postJSON({ path: this._path() })
      );
      await this.refresh();
      this._notice = restoredNotice(restored, this._versions);
    } catch (error) {
      this._notice = (error as Error).message;
    }
    this.update();
  }

  private _onSaved(): void {
    void this.refresh();
  }

  private _path(): string {
    return this._contents.localPath(this._panel.context.path);
  }

  private _versions: IVersion[] = [];
  private _error = '';
  private _notice = '';
  private _loaded = false;
}
