import * as Y from 'yjs';

/**
 * A value of the shared document as plain JSON data: Y types (maps, arrays,
 * texts) are converted, everything else is returned as is.
 */
export function plain<T>(value: unknown): T | undefined {
  if (value === undefined || value === null) {
    return undefined;
  }
  if (value instanceof Y.AbstractType) {
    return value.toJSON() as T;
  }
  return value as T;
}
