import {
  duration,
  kernelLabel,
  outcome,
  runDuration,
  restoredNotice,
  startedBy,
  versionOrigin,
  versionSize
} from '../describe';
import { IRunRecord, IVersion } from '../types';

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
    taken_over: false,
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

  it('says when a restarted server took the run over', () => {
    expect(startedBy(run({}))).toBe('a tab of ada');
    expect(startedBy(run({ taken_over: true }))).toBe(
      'a tab of ada, taken over after a server restart'
    );
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

function version(fields: Partial<IVersion>): IVersion {
  return {
    number: 7,
    path: 'a.ipynb',
    kind: 'saved',
    restored_from: null,
    created: 100,
    saved: 100,
    sha256: 'f00',
    cells: 3,
    size: 1234,
    ...fields
  };
}

describe('versionOrigin', () => {
  it('says which version a restore brought back', () => {
    expect(versionOrigin(version({ kind: 'restored', restored_from: 4 }))).toBe(
      'a restore of version 4'
    );
  });

  it('says a file found on disk was written by someone else', () => {
    expect(versionOrigin(version({ kind: 'found on disk' }))).toBe(
      'the file as another program left it'
    );
    expect(versionOrigin(version({}))).toBe('a save');
  });
});

describe('versionSize', () => {
  it('gives cells and bytes in the units people read', () => {
    expect(versionSize(version({}))).toBe('3 cells, 1.2 KB');
    expect(versionSize(version({ cells: 1, size: 900 }))).toBe('1 cell, 900 B');
    expect(versionSize(version({ size: 3 * 1024 * 1024 }))).toBe(
      '3 cells, 3.0 MB'
    );
  });
});

describe('restoredNotice', () => {
  const listed = [
    version({ number: 9, kind: 'restored', restored_from: 4 }),
    version({ number: 8 }),
    version({ number: 4 })
  ];

  it('names the version the restore replaced, to undo it', () => {
    const restored = {
      path: 'a.ipynb',
      restored: 4,
      live: false,
      version: listed[0],
      proposal: null
    };
    expect(restoredNotice(restored, listed)).toBe(
      'Restored version 4 (now version 9). What the notebook held before is ' +
        'version 8: restore it to undo.'
    );
  });

  it('says when the file held that version already', () => {
    const restored = {
      path: 'a.ipynb',
      restored: 4,
      live: false,
      version: null,
      proposal: null
    };
    expect(restoredNotice(restored, listed)).toBe(
      'The notebook already held version 4.'
    );
  });

  it('points an open notebook to the proposal at its top, and how to undo it', () => {
    const proposed = {
      path: 'a.ipynb',
      restored: 4,
      live: true,
      version: null,
      proposal: 'p1'
    };
    expect(restoredNotice(proposed, listed)).toBe(
      'Version 4 is proposed at the top of the notebook: accept it there. ' +
        'Then Z in command mode (Edit › Undo) takes it back.'
    );
  });
});
