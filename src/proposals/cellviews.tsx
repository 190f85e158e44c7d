import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import type * as nbformat from '@jupyterlab/nbformat';
import { ReactWidget } from '@jupyterlab/ui-components';
import * as React from 'react';

import { askerOf } from '../agent/asker';
import { AgentSession } from '../agent/session';
import { useSignal } from '../panel/hooks';
import { ApprovalButtons } from '../panel/approval';
import { proposalTexts } from '../panel/proposalcard';
import { CodeDiff } from './codediff';
import { IProposal } from '../payloads';

/** Keys and clicks inside a decoration stay out of the notebook's shortcuts. */
function isolate(node: HTMLElement): void {
  node.addEventListener('keydown', event => event.stopPropagation());
  node.addEventListener('mousedown', event => event.stopPropagation());
}

const TITLES = {
  modify: 'AI proposal: edit this cell',
  insert: 'AI proposal: a new cell here',
  delete: 'AI proposal: delete this cell',
  outputs: 'Restore earlier outputs of this cell',
  version: 'Restore a kept version of this notebook'
};

/** A tab's own edits, made offline while the file was replaced: not the AI's. */
const OFFLINE_TITLES = {
  modify: 'Your offline edit of this cell (not merged)',
  insert: 'Your offline cell (not merged)',
  delete: 'You deleted this cell offline (not merged)',
  outputs: TITLES.outputs,
  version: TITLES.version
};

function titleOf(proposal: IProposal): string {
  if (proposal.origin === 'offline') {
    return OFFLINE_TITLES[proposal.kind];
  }
  if (proposal.kind === 'insert') {
    const type = proposal.cell_type === 'markdown' ? 'Markdown' : 'code';
    return `AI proposal: a new ${type} cell here`;
  }
  return TITLES[proposal.kind];
}

/**
 * A proposal shown on its cell: a merge view of the edit (modify), a ghost
 * cell at its place (insert) or a banner on the cell to delete, with Accept
 * and Reject; a stale one says so and offers to regenerate.
 */
export class ProposalOnCell extends ReactWidget {
  constructor(private readonly _options: ProposalOnCell.IOptions) {
    super();
    const view = _options.session.proposals.get(_options.proposalId);
    this.addClass('jp-Loop-OnCell');
    this.addClass(
      view?.proposal.kind === 'insert'
        ? 'jp-Loop-GhostCell'
        : 'jp-Loop-CellProposal'
    );
    this.node.dataset.proposalId = _options.proposalId;
    this.node.setAttribute('role', 'group');
    this.node.setAttribute(
      'aria-label',
      view ? titleOf(view.proposal) : 'AI proposal'
    );
    isolate(this.node);
  }

  protected render(): JSX.Element {
    return <ProposalOnCellView {...this._options} />;
  }
}

export namespace ProposalOnCell {
  export interface IOptions {
    session: AgentSession;
    proposalId: string;
    /** The MIME type of the cell's source, for highlighting. */
    mimeType: string;
    languages: IEditorLanguageRegistry | null;
  }
}

function ProposalOnCellView(
  props: ProposalOnCell.IOptions
): JSX.Element | null {
  const { session, proposalId } = props;
  useSignal(session.proposals.changed);
  useSignal(session.changed);
  const view = session.proposals.get(proposalId);
  if (!view) {
    return null;
  }
  const { proposal, state } = view;
  const busy = session.isPending(proposalId);
  const [before, after] = proposalTexts(proposal);
  const title = titleOf(proposal);
  return (
    <div className={`jp-Loop-OnCell-body jp-mod-${state}`}>
      <div className="jp-Loop-OnCell-bar">
        <span className="jp-Loop-OnCell-text">
          <span className="jp-Loop-OnCell-title">{title}</span>
          {proposal.summary && (
            <span className="jp-Loop-OnCell-summary">
              {' '}
              — {proposal.summary}
            </span>
          )}
        </span>
        <span className="jp-Loop-Actions">
          {state === 'pending' ? (
            <button
              className="jp-Button jp-mod-styled jp-mod-accept jp-Loop-accept"
              disabled={busy}
              onClick={() => void session.proposalActions.accept(proposalId)}
            >
              Accept
            </button>
          ) : proposal.origin === 'offline' ? null : (
            <button
              className="jp-Button jp-mod-styled jp-mod-accept jp-Loop-regenerate"
              disabled={busy || session.conversation.isBusy}
              onClick={() =>
                void session.proposalActions.regenerate(proposalId)
              }
              title="Ask the assistant to propose it again for the cell as it is now"
            >
              Regenerate
            </button>
          )}
          <button
            className="jp-Button jp-mod-styled jp-mod-reject jp-Loop-reject"
            disabled={busy}
            onClick={() => void session.proposalActions.reject(proposalId)}
          >
            Reject
          </button>
        </span>
      </div>
      {state === 'stale' && (
        <p className="jp-Loop-OnCell-stale" role="status">
          {view.reason} This proposal can no longer be applied as it is.
        </p>
      )}
      {proposal.kind === 'outputs' && (
        <OutputsPreview json={proposal.new_outputs ?? '[]'} />
      )}
      {proposal.kind === 'version' && (
        <VersionSummary
          proposal={proposal}
          cellsNow={session.proposals.cellCount()}
        />
      )}
      {(proposal.kind === 'insert' || proposal.kind === 'modify') && (
        <CodeDiff
          original={before}
          modified={after}
          mimeType={props.mimeType}
          languages={props.languages}
          label={title}
        />
      )}
    </div>
  );
}

/** The cells of a version proposal's notebook (JSON text); null once it is not held. */
export function cellsIn(json: string | null | undefined): number | null {
  try {
    const version = JSON.parse(json ?? '') as { cells?: unknown[] };
    return version.cells?.length ?? 0;
  } catch {
    return null;
  }
}

/**
 * What accepting a version proposal does, in a sentence.
 *
 * @param cells how many cells the version has (null: the proposal no longer holds it)
 * @param cellsNow how many cells the notebook has now
 */
export function versionText(
  version: number | null | undefined,
  cells: number | null,
  cellsNow: number
): string {
  if (cells === null) {
    return 'The version is no longer held by this proposal.';
  }
  const count = (n: number) => `${n} cell${n === 1 ? '' : 's'}`;
  return (
    `Puts version ${version ?? '?'} (${count(cells)}, with their ` +
    `outputs) in place of the ${count(cellsNow)} the notebook has now. ` +
    'Once accepted, Z in command mode (Edit › Undo) takes it back.'
  );
}

/** A version proposal in a sentence; its notebook is read once, not at each render. */
function VersionSummary(props: {
  proposal: IProposal;
  cellsNow: number;
}): JSX.Element {
  const { proposal, cellsNow } = props;
  const cells = React.useMemo(
    () => cellsIn(proposal.new_notebook),
    [proposal.new_notebook]
  );
  return (
    <p className="jp-Loop-OnCell-version">
      {versionText(proposal.version, cells, cellsNow)}
    </p>
  );
}

/** Outputs a proposal puts back, as text (rich outputs by their types). */
function OutputsPreview(props: { json: string }): JSX.Element {
  const lines = React.useMemo(() => outputsAsText(props.json), [props.json]);
  return (
    <pre className="jp-Loop-OnCell-outputs" aria-label="Outputs to restore">
      {lines || '(no output)'}
    </pre>
  );
}

/** nbformat outputs as the text a preview shows: streams and plain text as they are. */
export function outputsAsText(json: string): string {
  let outputs: nbformat.IOutput[];
  try {
    outputs = JSON.parse(json) as nbformat.IOutput[];
  } catch {
    return '';
  }
  return outputs
    .map(output => {
      if (output.output_type === 'stream') {
        return joined((output as nbformat.IStream).text);
      }
      if (output.output_type === 'error') {
        const error = output as nbformat.IError;
        return `${error.ename}: ${error.evalue}\n`;
      }
      const data = (output as nbformat.IDisplayData).data ?? {};
      const plain = data['text/plain'];
      const text =
        plain !== undefined
          ? joined(plain as nbformat.MultilineString)
          : `[${Object.keys(data).join(', ')}]`;
      return text.endsWith('\n') ? text : `${text}\n`;
    })
    .join('');
}

function joined(text: nbformat.MultilineString): string {
  return Array.isArray(text) ? text.join('') : text;
}

/** The agent asks to run this cell: Allow once / Allow for this turn / Deny. */
export class ApprovalOnCell extends ReactWidget {
  constructor(
    private readonly _session: AgentSession,
    private readonly _cellId: string
  ) {
    super();
    this.addClass('jp-Loop-OnCell');
    this.addClass('jp-Loop-CellApproval');
    this.node.setAttribute('role', 'group');
    // Who asks is in the card's text (askerOf): a turn of the panel or an outside client.
    this.node.setAttribute('aria-label', 'A request to run this cell');
    isolate(this.node);
  }

  protected render(): JSX.Element {
    return <ApprovalOnCellView session={this._session} cellId={this._cellId} />;
  }
}

function ApprovalOnCellView(props: {
  session: AgentSession;
  cellId: string;
}): JSX.Element | null {
  const { session } = props;
  useSignal(session.conversation.changed);
  useSignal(session.changed);
  const approval = session.conversation.approval;
  if (!approval) {
    return null;
  }
  const others = approval.cell_ids.length - 1;
  return (
    <div className="jp-Loop-OnCell-bar">
      <span className="jp-Loop-OnCell-text jp-Loop-OnCell-title">
        {askerOf(approval)} wants to run this cell
        {others > 0 ? ` and ${others} other${others === 1 ? '' : 's'}` : ''}.
      </span>
      <ApprovalButtons session={session} approval={approval} />
    </div>
  );
}
