/**
 * One numbering for cells: the panel's tool lines, the proposal cards and the model all
 * count cells from 1 in document order, as the user sees them.
 *
 * A tool line's text is written by the server when the call runs ("read cell 3"); cells
 * inserted or deleted since move the cell. `renumberCells` rewrites the numbers of the
 * cells the line is about to where those cells are now, so the line, its "cell N" links
 * and the notebook agree.
 */

const CELL_NUMBERS = /\b(cells? )(\d+(?:, \d+)*)/;

/**
 * `text` with its first "cell N" / "cells N, M" reference renumbered to the current
 * positions of `cellIds` (in order). Left as it is when the counts differ or a cell is
 * gone (position 0).
 *
 * @param position - the 1-based position of a cell, 0 when it is gone
 */
export function renumberCells(
  text: string,
  cellIds: ReadonlyArray<string>,
  position: (cellId: string) => number
): string {
  const match = CELL_NUMBERS.exec(text);
  if (!match || cellIds.length === 0) {
    return text;
  }
  const numbers = match[2].split(', ');
  const now = cellIds.map(position);
  if (numbers.length !== now.length || now.some(n => n <= 0)) {
    return text;
  }
  const start = match.index + match[1].length;
  return (
    text.slice(0, start) + now.join(', ') + text.slice(start + match[2].length)
  );
}
