import { CodeCell } from '@jupyterlab/cells';
import { URLExt } from '@jupyterlab/coreutils';
import type * as nbformat from '@jupyterlab/nbformat';
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
 * run's record in the full-output store (which keeps a cell's last few runs:
 * rendered when it fits the notebook, else as text), else {@link NOT_KEPT}.
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
    return <StoredOutputs url={run.outputs_url} panel={panel} />;
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
  const cell = props.panel.content.widgets.find(
    one => one.model.id === props.cellId
  );
  // A copy: what is shown here never writes into the cell's own outputs.
  const outputs = React.useMemo(
    () => (cell instanceof CodeCell ? cell.model.outputs.toJSON() : []),
    [cell]
  );
  return (
    <div>
      <div className="jp-Loop-historyOutputsNote">
        The cell shows these outputs now.
      </div>
      <RenderedOutputs
        outputs={outputs}
        trusted={cell?.model.trusted ?? false}
        panel={props.panel}
      />
    </div>
  );
}

/**
 * A kept run's outputs: rendered as the notebook would render them when they
 * fit the notebook (`?format=nbformat`), else the full output as text, rich
 * outputs as links (a cut run can be far larger than a page should hold).
 */
function StoredOutputs(props: {
  url: string;
  panel: NotebookPanel;
}): JSX.Element {
  const [outputs, setOutputs] = React.useState<nbformat.IOutput[] | null>(null);
  const [text, setText] = React.useState<string | null>(null);
  React.useEffect(() => {
    let live = true;
    const settings = ServerConnection.makeSettings();
    const url = URLExt.join(settings.baseUrl, props.url);
    const read = async (): Promise<void> => {
      const asNotebook = await ServerConnection.makeRequest(
        `${url}?format=nbformat`,
        {},
        settings
      );
      if (asNotebook.ok) {
        const body = (await asNotebook.json()) as {
          outputs: nbformat.IOutput[];
        };
        if (live) {
          setOutputs(body.outputs);
        }
        return;
      }
      const asText = await ServerConnection.makeRequest(url, {}, settings);
      const body = asText.ok ? await asText.text() : NOT_KEPT;
      if (live) {
        setText(body);
      }
    };
    read().catch(() => live && setText(NOT_KEPT));
    return () => {
      live = false;
    };
  }, [props.url]);
  if (outputs !== null) {
    return (
      <div>
        <div className="jp-Loop-historyOutputsNote">
          The outputs the server kept of this run:
        </div>
        {outputs.length ? (
          <div className="jp-Loop-historyKept">
            {/* Untrusted: HTML is sanitized and nothing runs, whatever the
                notebook's trust (these outputs are no cell's now). */}
            <RenderedOutputs
              outputs={outputs}
              trusted={false}
              panel={props.panel}
            />
          </div>
        ) : (
          <pre className="jp-Loop-historyStored">{NO_OUTPUT}</pre>
        )}
      </div>
    );
  }
  return (
    <div>
      <div className="jp-Loop-historyOutputsNote">
        The full output the server kept of this run (rich outputs are links):
      </div>
      <pre className="jp-Loop-historyStored">
        {text === null ? 'Loading…' : text || NO_OUTPUT}
      </pre>
    </div>
  );
}

/** Outputs rendered read-only in a copy, never in the notebook's cell. */
function RenderedOutputs(props: {
  outputs: nbformat.IOutput[];
  trusted: boolean;
  panel: NotebookPanel;
}): JSX.Element {
  const host = React.useRef<HTMLDivElement>(null);
  // A layout effect: its clean-up runs before React takes the host out of the
  // page, while Lumino can still detach the output area (it refuses once not).
  React.useLayoutEffect(() => {
    if (!host.current) {
      return;
    }
    const model = new OutputAreaModel({
      values: props.outputs,
      trusted: props.trusted
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
  }, [props.outputs, props.trusted, props.panel]);
  return <div ref={host} className="jp-Loop-historyOutputs" />;
}
