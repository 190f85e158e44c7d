/**
 * Line diffs of a cell's source, for the proposal cards of the panel.
 *
 * Pure functions: the cards show a compact unified diff (changed lines with a few
 * lines of context); the cell itself shows CodeMirror's merge view.
 */

export type DiffLineKind = 'same' | 'add' | 'del';

export interface IDiffLine {
  kind: DiffLineKind;
  text: string;
  /** 1-based line number in the old text (same, del). */
  oldLine?: number;
  /** 1-based line number in the new text (same, add). */
  newLine?: number;
}

/** A gap of unchanged lines left out of a compact diff. */
export interface IDiffGap {
  kind: 'gap';
  lines: number;
}

export interface IDiffStats {
  added: number;
  removed: number;
}

/** Above this many cells of the comparison table, a diff is "replace everything". */
const MAX_TABLE = 4_000_000;

/** The lines of a text; an empty text has none, a final newline adds no empty line. */
export function splitLines(text: string): string[] {
  if (text.length === 0) {
    return [];
  }
  const lines = text.split(/\r\n|\r|\n/);
  if (lines[lines.length - 1] === '') {
    lines.pop();
  }
  return lines;
}

/**
 * The line diff turning `before` into `after`: a longest common subsequence of
 * lines, deletions before additions within a change.
 */
export function lineDiff(before: string, after: string): IDiffLine[] {
  const a = splitLines(before);
  const b = splitLines(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) {
    start++;
  }
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const result: IDiffLine[] = [];
  for (let i = 0; i < start; i++) {
    result.push({ kind: 'same', text: a[i], oldLine: i + 1, newLine: i + 1 });
  }
  result.push(...middle(a, b, start, endA, endB));
  for (let i = endA, j = endB; i < a.length; i++, j++) {
    result.push({ kind: 'same', text: a[i], oldLine: i + 1, newLine: j + 1 });
  }
  return result;
}

function middle(
  a: string[],
  b: string[],
  start: number,
  endA: number,
  endB: number
): IDiffLine[] {
  const n = endA - start;
  const m = endB - start;
  const out: IDiffLine[] = [];
  const del = (i: number) =>
    out.push({ kind: 'del', text: a[i], oldLine: i + 1 });
  const add = (j: number) =>
    out.push({ kind: 'add', text: b[j], newLine: j + 1 });
  if (n === 0 || m === 0 || n * m > MAX_TABLE) {
    for (let i = start; i < endA; i++) {
      del(i);
    }
    for (let j = start; j < endB; j++) {
      add(j);
    }
    return out;
  }
  // lcs[i][j]: the longest common subsequence of a[start+i..endA) and b[start+j..endB).
  const width = m + 1;
  const lcs = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * width + j] =
        a[start + i] === b[start + j]
          ? lcs[(i + 1) * width + j + 1] + 1
          : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
    }
  }
  let i = 0;
  let j = 0;
  const pendingAdds: number[] = [];
  const flushAdds = () => {
    pendingAdds.splice(0).forEach(add);
  };
  while (i < n || j < m) {
    if (i < n && j < m && a[start + i] === b[start + j]) {
      flushAdds();
      out.push({
        kind: 'same',
        text: a[start + i],
        oldLine: start + i + 1,
        newLine: start + j + 1
      });
      i++;
      j++;
    } else if (
      j >= m ||
      (i < n && lcs[(i + 1) * width + j] >= lcs[i * width + j + 1])
    ) {
      del(start + i);
      i++;
    } else {
      pendingAdds.push(start + j);
      j++;
    }
  }
  flushAdds();
  return out;
}

/** How many lines a diff adds and removes. */
export function diffStats(lines: IDiffLine[]): IDiffStats {
  let added = 0;
  let removed = 0;
  for (const line of lines) {
    if (line.kind === 'add') {
      added++;
    } else if (line.kind === 'del') {
      removed++;
    }
  }
  return { added, removed };
}

/**
 * The changed lines with `context` unchanged lines around each change; longer
 * runs of unchanged lines become gaps.
 */
export function compactDiff(
  lines: IDiffLine[],
  context = 2
): (IDiffLine | IDiffGap)[] {
  const keep = lines.map(() => false);
  lines.forEach((line, index) => {
    if (line.kind !== 'same') {
      const from = Math.max(0, index - context);
      const to = Math.min(lines.length - 1, index + context);
      for (let k = from; k <= to; k++) {
        keep[k] = true;
      }
    }
  });
  const out: (IDiffLine | IDiffGap)[] = [];
  let gap = 0;
  lines.forEach((line, index) => {
    if (keep[index]) {
      if (gap > 0) {
        out.push({ kind: 'gap', lines: gap });
        gap = 0;
      }
      out.push(line);
    } else {
      gap++;
    }
  });
  if (gap > 0) {
    out.push({ kind: 'gap', lines: gap });
  }
  return out;
}

/**
 * The smallest single replacement turning `before` into `after`: the text
 * between their common prefix and suffix. Applying it as one edit keeps other
 * users' cursors outside the change where they were.
 */
export function replacement(
  before: string,
  after: string
): { start: number; end: number; text: string } {
  let start = 0;
  const limit = Math.min(before.length, after.length);
  while (start < limit && before[start] === after[start]) {
    start++;
  }
  // Never split a surrogate pair: Y.Text would store half a character.
  if (start > 0 && isHighSurrogate(before.charCodeAt(start - 1))) {
    start--;
  }
  let suffix = 0;
  while (
    suffix < limit - start &&
    before[before.length - 1 - suffix] === after[after.length - 1 - suffix]
  ) {
    suffix++;
  }
  if (suffix > 0 && isLowSurrogate(before.charCodeAt(before.length - suffix))) {
    suffix--;
  }
  return {
    start,
    end: before.length - suffix,
    text: after.slice(start, after.length - suffix)
  };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
