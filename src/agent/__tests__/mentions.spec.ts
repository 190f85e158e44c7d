import { mentionedCells, union } from '../mentions';

describe('mentionedCells', () => {
  const ids = ['c1', 'c2', 'c3'];

  it('reads @cell as the active cell', () => {
    expect(mentionedCells('why does @cell fail?', ids, 'c2')).toEqual(['c2']);
    expect(mentionedCells('why does @cell fail?', ids, null)).toEqual([]);
  });

  it('reads @cellN and @cell#N as the N-th cell', () => {
    expect(mentionedCells('compare @cell1 and @cell#3', ids, null)).toEqual([
      'c1',
      'c3'
    ]);
  });

  it('ignores positions out of range, e-mail addresses and repeats', () => {
    expect(
      mentionedCells('@cell9 me@cell1.org @cell1 @cell1', ids, null)
    ).toEqual(['c1']);
  });

  it('is case-insensitive and stops at punctuation', () => {
    expect(mentionedCells('(@Cell2), then @CELL.', ids, 'c3')).toEqual([
      'c2',
      'c3'
    ]);
  });
});

describe('union', () => {
  it('appends the missing ids in order', () => {
    expect(union(['a', 'b'], ['b', 'c', 'a', 'd'])).toEqual([
      'a',
      'b',
      'c',
      'd'
    ]);
  });
});
