import { OutputArea, OutputAreaModel } from '@jupyterlab/outputarea';
import {
  RenderMimeRegistry,
  standardRendererFactories
} from '@jupyterlab/rendermime';
import { PanelLayout, Widget } from '@lumino/widgets';

import { IInputRequest } from '../../payloads';
import { StdinItem } from '../stdin';

function request(id: string, password = false): IInputRequest {
  return { request_id: id, prompt: 'Your age:', password };
}

/** The answers a prompt sent, standing in for jupyter-loop's REST endpoint. */
class Answers {
  values: string[] = [];
  refusal: Error | null = null;

  send = async (value: string): Promise<void> => {
    this.values.push(value);
    if (this.refusal) {
      throw this.refusal;
    }
  };
}

function press(input: HTMLInputElement, key: string, ctrlKey = false): void {
  input.dispatchEvent(
    new KeyboardEvent('keydown', { key, ctrlKey, bubbles: true })
  );
}

describe('StdinItem', () => {
  let area: OutputArea;
  let answers: Answers;

  beforeEach(() => {
    area = new OutputArea({
      model: new OutputAreaModel(),
      rendermime: new RenderMimeRegistry({
        initialFactories: standardRendererFactories
      })
    });
    Widget.attach(area, document.body);
    answers = new Answers();
  });

  afterEach(() => {
    area.dispose();
  });

  function show(item: IInputRequest, kernelId = 'k1'): StdinItem {
    const stdin = new StdinItem({
      outputArea: area,
      request: item,
      kernelId,
      send: answers.send,
      inputHistoryScope: 'session'
    });
    const layout = area.layout;
    if (!(layout instanceof PanelLayout)) {
      throw new Error('An output area lays its items out in a panel');
    }
    layout.addWidget(stdin);
    return stdin;
  }

  function inputOf(item: StdinItem): HTMLInputElement {
    return item.node.querySelector('.jp-Stdin-input') as HTMLInputElement;
  }

  it("is JupyterLab's stdin item: prompt, box, focus", () => {
    const item = show(request('r1'));
    expect(item.hasClass('jp-OutputArea-stdin-item')).toBe(true);
    expect(
      item.node.querySelector('.jp-Stdin .jp-Stdin-prompt')?.textContent
    ).toBe('Your age:');
    expect(inputOf(item).type).toBe('text');
    expect(document.activeElement).toBe(inputOf(item));
  });

  it('masks a password', () => {
    expect(inputOf(show(request('r1', true))).type).toBe('password');
  });

  it('sends the answer once, then hides and takes no more keys', async () => {
    const item = show(request('r1'));
    inputOf(item).value = '42';
    press(inputOf(item), 'Enter');
    press(inputOf(item), 'Enter');
    await item.stdin.value;
    expect(answers.values).toEqual(['42']);
    expect(item.answered).toBe(true);
    expect(item.hasClass('jp-OutputArea-stdin-hiding')).toBe(true);
  });

  it('tells when the server refused the answer', async () => {
    answers.refusal = new Error('This prompt has already been answered.');
    const item = show(request('r1'));
    const failed = new Promise<unknown>(resolve =>
      item.failed.connect((_, error) => resolve(error))
    );
    press(inputOf(item), 'Enter');
    expect(await failed).toBe(answers.refusal);
  });

  it("offers the kernel's earlier answers with Up and Ctrl+Up", async () => {
    for (const [id, value] of [
      ['r1', 'foofoo'],
      ['r2', 'barbar']
    ]) {
      const item = show(request(id), 'history-kernel');
      inputOf(item).value = value;
      press(inputOf(item), 'Enter');
      await item.stdin.value;
      item.dispose();
    }
    const next = inputOf(show(request('r3'), 'history-kernel'));
    press(next, 'ArrowUp');
    expect(next.value).toBe('barbar');
    const search = inputOf(show(request('r4'), 'history-kernel'));
    search.value = 'foo';
    press(search, 'ArrowUp', true);
    expect(search.value).toBe('foofoo');
    // Another kernel has a history of its own.
    const elsewhere = inputOf(show(request('r5'), 'other-kernel'));
    press(elsewhere, 'ArrowUp');
    expect(elsewhere.value).toBe('');
  });

  it('lets the echo show past a capped output count once answered', async () => {
    area.maxNumberOutputs = 2;
    for (const text of ['a\n', 'b\n', 'c\n']) {
      area.model.add({ output_type: 'stream', name: 'stdout', text });
      area.model.add({ output_type: 'display_data', data: {}, metadata: {} });
    }
    const item = show(request('r1'));
    expect(area.maxNumberOutputs).toBe(2);
    press(inputOf(item), 'Enter');
    await item.stdin.value;
    expect(area.maxNumberOutputs).toBe(7);
  });
});
