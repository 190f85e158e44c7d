import { CodeCell } from '@jupyterlab/cells';
import { URLExt } from '@jupyterlab/coreutils';
import { NotebookPanel } from '@jupyterlab/notebook';
import { OutputArea, OutputAreaModel } from '@jupyterlab/outputarea';
import { ServerConnection } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import { IRunRecord } from './types';

/** Said when neither the cell nor the full-output store has a run's outputs. */
export const NOT_KEPT = 'Outputs of this run are no longer kept.';
/** Said of a kept run that printed and showed nothing. */
const NO_OUTPUT = '(This run had no output.)';

/**
 * The outputs of one run, read-only, without touching the notebook: the cell's
 * own outputs when they are this run's (rendered anew, in a copy), else the
 * run's record in the full-output store as text (which keeps a cell's last few
 * runs), else {@link NOT_KEPT}.
 */
export function RunOutputs(props: {
  run: IRunRecord;
  panel: NotebookPanel;
  cellId: string;
}): JSX.Element {
  const { run, panel, cellId } = props;
  if (run.outputs_shown) {
    return <ShownOutputs panel={panel} cellId={cellId} />;
  }
  if (run.outputs_url) {
    return <StoredOutputs url={run.outputs_url} />;
  }
  return (
    <div className="jp-Loop-historyNotKept">
      {NOT_KEPT} The server keeps the outputs of a cell&apos;s last few runs
      (the setting full_output_runs_per_cell); the history keeps who ran what.
    </div>
  );
}

function ShownOutputs(props: {
  panel: NotebookPanel;
  cellId: string;
}): JSX.Element {
  const host = React.useRef<HTMLDivElement>(null);
  // A layout effect: its clean-up runs before React takes the host out of the
  // page, while Lumino can still detach the output area (it refuses once not).
  React.useLayoutEffect(() => {
    const cell = props.panel.content.widgets.find(
      one => one.model.id === props.cellId
    );
    if (!(cell instanceof CodeCell) || !host.current) {
      return;
    }
    // A copy: what is shown here never writes into the cell's own outputs.
    const model = new OutputAreaModel({
      values: cell.model.outputs.toJSON(),
      trusted: cell.model.trusted
    });
    const area = new OutputArea({
      model,
      rendermime: props.panel.content.rendermime
    });
    Widget.attach(area, host.current);
    return () => {
      area.dispose();
      model.dispose();
    };
  }, [props.panel, props.cellId]);
  return (
    <div>
      <div className="jp-Loop-historyOutputsNote">
        The cell shows these outputs now.
      </div>
      <div ref={host} className="jp-Loop-historyOutputs" />
    </div>
  );
}

function StoredOutputs(props: { url: string }): JSX.Element {
  const [text, setText] = React.useState<string | null>(null);
  React.useEffect(() => {
    let live = true;
    const settings = ServerConnection.makeSettings();
    const url = URLExt.join(settings.baseUrl, props.url);
    void ServerConnection.makeRequest(url, {}, settings)
      .then(async response =>
        response.ok ? response.text() : Promise.reject(new Error(NOT_KEPT))
      )
      .then(
        body => live && setText(body),
        () => live && setText(NOT_KEPT)
      );
    return () => {
      live = false;
    };
  }, [props.url]);
  return (
    <div>
      <div className="jp-Loop-historyOutputsNote">
        The output the server kept of this run (rich outputs are links):
      </div>
      <pre className="jp-Loop-historyStored">
        {text === null ? 'Loading…' : text || NO_OUTPUT}
      </pre>
    </div>
  );
}
