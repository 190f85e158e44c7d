import type { YNotebook } from '@jupyter/ydoc';
import { NotebookModel } from '@jupyterlab/notebook';
import { RenderMimeRegistry } from '@jupyterlab/rendermime';
import { ReactWidget } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import { FakeAgentClient } from '../../agent/__tests__/fakeclient';
import { FakeServerDoc, notebookWith } from '../../agent/__tests__/ysync';
import { AgentService } from '../../agent/service';
import { AgentSession } from '../../agent/session';
import { TurnView } from '../conversation';

const ERROR = 'The model server rejected the API key (401).';

describe('TurnView', () => {
  let model: NotebookModel;
  let server: FakeServerDoc;
  let service: AgentService;
  let session: AgentSession;
  let widget: ReactWidget | null;

  beforeEach(() => {
    ({ model } = notebookWith('1/0'));
    server = new FakeServerDoc(model);
    service = new AgentService({ client: new FakeAgentClient() });
    session = service.sessionFor({
      sharedModel: model.sharedModel as YNotebook,
      path: () => 'nb.ipynb'
    });
    widget = null;
  });

  afterEach(() => {
    widget?.dispose();
    service.dispose();
    model.dispose();
  });

  /** The turn as the panel renders it, in the page. */
  async function render(): Promise<HTMLElement> {
    const [view] = session.conversation.turns();
    widget = ReactWidget.create(
      <TurnView
        session={session}
        view={view}
        rendermime={new RenderMimeRegistry()}
      />
    );
    Widget.attach(widget, document.body);
    await widget.renderPromise;
    return widget.node;
  }

  /** The elements showing exactly this text, as a reader finds it. */
  function shown(node: HTMLElement, text: string): Element[] {
    return Array.from(node.querySelectorAll('*')).filter(
      element =>
        element.children.length === 0 && element.textContent?.trim() === text
    );
  }

  it('shows a turn-ended error once: the notice, not again in the footer', async () => {
    // What the server writes when a provider error ends the turn (agent/turn.py).
    server.beginTurn('t1', 'Why?');
    server.addEntry({ id: 'e1', kind: 'notice', text: ERROR, level: 'error' });
    server.updateTurn('t1', { state: 'error', error: ERROR });
    const node = await render();
    expect(shown(node, ERROR)).toHaveLength(1);
    expect(node.querySelectorAll('[role="alert"]')).toHaveLength(1);
    expect(shown(node, 'The turn ended with an error.')).toHaveLength(1);
  });

  it('shows the error in the footer when no notice of the turn says it', async () => {
    // A turn cut off by a restart: the live entries hold no notice of it.
    server.beginTurn('t1', 'Why?');
    server.updateTurn('t1', { state: 'error', error: 'Cut off.' });
    const node = await render();
    expect(shown(node, 'Cut off.')).toHaveLength(1);
  });

  it('says an accepted change was undone once the cell is back as it was', async () => {
    const ids = session.cellIds();
    server.beginTurn('t1', 'Fix it.');
    server.putProposal({
      id: 'p1',
      kind: 'modify',
      cell_id: ids[0],
      base_source: '1/0',
      new_source: '1/1',
      resolved_by: 'ada'
    });
    session.proposals.apply('p1', { claim: 'k', by: 'ada', expires_in: 30 });
    let node = await render();
    expect(node.textContent).toContain('Accepted by ada.');
    widget?.dispose();

    model.sharedModel.cells[0].undo(); // Ctrl-Z in the cell
    node = await render();
    const card = node.querySelector('[data-proposal-id="p1"]');
    expect(card?.getAttribute('aria-label')).toBe('Edit cell 1: Undone');
    expect(card?.textContent).not.toContain('Accepted by ada.');
    expect(card?.textContent).toContain(
      'Accepted by ada, then undone in the notebook.'
    );
  });

  it("shows an ACP agent's thought collapsed, its text there when opened", async () => {
    // What acp/updates.py writes for agent_thought_chunk updates.
    server.beginTurn('t1', 'Fix it.');
    server.addEntry({ id: 'e1', kind: 'thought', text: 'divide by one' });
    const node = await render();
    const thought = node.querySelector('details.jp-Loop-Thought');
    expect(thought).not.toBeNull();
    expect((thought as HTMLDetailsElement).open).toBe(false);
    expect(thought?.querySelector('summary')?.textContent).toBe('Thought');
    expect(thought?.textContent).toContain('divide by one');
  });
});
