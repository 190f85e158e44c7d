import { acceptsSuggestion } from '../acceptance';

describe('acceptsSuggestion', () => {
  it('is the insertion of exactly the suggestion, anywhere', () => {
    expect(
      acceptsSuggestion([{ retain: 6 }, { insert: 'ice"]' }], 'ice"]')
    ).toBe(true);
    expect(acceptsSuggestion([{ insert: 'ice"]' }], 'ice"]')).toBe(true);
  });

  it('is not typing on: another text, a deletion or two insertions', () => {
    expect(acceptsSuggestion([{ retain: 6 }, { insert: 'i' }], 'ice"]')).toBe(
      false
    );
    expect(
      acceptsSuggestion(
        [{ retain: 5 }, { delete: 1 }, { insert: 'ice"]' }],
        'ice"]'
      )
    ).toBe(false);
    expect(
      acceptsSuggestion(
        [{ insert: 'ice"]' }, { retain: 2 }, { insert: 'ice"]' }],
        'ice"]'
      )
    ).toBe(false);
  });

  it('needs a suggestion', () => {
    expect(acceptsSuggestion([{ insert: '' }], '')).toBe(false);
  });
});
