import { YNotebook } from '@jupyter/ydoc';

import { FOCUS_FIELD, ICellFocus } from '../../payloads';
import { FocusPublisher } from '../focus';

describe('the cell in hand, told to the others', () => {
  let notebook: YNotebook;
  let inHand: ICellFocus;
  let sent: number;
  let focus: FocusPublisher;

  beforeEach(() => {
    jest.useFakeTimers();
    notebook = new YNotebook();
    inHand = { cell_id: 'c1', selected_cell_ids: ['c1'] };
    sent = 0;
    // What the tab's provider sends to the room: one message per local change.
    notebook.awareness.on('update', () => sent++);
    focus = new FocusPublisher(
      () => notebook.awareness,
      () => inHand,
      300
    );
  });

  afterEach(() => {
    focus.dispose();
    notebook.dispose();
    jest.useRealTimers();
  });

  const published = () =>
    notebook.awareness.getLocalState()?.[FOCUS_FIELD] as ICellFocus | undefined;

  it('is not sent while the key that moved it is still being handled', () => {
    inHand = { cell_id: 'c2', selected_cell_ids: ['c2'] };
    focus.changed();
    expect(published()).toBeUndefined();
    expect(sent).toBe(0);
    jest.advanceTimersByTime(299);
    expect(sent).toBe(0);
    jest.advanceTimersByTime(1);
    expect(published()).toEqual({ cell_id: 'c2', selected_cell_ids: ['c2'] });
    expect(sent).toBe(1);
  });

  it('is sent once for cells stepped through, with the cell it stops on', () => {
    for (const cellId of ['c2', 'c3', 'c4']) {
      inHand = { cell_id: cellId, selected_cell_ids: [cellId] };
      focus.changed();
      jest.advanceTimersByTime(100);
    }
    jest.advanceTimersByTime(300);
    expect(published()?.cell_id).toBe('c4');
    expect(sent).toBe(1);
  });

  it('is not sent again when nothing changed', () => {
    focus.publish();
    focus.publish();
    focus.changed();
    jest.advanceTimersByTime(1000);
    expect(sent).toBe(1);
  });

  it('is not sent after its notebook closed', () => {
    focus.changed();
    focus.dispose();
    jest.advanceTimersByTime(1000);
    expect(sent).toBe(0);
  });
});
