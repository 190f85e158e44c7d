/** One step of a Yjs text delta, as a cell's `sourceChange` reports it. */
export interface ITextDeltaStep {
  insert?: unknown;
  delete?: number;
  retain?: number;
}

/**
 * How long an accepted suggestion's answer is read on at most, for its token
 * count (a model sends it after the text).
 */
export const ACCEPTED_TAIL_MS = 5000;

/**
 * Whether an edit of a cell's text is the acceptance of the suggestion `text`:
 * it inserts exactly that text and deletes nothing. Any other edit is typing
 * on, which makes the suggestion stale.
 *
 * Told apart because they end a request differently: typing on aborts it (the
 * server stops the model call), while an accepted suggestion's answer is read
 * to its end, since the model sends the call's token count after the text,
 * and an answer cut there was never counted in the usage or the day's budget.
 */
export function acceptsSuggestion(
  delta: readonly ITextDeltaStep[],
  text: string
): boolean {
  if (!text) {
    return false;
  }
  const inserted = delta.filter(step => step.insert !== undefined);
  return (
    inserted.length === 1 &&
    inserted[0].insert === text &&
    !delta.some(step => step.delete !== undefined)
  );
}
