import type { YNotebook } from '@jupyter/ydoc';
import { NotebookModel } from '@jupyterlab/notebook';
import { ServerConnection } from '@jupyterlab/services';

import { IProposal } from '../../payloads';
import { AgentService } from '../service';
import { AgentSession } from '../session';
import { FakeAgentClient, responseError } from './fakeclient';
import { FakeServerDoc, notebookWith } from './ysync';

describe('AgentSession', () => {
  let model: NotebookModel;
  let ids: string[];
  let server: FakeServerDoc;
  let client: FakeAgentClient;
  let notices: string[];
  let service: AgentService;
  let session: AgentSession;

  beforeEach(() => {
    ({ model, ids } = notebookWith('1/0', 'print("ok")'));
    server = new FakeServerDoc(model);
    client = new FakeAgentClient();
    notices = [];
    service = new AgentService({
      client,
      notify: message => notices.push(message),
      reconnectDelays: [5]
    });
    session = service.sessionFor({
      sharedModel: model.sharedModel as YNotebook,
      path: () => 'work/nb.ipynb'
    });
  });

  afterEach(() => {
    service.dispose();
    model.dispose();
  });

  it('is one per notebook, disposed with it', () => {
    expect(
      service.sessionFor({
        sharedModel: model.sharedModel as YNotebook,
        path: () => 'x'
      })
    ).toBe(session);
    model.sharedModel.dispose();
    expect(session.isDisposed).toBe(true);
  });

  it('loads the conversation of its path', async () => {
    client.conversationReply = {
      file_id: 'f1',
      turn: null,
      messages: [{ id: 'm1', turn_id: 't0', role: 'user', text: 'hello' }]
    };
    await session.load();
    expect(client.calls[0]).toEqual({
      name: 'conversation',
      args: ['work/nb.ipynb']
    });
    expect(session.conversation.turns()[0].entries[0]).toMatchObject({
      text: 'hello'
    });
  });

  it('sends a message with the focus, mentions and settings', async () => {
    await service.refreshModels();
    service.setSettings({ approvalPolicy: 'turn', maxSteps: 5 });
    session.addFocus([ids[1]]);
    session.draft = 'why does @cell fail?';
    const sent = await session.send(session.draft, ids[0]);
    expect(sent).toBe(true);
    expect(client.calls.find(c => c.name === 'startTurn')?.args[0]).toEqual({
      path: 'work/nb.ipynb',
      message: 'why does @cell fail?',
      model: 'scripted-tools',
      focus_cell_ids: [ids[1], ids[0]],
      approval: 'turn',
      max_steps: 5,
      active_cell_id: ids[0]
    });
    expect(session.draft).toBe('');
    expect(session.focus).toEqual([]);
    expect(session.outgoing).toEqual({
      text: 'why does @cell fail?',
      turnId: 't-new'
    });
    server.beginTurn('t-new', 'why does @cell fail?');
    expect(session.outgoing).toBeNull();
  });

  it('sends a message to the ACP agent picked, and none to the assistant', async () => {
    client.agentsReply.agents.push({
      name: 'qwen',
      kind: 'acp',
      label: 'Qwen Code',
      available: true,
      why_not: null
    });
    await service.refreshAgents();
    expect(service.agents.map(agent => agent.name)).toEqual([
      'builtin',
      'qwen'
    ]);
    expect(service.agent).toBe('builtin');
    expect(await session.send('first', ids[0])).toBe(true);
    server.beginTurn('t-new', 'first');
    server.updateTurn('t-new', { state: 'done' });
    service.chooseAgent('qwen');
    expect(await session.send('second', ids[0])).toBe(true);
    const sent = client.calls.filter(c => c.name === 'startTurn');
    expect(sent.map(c => (c.args[0] as { agent?: string }).agent)).toEqual([
      undefined,
      'qwen'
    ]);
  });

  it('sends the active cell even when the message names no cell', async () => {
    expect(await session.send('what went wrong?', ids[1])).toBe(true);
    const request = client.calls.find(c => c.name === 'startTurn')?.args[0];
    expect(request).toMatchObject({ active_cell_id: ids[1] });
    expect(request).not.toHaveProperty('focus_cell_ids');
  });

  it('keeps the draft when the server refuses, and says why', async () => {
    client.fail(
      'startTurn',
      responseError(409, 'A turn is already running on this notebook.')
    );
    session.draft = 'hello';
    expect(await session.send('hello', null)).toBe(false);
    expect(session.draft).toBe('hello');
    expect(session.outgoing).toBeNull();
    expect(notices).toEqual([
      'The message was not sent: A turn is already running on this notebook.'
    ]);
  });

  it('does not send while a turn runs', async () => {
    server.beginTurn('t1', 'first');
    expect(await session.send('second', null)).toBe(false);
    expect(client.names()).not.toContain('startTurn');
  });

  it('starts a new conversation, not while a turn runs, and says why the server refused', async () => {
    server.beginTurn('t1', 'first');
    expect(await session.newConversation()).toBe(false);
    expect(client.names()).not.toContain('newConversation');
    server.updateTurn('t1', { state: 'error', error: 'boom' });

    client.fail(
      'newConversation',
      responseError(409, 'The agent is working on this notebook.')
    );
    expect(await session.newConversation()).toBe(false);
    expect(notices).toEqual([
      'A new conversation could not be started: The agent is working on this notebook.'
    ]);

    expect(await session.newConversation()).toBe(true);
    expect(client.calls.slice(-2)).toEqual([
      { name: 'newConversation', args: ['work/nb.ipynb'] },
      { name: 'conversation', args: ['work/nb.ipynb'] }
    ]);
  });

  it('stops the running turn and answers approvals', async () => {
    server.beginTurn('t1', 'run it');
    server.agent.set('approval', {
      id: 'ap1',
      turn_id: 't1',
      cell_ids: [ids[0]],
      sources: { [ids[0]]: '1/0' },
      source_hashes: { [ids[0]]: 'h1' }
    });
    await session.answer('once');
    await session.stop();
    expect(client.calls.slice(-2)).toEqual([
      {
        name: 'answerApproval',
        args: ['work/nb.ipynb', 'ap1', 'once', { [ids[0]]: 'h1' }]
      },
      { name: 'stopTurn', args: ['work/nb.ipynb', 't1'] }
    ]);
  });

  it('accepts with a claim: the edit and the accepted mark in one transaction', async () => {
    server.putProposal({
      id: 'p1',
      kind: 'modify',
      cell_id: ids[0],
      base_source: '1/0',
      new_source: '1/1'
    });
    const seen: [string | undefined, string | undefined][] = [];
    server.doc.on('afterTransaction', () =>
      seen.push([
        server.source(ids[0]),
        (server.proposals.get('p1') as IProposal).status
      ])
    );
    expect(await session.proposalActions.accept('p1')).toBe(true);
    expect(client.calls).toEqual([
      { name: 'claimProposal', args: ['work/nb.ipynb', 'p1'] }
    ]);
    // The server never sees the edit without the mark (nor the mark without it).
    expect(seen[0]).toEqual(['1/1', 'accepted']);
    expect(seen.filter(([, status]) => status !== 'accepted')).toEqual([]);
    expect(server.proposals.get('p1')).toMatchObject({
      status: 'accepted',
      resolved_by: 'ada',
      claim: 'claim-p1'
    });
    // Undo in this tab reverts the accepted edit.
    model.sharedModel.cells[0].undo();
    expect(model.sharedModel.cells[0].getSource()).toBe('1/0');
  });

  it('records the id of the cell it inserted', async () => {
    server.putProposal({
      id: 'p1',
      kind: 'insert',
      cell_id: ids[0],
      cell_type: 'code',
      new_source: 'x = 1'
    });
    expect(await session.proposalActions.accept('p1')).toBe(true);
    const accepted = server.proposals.get('p1') as IProposal;
    expect(accepted.new_cell_id).toBe(model.sharedModel.cells[1].getId());
    expect(model.sharedModel.cells[1].getSource()).toBe('x = 1');
  });

  it('leaves the cell alone when another tab holds the claim', async () => {
    server.putProposal({
      id: 'p1',
      kind: 'modify',
      cell_id: ids[0],
      base_source: '1/0',
      new_source: '1/1'
    });
    client.fail(
      'claimProposal',
      responseError(409, 'bob is accepting this proposal in another tab.')
    );
    expect(await session.proposalActions.accept('p1')).toBe(false);
    expect(model.sharedModel.cells[0].getSource()).toBe('1/0');
    expect(server.proposals.get('p1')).toMatchObject({ status: 'pending' });
    expect(notices[0]).toContain('another tab');
  });

  it('refuses a stale proposal without touching the cell', async () => {
    server.putProposal({
      id: 'p1',
      kind: 'modify',
      cell_id: ids[0],
      base_source: 'old',
      new_source: 'new'
    });
    expect(await session.proposalActions.accept('p1')).toBe(false);
    expect(model.sharedModel.cells[0].getSource()).toBe('1/0');
    expect(client.calls).toEqual([]);
    expect(notices[0]).toContain('The cell changed since this was proposed.');
  });

  it('rejects without touching the notebook', async () => {
    server.putProposal({
      id: 'p1',
      kind: 'delete',
      cell_id: ids[1],
      base_source: 'print("ok")'
    });
    expect(await session.proposalActions.reject('p1')).toBe(true);
    expect(client.calls).toEqual([
      { name: 'rejectProposal', args: ['work/nb.ipynb', 'p1'] }
    ]);
    expect(model.sharedModel.cells).toHaveLength(2);
  });

  it('accepts all pending proposals of a turn and skips stale ones', async () => {
    server.putProposal({
      id: 'a',
      kind: 'modify',
      cell_id: ids[0],
      base_source: '1/0',
      new_source: '1/1',
      created_at: '2025-01-01T00:00:01Z'
    });
    server.putProposal({
      id: 'b',
      kind: 'modify',
      cell_id: ids[1],
      base_source: 'stale',
      new_source: 'x',
      created_at: '2025-01-01T00:00:02Z'
    });
    server.putProposal({
      id: 'c',
      kind: 'delete',
      cell_id: ids[1],
      base_source: 'print("ok")',
      created_at: '2025-01-01T00:00:03Z'
    });
    await session.proposalActions.acceptAll('t1');
    expect(client.calls.map(c => c.args[1])).toEqual(['a', 'c']);
    expect(model.sharedModel.cells.map(c => c.getSource())).toEqual(['1/1']);
  });

  it('regenerates a stale proposal: rejects it and asks again about the cell', async () => {
    server.putProposal({
      id: 'p1',
      kind: 'modify',
      cell_id: ids[0],
      base_source: 'old',
      new_source: 'new',
      summary: 'fix the division'
    });
    expect(await session.proposalActions.regenerate('p1')).toBe(true);
    expect(client.names()).toEqual(['rejectProposal', 'startTurn']);
    const request = client.calls[1].args[0] as {
      message: string;
      focus_cell_ids: string[];
    };
    expect(request.focus_cell_ids).toEqual([ids[0]]);
    expect(request.message).toContain('cell 1 ("fix the division")');
  });

  it('notices a lost connection, reconnects and reloads', async () => {
    client.fail(
      'conversation',
      new ServerConnection.NetworkError(new TypeError('Failed to fetch'))
    );
    await session.load();
    expect(service.connection).toBe('lost');
    expect(session.loadError).toContain('cannot be reached');
    await new Promise(resolve => setTimeout(resolve, 50));
    expect(service.connection).toBe('connected');
    expect(client.names()).toEqual(['conversation', 'models', 'conversation']);
    expect(session.loadError).toBeNull();
  });
});
