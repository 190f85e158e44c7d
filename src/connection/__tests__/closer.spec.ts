import { ConnectionErrorCloser } from '../closer';

describe('ConnectionErrorCloser', () => {
  it('closes the dialog once the server answers again, not before', async () => {
    const answers = [false, false, true];
    let asked = 0;
    let closed = 0;
    const closer = new ConnectionErrorCloser({
      answers: async () => answers[asked++] ?? true,
      close: () => {
        closed++;
      },
      delays: [1]
    });
    closer.failed();
    closer.failed(); // a second failure while watching starts no second watch
    await closer.watching;
    expect(asked).toBe(3);
    expect(closed).toBe(1);
  });

  it('keeps asking when asking fails', async () => {
    let asked = 0;
    let closed = 0;
    const closer = new ConnectionErrorCloser({
      answers: async () => {
        asked++;
        if (asked < 2) {
          throw new TypeError('Failed to fetch');
        }
        return true;
      },
      close: () => {
        closed++;
      },
      delays: [1]
    });
    closer.failed();
    await closer.watching;
    expect([asked, closed]).toEqual([2, 1]);
  });
});
