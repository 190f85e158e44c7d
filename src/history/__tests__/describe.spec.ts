import { duration, kernelLabel, outcome, runDuration } from '../describe';
import { IRunRecord } from '../types';

function run(fields: Partial<IRunRecord>): IRunRecord {
  return {
    path: 'a.ipynb',
    cell_id: 'c0',
    run_id: 'r',
    by: 'a tab of ada',
    user: 'ada',
    channel: 'tab',
    turn: null,
    approval: null,
    client: null,
    run_all: false,
    source: '1',
    kernel_id: 'abcdef0123456789',
    kernel_run: 'k1',
    queued: 100,
    started: 100,
    ended: 101.5,
    status: 'ok',
    note: null,
    execution_count: 1,
    outputs_shown: false,
    outputs_url: null,
    ...fields
  };
}

describe('how a run is said', () => {
  it('says durations as people read them', () => {
    expect(duration(0.25)).toBe('0.3 s');
    expect(duration(42.4)).toBe('42 s');
    expect(duration(245)).toBe('4 min 5 s');
    expect(duration(7260)).toBe('2 h 1 min');
    expect(runDuration(run({}))).toBe('1.5 s');
    expect(runDuration(run({ started: null }))).toBe('never started');
  });

  it('says how a run ended, with its note', () => {
    expect(outcome(run({}))).toBe('ok');
    expect(outcome(run({ status: 'cut_off', note: 'kernel died' }))).toBe(
      'cut off (the kernel died or restarted): kernel died'
    );
  });

  it('numbers the starts of a kernel only when the list has several', () => {
    const first = run({ kernel_run: 'k1' });
    const second = run({ kernel_run: 'k2' });
    expect(kernelLabel(first, [first])).toBe('abcdef01');
    // Newest first: the later start is the second.
    expect(kernelLabel(second, [second, first])).toBe('abcdef01, start 2');
    expect(kernelLabel(first, [second, first])).toBe('abcdef01, start 1');
  });
});
