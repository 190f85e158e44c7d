import { ICompletionStatus } from '../payloads';
import { CompletionUsage } from '../usage';

function status(requests: number): ICompletionStatus {
  return {
    configured: true,
    provider: 'openai',
    model: 'scripted-plain',
    hint: null,
    usage: {
      requests,
      input_tokens: 10 * requests,
      output_tokens: requests,
      failures: 0,
      cancelled: 0,
      last_error: null
    }
  };
}

describe('CompletionUsage', () => {
  let answers: Array<(value: ICompletionStatus) => void>;
  let failNext: boolean;
  let usage: CompletionUsage;

  beforeEach(() => {
    answers = [];
    failNext = false;
    usage = new CompletionUsage(() => {
      if (failNext) {
        failNext = false;
        return Promise.reject(new Error('404'));
      }
      return new Promise(resolve => answers.push(resolve));
    }, 10);
  });

  afterEach(() => usage.dispose());

  it('asks once at a time, and again after a refresh asked meanwhile', async () => {
    const changes: number[] = [];
    usage.changed.connect(() => changes.push(usage.status!.usage.requests));
    const first = usage.refresh();
    const second = usage.refresh();
    expect(answers).toHaveLength(1);
    answers[0](status(1));
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(answers).toHaveLength(2);
    answers[1](status(2));
    await Promise.all([first, second]);
    expect(changes).toEqual([1, 2]);
  });

  it('keeps the last figures when the server does not answer', async () => {
    const done = usage.refresh();
    answers[0](status(3));
    await done;
    failNext = true;
    await usage.refresh();
    expect(usage.status!.usage.requests).toBe(3);
  });

  it('makes one request for a burst of completions', async () => {
    for (let i = 0; i < 5; i++) {
      usage.refreshSoon();
    }
    expect(answers).toHaveLength(0);
    await new Promise(resolve => setTimeout(resolve, 30));
    expect(answers).toHaveLength(1);
  });
});
