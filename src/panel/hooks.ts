import { ISignal } from '@lumino/signaling';
import * as React from 'react';

/**
 * Re-render a component whenever `signal` is emitted (a hook for the models'
 * `changed` signals, like `UseSignal` without the extra element).
 */
export function useSignal<T>(
  signal: ISignal<T, unknown> | null | undefined
): void {
  const [, setTick] = React.useState(0);
  React.useEffect(() => {
    if (!signal) {
      return;
    }
    const slot = () => setTick(tick => tick + 1);
    signal.connect(slot);
    return () => {
      signal.disconnect(slot);
    };
  }, [signal]);
}

/** A number of tokens, short: 980, 12.3k, 1.2M. */
export function formatTokens(n: number): string {
  if (n < 1000) {
    return String(n);
  }
  if (n < 1_000_000) {
    return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  }
  return `${(n / 1_000_000).toFixed(1)}M`;
}
