import { renumberCells } from '../cellnumbers';

describe('renumberCells', () => {
  const order = ['a', 'new', 'b', 'c'];
  const position = (id: string) => order.indexOf(id) + 1;

  it('shows the cell where it is now (a cell was inserted above it)', () => {
    expect(renumberCells('read cell 2', ['b'], position)).toBe('read cell 3');
    expect(renumberCells('proposed an edit to cell 3', ['c'], position)).toBe(
      'proposed an edit to cell 4'
    );
  });

  it('renumbers a list of cells in order, and nothing after it', () => {
    expect(
      renumberCells(
        'ran cells 1, 2 → ZeroDivisionError in cell 2',
        ['a', 'b'],
        position
      )
    ).toBe('ran cells 1, 3 → ZeroDivisionError in cell 2');
  });

  it('leaves the text when the cells do not match or are gone', () => {
    expect(
      renumberCells('read the notebook map (cells 1-30)', [], position)
    ).toBe('read the notebook map (cells 1-30)');
    expect(renumberCells('read cell 2', ['gone'], position)).toBe(
      'read cell 2'
    );
    expect(renumberCells('ran cells 1, 2', ['a'], position)).toBe(
      'ran cells 1, 2'
    );
  });
});
