import {
  compactDiff,
  diffStats,
  lineDiff,
  replacement,
  splitLines
} from '../diff';

describe('splitLines', () => {
  it('has no line for an empty text and none after a final newline', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a\nb\n')).toEqual(['a', 'b']);
    expect(splitLines('a\r\nb')).toEqual(['a', 'b']);
  });
});

describe('lineDiff', () => {
  it('keeps equal texts as unchanged lines', () => {
    expect(lineDiff('a\nb', 'a\nb')).toEqual([
      { kind: 'same', text: 'a', oldLine: 1, newLine: 1 },
      { kind: 'same', text: 'b', oldLine: 2, newLine: 2 }
    ]);
  });

  it('shows a changed line as a deletion then an addition', () => {
    const lines = lineDiff(
      'x = 1\ny = 1 / 0\nprint(y)',
      'x = 1\ny = 1 / 1\nprint(y)'
    );
    expect(lines.map(l => [l.kind, l.text])).toEqual([
      ['same', 'x = 1'],
      ['del', 'y = 1 / 0'],
      ['add', 'y = 1 / 1'],
      ['same', 'print(y)']
    ]);
    expect(lines[2]).toMatchObject({ newLine: 2 });
    expect(lines[1]).toMatchObject({ oldLine: 2 });
  });

  it('finds common lines between insertions and deletions', () => {
    const lines = lineDiff('a\nb\nc\nd', 'a\nc\nx\nd\ne');
    expect(lines.map(l => `${l.kind}:${l.text}`)).toEqual([
      'same:a',
      'del:b',
      'same:c',
      'add:x',
      'same:d',
      'add:e'
    ]);
    expect(diffStats(lines)).toEqual({ added: 2, removed: 1 });
  });

  it('diffs from and to an empty cell', () => {
    expect(lineDiff('', 'a\nb').map(l => l.kind)).toEqual(['add', 'add']);
    expect(lineDiff('a', '').map(l => l.kind)).toEqual(['del']);
  });

  it('handles non-ASCII text', () => {
    const lines = lineDiff('print("héllo")', 'print("héllo wörld 🌍")');
    expect(diffStats(lines)).toEqual({ added: 1, removed: 1 });
  });
});

describe('compactDiff', () => {
  it('keeps context around changes and folds the rest into gaps', () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n');
    const after = before.replace('line 10', 'LINE 10');
    const compact = compactDiff(lineDiff(before, after), 1);
    expect(compact).toEqual([
      { kind: 'gap', lines: 9 },
      { kind: 'same', text: 'line 9', oldLine: 10, newLine: 10 },
      { kind: 'del', text: 'line 10', oldLine: 11 },
      { kind: 'add', text: 'LINE 10', newLine: 11 },
      { kind: 'same', text: 'line 11', oldLine: 12, newLine: 12 },
      { kind: 'gap', lines: 8 }
    ]);
  });
});

describe('replacement', () => {
  it('is the span between the common prefix and suffix', () => {
    expect(replacement('y = 1 / 0', 'y = 1 / 1')).toEqual({
      start: 8,
      end: 9,
      text: '1'
    });
    expect(replacement('abc', 'abc')).toEqual({ start: 3, end: 3, text: '' });
    expect(replacement('', 'new')).toEqual({ start: 0, end: 0, text: 'new' });
  });

  it('applied to the old text gives the new one', () => {
    const cases: [string, string][] = [
      ['aaa', 'aa'],
      ['abcabc', 'abc'],
      ['x = 1\n', 'x = 1\ny = 2\n'],
      ['print(1)', '']
    ];
    for (const [before, after] of cases) {
      const { start, end, text } = replacement(before, after);
      expect(before.slice(0, start) + text + before.slice(end)).toBe(after);
    }
  });

  it('never splits a surrogate pair', () => {
    const before = 'a 😀 b';
    const after = 'a 😃 b';
    const { start, end, text } = replacement(before, after);
    expect(text).toBe('😃');
    expect(before.slice(start, end)).toBe('😀');
  });
});
