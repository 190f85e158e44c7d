import type { YNotebook } from '@jupyter/ydoc';
import { NotebookModel } from '@jupyterlab/notebook';
import { ReactWidget } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import { FakeAgentClient } from '../../agent/__tests__/fakeclient';
import { notebookWith } from '../../agent/__tests__/ysync';
import { AgentService } from '../../agent/service';
import { AgentSession } from '../../agent/session';
import { IApprovalRequest } from '../../payloads';
import { ApprovalCard } from '../approval';

describe('ApprovalCard', () => {
  let model: NotebookModel;
  let service: AgentService;
  let session: AgentSession;
  let widget: ReactWidget | null = null;

  beforeEach(() => {
    ({ model } = notebookWith('1/0'));
    service = new AgentService({ client: new FakeAgentClient() });
    session = service.sessionFor({
      sharedModel: model.sharedModel as YNotebook,
      path: () => 'nb.ipynb'
    });
  });

  afterEach(() => {
    widget?.dispose();
    widget = null;
    service.dispose();
    model.dispose();
  });

  async function card(approval: IApprovalRequest): Promise<HTMLElement> {
    widget = ReactWidget.create(
      <ApprovalCard session={session} approval={approval} />
    );
    Widget.attach(widget, document.body);
    await widget.renderPromise;
    return widget.node.querySelector('.jp-Loop-Approval') as HTMLElement;
  }

  it("shows an ACP agent's permission request in its words, not as cells to run", async () => {
    const words =
      'Qwen Code asks to: mcp__jupyter-loop__propose_modify\n' +
      'Options: Always allow, Allow, Reject';
    const node = await card({
      id: 'a1',
      turn_id: 't1',
      cell_ids: [],
      sources: { call_1: words },
      source_hashes: { call_1: 'h' },
      requested_by: 'Qwen Code for ada'
    });
    expect(node.getAttribute('aria-label')).toBe(
      'Qwen Code for ada asks permission'
    );
    expect(node.textContent).toContain('Qwen Code for ada asks permission:');
    expect(node.querySelector('pre')?.textContent).toBe(words);
    expect(node.textContent).not.toContain('cells');
    expect(node.querySelectorAll('button').length).toBe(3);
  });

  it('asks to run cells when the request names them', async () => {
    const node = await card({
      id: 'a2',
      turn_id: 't1',
      cell_ids: ['c0'],
      sources: { c0: '1/0' },
      source_hashes: { c0: 'h' }
    });
    expect(node.getAttribute('aria-label')).toBe(
      'The assistant asks to run cells'
    );
    expect(node.textContent).toContain('The assistant wants to run a cell:');
  });
});
