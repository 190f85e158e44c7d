/**
 * Cell mentions in a message: `@cell` is the active cell, `@cell3` (or
 * `@cell#3`) the third cell of the notebook. Mentioned cells go into the turn's
 * focus, so the agent sees them in full.
 */

const MENTION = /(^|[^\w@])@cell(?:#?(\d+))?(?![\w#])/gi;

/**
 * The ids of the cells a message mentions, in order of first mention.
 *
 * @param text - the message
 * @param cellIds - the notebook's cell ids, in order
 * @param activeCellId - the active cell's id, for a bare `@cell`
 */
export function mentionedCells(
  text: string,
  cellIds: ReadonlyArray<string>,
  activeCellId: string | null
): string[] {
  const found: string[] = [];
  const pattern = new RegExp(MENTION.source, MENTION.flags);
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    const position = match[2] === undefined ? null : Number(match[2]);
    const id =
      position === null
        ? activeCellId
        : position >= 1 && position <= cellIds.length
          ? cellIds[position - 1]
          : null;
    if (id && !found.includes(id)) {
      found.push(id);
    }
  }
  return found;
}

/** `a` followed by the ids of `b` it lacks. */
export function union(
  a: ReadonlyArray<string>,
  b: ReadonlyArray<string>
): string[] {
  return [...a, ...b.filter(id => !a.includes(id))];
}
