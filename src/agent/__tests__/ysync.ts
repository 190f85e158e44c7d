import { NotebookModel } from '@jupyterlab/notebook';
import type { YNotebook } from '@jupyter/ydoc';
import * as Y from 'yjs';

import { AGENT_MAP, IProposal, PROPOSALS_MAP } from '../../payloads';

const REMOTE = 'remote';

/**
 * A second document standing in for the server, synced both ways with a tab's
 * notebook by exchanging updates, and writing the agent's maps as the Python
 * side does (plain values, a Y.Array of Y.Maps, Y.Text for streamed text).
 */
export class FakeServerDoc {
  constructor(readonly model: NotebookModel) {
    const client = (model.sharedModel as YNotebook).ydoc;
    this.doc = new Y.Doc();
    Y.applyUpdate(this.doc, Y.encodeStateAsUpdate(client), REMOTE);
    this.doc.on('update', (update: Uint8Array, origin: unknown) => {
      if (origin !== REMOTE) {
        Y.applyUpdate(client, update, REMOTE);
      }
    });
    client.on('update', (update: Uint8Array, origin: unknown) => {
      if (origin !== REMOTE) {
        Y.applyUpdate(this.doc, update, REMOTE);
      }
    });
  }

  readonly doc: Y.Doc;

  get agent(): Y.Map<unknown> {
    return this.doc.getMap(AGENT_MAP);
  }

  get proposals(): Y.Map<unknown> {
    return this.doc.getMap(PROPOSALS_MAP);
  }

  /** Start a turn as the server does: its record and a fresh live list. */
  beginTurn(id: string, message: string, state = 'running'): void {
    this.doc.transact(() => {
      this.agent.set('turn', turnRecord(id, state));
      const live = new Y.Array<Y.Map<unknown>>();
      live.push([entry({ id: `${id}-u`, kind: 'user', text: message })]);
      this.agent.set('live', live);
      this.agent.delete('approval');
    });
  }

  /** Append streamed text to the turn's assistant entry (made on first use). */
  stream(entryId: string, text: string): void {
    const live = this.agent.get('live') as Y.Array<Y.Map<unknown>>;
    const found = live.toArray().find(e => e.get('id') === entryId);
    if (found) {
      (found.get('text') as Y.Text).insert(
        (found.get('text') as Y.Text).length,
        text
      );
      return;
    }
    live.push([
      entry({ id: entryId, kind: 'assistant', text: new Y.Text(text) })
    ]);
  }

  addEntry(fields: { [key: string]: unknown }): void {
    (this.agent.get('live') as Y.Array<Y.Map<unknown>>).push([entry(fields)]);
  }

  updateTurn(id: string, changes: { [key: string]: unknown }): void {
    const current = this.agent.get('turn') as { [key: string]: unknown };
    this.agent.set('turn', { ...current, id, ...changes });
  }

  /** Start a new conversation as the server does: no turn, no entries, its start. */
  newConversation(id: string): void {
    this.doc.transact(() => {
      this.agent.delete('turn');
      this.agent.delete('live');
      this.agent.set('conversation', {
        id,
        started_at: '2025-01-02T00:00:00.000Z',
        by: 'ada'
      });
    });
  }

  putProposal(proposal: Partial<IProposal> & { id: string }): void {
    this.proposals.set(proposal.id, {
      turn_id: 't1',
      status: 'pending',
      created_at: '2025-01-01T00:00:00.000Z',
      ...proposal
    });
  }

  /** The server's view of a cell's source. */
  source(cellId: string): string | undefined {
    const cells = this.doc.getArray<Y.Map<unknown>>('cells');
    const cell = cells.toArray().find(c => c.get('id') === cellId);
    return cell ? (cell.get('source') as Y.Text).toString() : undefined;
  }
}

export function turnRecord(
  id: string,
  state: string
): { [key: string]: unknown } {
  return {
    id,
    state,
    model: 'scripted-tools',
    provider: 'openai',
    started_by: 'ada',
    started_at: '2025-01-01T00:00:00.000Z',
    usage: { input_tokens: 0, output_tokens: 0 },
    steps: 0
  };
}

function entry(fields: { [key: string]: unknown }): Y.Map<unknown> {
  const map = new Y.Map<unknown>();
  for (const [key, value] of Object.entries(fields)) {
    map.set(key, value);
  }
  return map;
}

/** A notebook with one code cell per source; returns the model and the cell ids. */
export function notebookWith(...sources: string[]): {
  model: NotebookModel;
  ids: string[];
} {
  const model = new NotebookModel();
  const shared = model.sharedModel;
  quietly(() =>
    shared.insertCells(
      0,
      sources.map(source => ({ cell_type: 'code', source, metadata: {} }))
    )
  );
  // A fresh model may start with no cells or an empty one: keep only ours.
  while (shared.cells.length > sources.length) {
    shared.deleteCell(shared.cells.length - 1);
  }
  (shared as YNotebook).undoManager.clear();
  return { model, ids: shared.cells.map(cell => cell.getId()) };
}

/**
 * Run `f` without the Yjs warnings @jupyter/ydoc triggers when it creates a
 * cell ("Add Yjs type to a document before reading data", "Not same Y.Doc").
 */
export function quietly<T>(f: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    const text = String(args[0]);
    if (!/Add Yjs type to a document|Not same Y\.Doc/.test(text)) {
      warn(...args);
    }
  };
  try {
    return f();
  } finally {
    console.warn = warn;
  }
}
