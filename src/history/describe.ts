/**
 * How a run is said in the History view: pure functions, tested in jest.
 */
import { IRunRecord } from './types';

/** A duration in seconds as people read it: "0.3 s", "12 s", "4 min 5 s". */
export function duration(seconds: number): string {
  if (seconds < 10) {
    return `${seconds.toFixed(1)} s`;
  }
  if (seconds < 60) {
    return `${Math.round(seconds)} s`;
  }
  const minutes = Math.floor(seconds / 60);
  const rest = Math.round(seconds - minutes * 60);
  if (minutes < 60) {
    return `${minutes} min ${rest} s`;
  }
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** How long a run took: from its start (or, never started, its queueing) to its end. */
export function runDuration(run: IRunRecord): string {
  if (run.started === null) {
    return 'never started';
  }
  return duration(Math.max(0, run.ended - run.started));
}

/** How a run ended, in words. */
export function outcome(run: IRunRecord): string {
  const words: Record<string, string> = {
    ok: 'ok',
    error: 'error',
    interrupted: 'interrupted',
    aborted: 'not run (an earlier cell failed)',
    cut_off: 'cut off (the kernel died or restarted)'
  };
  const said = words[run.status] ?? run.status;
  return run.note ? `${said}: ${run.note}` : said;
}

/**
 * The kernel a run had: its id, short, and which of its starts when several
 * runs of the list had different starts of the same kernel.
 */
export function kernelLabel(run: IRunRecord, runs: IRunRecord[]): string {
  const starts: string[] = [];
  for (const other of [...runs].reverse()) {
    if (
      other.kernel_id === run.kernel_id &&
      !starts.includes(other.kernel_run)
    ) {
      starts.push(other.kernel_run);
    }
  }
  const short = run.kernel_id.slice(0, 8);
  if (starts.length < 2) {
    return short;
  }
  return `${short}, start ${starts.indexOf(run.kernel_run) + 1}`;
}

/** When a run ended, in the browser's locale: the time today, else date and time. */
export function when(seconds: number, now: Date = new Date()): string {
  const date = new Date(seconds * 1000);
  const sameDay = date.toDateString() === now.toDateString();
  return sameDay
    ? date.toLocaleTimeString()
    : `${date.toLocaleDateString()} ${date.toLocaleTimeString()}`;
}
