import { NotebookModel } from '@jupyterlab/notebook';
import type { YNotebook } from '@jupyter/ydoc';

import { ConversationModel, entryOf } from '../conversation';
import { FakeServerDoc, turnRecord } from './ysync';

describe('ConversationModel', () => {
  let model: NotebookModel;
  let server: FakeServerDoc;
  let conversation: ConversationModel;

  beforeEach(() => {
    model = new NotebookModel();
    server = new FakeServerDoc(model);
    conversation = new ConversationModel((model.sharedModel as YNotebook).ydoc);
  });

  afterEach(() => {
    conversation.dispose();
    model.dispose();
  });

  it('starts empty', () => {
    expect(conversation.turn).toBeNull();
    expect(conversation.turns()).toEqual([]);
    expect(conversation.isBusy).toBe(false);
  });

  it('shows the live turn and the text the server streams', () => {
    let changes = 0;
    conversation.changed.connect(() => changes++);
    server.beginTurn('t1', 'Why does cell 2 fail?');
    server.stream('a1', 'It divides ');
    server.stream('a1', 'by **zero**.');
    expect(conversation.isBusy).toBe(true);
    expect(conversation.turns()).toEqual([
      {
        turnId: 't1',
        turn: expect.objectContaining({ id: 't1', state: 'running' }),
        entries: [
          { id: 't1-u', kind: 'user', text: 'Why does cell 2 fail?' },
          { id: 'a1', kind: 'assistant', text: 'It divides by **zero**.' }
        ]
      }
    ]);
    expect(changes).toBeGreaterThanOrEqual(3);
  });

  it('reads tool steps, notices, usage and the end of a turn', () => {
    server.beginTurn('t1', 'fix it');
    server.addEntry({
      id: 'e1',
      kind: 'tool',
      name: 'run_cells',
      summary: 'ran cell 2 → ZeroDivisionError',
      detail: 'ZeroDivisionError: division by zero',
      ok: false
    });
    server.addEntry({
      id: 'e2',
      kind: 'notice',
      text: 'Rate limited',
      level: 'error'
    });
    server.updateTurn('t1', {
      state: 'done',
      usage: { input_tokens: 1200, output_tokens: 80 }
    });
    const [turn] = conversation.turns();
    expect(turn.entries.map(e => e.kind)).toEqual(['user', 'tool', 'notice']);
    expect(turn.entries[1]).toMatchObject({ ok: false, name: 'run_cells' });
    expect(turn.turn?.usage).toEqual({ input_tokens: 1200, output_tokens: 80 });
    expect(conversation.isBusy).toBe(false);
  });

  it('shows a pending approval and its end', () => {
    server.beginTurn('t1', 'run it');
    server.agent.set('approval', {
      id: 'ap1',
      turn_id: 't1',
      cell_ids: ['c1'],
      sources: { c1: '1/0' }
    });
    expect(conversation.approval).toMatchObject({
      id: 'ap1',
      cell_ids: ['c1']
    });
    server.agent.delete('approval');
    expect(conversation.approval).toBeNull();
  });

  it('puts the history before the live turn, which wins for its own id', () => {
    server.beginTurn('t2', 'second question');
    conversation.setHistory({
      file_id: 'f',
      turn: null,
      messages: [
        { id: 'm1', turn_id: 't1', role: 'user', text: 'first question' },
        { id: 'm2', turn_id: 't1', role: 'assistant', text: 'first answer' },
        { id: 'm3', turn_id: 't2', role: 'user', text: 'second question' }
      ],
      turns: [
        {
          ...turnRecord('t1', 'done'),
          usage: { input_tokens: 5, output_tokens: 7 }
        } as never
      ]
    });
    const turns = conversation.turns();
    expect(turns.map(t => t.turnId)).toEqual(['t1', 't2']);
    expect(turns[0].entries.map(e => e.id)).toEqual(['m1', 'm2']);
    expect(turns[0].turn?.usage).toEqual({ input_tokens: 5, output_tokens: 7 });
    expect(turns[1].entries.map(e => e.id)).toEqual(['t2-u']);
  });

  it('uses the history for a turn whose live entries are gone', () => {
    conversation.setHistory({
      file_id: 'f',
      turn: turnRecord('t1', 'done') as never,
      messages: [
        { id: 'm1', turn_id: 't1', role: 'user', text: 'q' },
        { id: 'm2', turn_id: 't1', role: 'assistant', text: 'a' }
      ]
    });
    const [turn] = conversation.turns();
    expect(turn.entries.map(e => e.id)).toEqual(['m1', 'm2']);
    expect(turn.turn?.state).toBe('done');
  });

  it('keeps the previous turn when a new one starts, and asks for the history', () => {
    const changed: string[] = [];
    conversation.turnChanged.connect((_, turn) => changed.push(turn?.id ?? ''));
    server.beginTurn('t1', 'first');
    server.stream('a1', 'answer one');
    server.updateTurn('t1', { state: 'done' });
    server.beginTurn('t2', 'second');
    expect(changed).toEqual(['t2']);
    const turns = conversation.turns();
    expect(turns.map(t => t.turnId)).toEqual(['t1', 't2']);
    expect(turns[0].entries.map(e => e.kind)).toEqual(['user', 'assistant']);
    expect(turns[0].turn?.state).toBe('done');
  });

  it('empties on a new conversation and ignores a history of the old one', () => {
    const changed: (string | null)[] = [];
    conversation.turnChanged.connect((_, turn) =>
      changed.push(turn?.id ?? null)
    );
    conversation.setHistory({
      file_id: 'f',
      turn: null,
      messages: [{ id: 'm0', turn_id: 't0', role: 'user', text: 'older' }]
    });
    server.beginTurn('t1', 'failed question');
    server.addEntry({ id: 'e1', kind: 'notice', text: 'boom', level: 'error' });
    server.updateTurn('t1', { state: 'error', error: 'boom' });
    expect(conversation.turns().map(t => t.turnId)).toEqual(['t0', 't1']);

    server.newConversation('c1');
    expect(conversation.turn).toBeNull();
    expect(conversation.turns()).toEqual([]);
    expect(conversation.conversationId).toBe('c1');
    expect(changed).toEqual([null]); // the session reloads the history

    // A reply loaded before the new conversation began comes too late: ignored.
    conversation.setHistory({
      file_id: 'f',
      conversation: null,
      turn: turnRecord('t1', 'error') as never,
      messages: [{ id: 'm1', turn_id: 't1', role: 'user', text: 'failed' }]
    });
    expect(conversation.turns()).toEqual([]);
    conversation.setHistory({
      file_id: 'f',
      conversation: { id: 'c1', started_at: '', by: 'ada' },
      turn: null,
      messages: []
    });
    expect(conversation.loaded).toBe(true);

    server.beginTurn('t2', 'fresh question');
    expect(conversation.turns().map(t => t.turnId)).toEqual(['t2']);
  });

  it('shows a started turn before its first entry', () => {
    server.agent.set('turn', turnRecord('t1', 'running'));
    expect(conversation.turns()).toEqual([
      { turnId: 't1', entries: [], turn: expect.objectContaining({ id: 't1' }) }
    ]);
  });
});

describe('entryOf', () => {
  it('turns durable messages into entries', () => {
    expect(
      entryOf({
        id: 'm',
        turn_id: 't',
        role: 'tool',
        text: 'read cell 3',
        tool: { name: 'read_cell', detail: 'x = 1' }
      })
    ).toEqual({
      id: 'm',
      kind: 'tool',
      name: 'read_cell',
      summary: 'read cell 3',
      detail: 'x = 1',
      ok: undefined
    });
    expect(
      entryOf({
        id: 'n',
        turn_id: 't',
        role: 'notice',
        text: 'boom',
        level: 'error'
      })
    ).toEqual({ id: 'n', kind: 'notice', text: 'boom', level: 'error' });
  });
});
