import { cellsIn, versionText } from '../cellviews';

describe('a version proposal in words', () => {
  it('counts the cells of the version it holds', () => {
    expect(cellsIn(JSON.stringify({ cells: [{}, {}] }))).toBe(2);
    expect(cellsIn(JSON.stringify({ metadata: {} }))).toBe(0);
    expect(cellsIn(null)).toBeNull(); // resolved: the proposal no longer holds it
    expect(cellsIn('{')).toBeNull();
  });

  it('says what accepting puts in place of what, and how to undo it', () => {
    expect(versionText(7, 1, 3)).toBe(
      'Puts version 7 (1 cell, with their outputs) in place of the 3 cells the ' +
        'notebook has now. Once accepted, Z in command mode (Edit › Undo) takes it back.'
    );
    expect(versionText(7, null, 3)).toBe(
      'The version is no longer held by this proposal.'
    );
  });
});
