/**
 * How a run and a kept version are said in the History views: pure functions,
 * tested in jest.
 */
import { IRestored, IRunRecord, IVersion } from './types';

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

/**
 * Who started a run through what, and whether a restarted server took it over
 * (the run record goes on: same run, source and start).
 */
export function startedBy(run: IRunRecord): string {
  return run.taken_over
    ? `${run.by}, taken over after a server restart`
    : run.by;
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

/** Where a kept version of a notebook came from, in words. */
export function versionOrigin(version: IVersion): string {
  if (version.kind === 'restored') {
    return version.restored_from === null
      ? 'a restore'
      : `a restore of version ${version.restored_from}`;
  }
  if (version.kind === 'found on disk') {
    return 'the file as another program left it';
  }
  return 'a save';
}

/** A version's size as people read it: its cells and bytes ("3 cells, 1.2 KB"). */
export function versionSize(version: IVersion): string {
  const cells = version.cells === 1 ? '1 cell' : `${version.cells} cells`;
  const bytes =
    version.size < 1024
      ? `${version.size} B`
      : version.size < 1024 * 1024
        ? `${(version.size / 1024).toFixed(1)} KB`
        : `${(version.size / (1024 * 1024)).toFixed(1)} MB`;
  return `${cells}, ${bytes}`;
}

/**
 * What a restore did, and how to undo it: the version it replaced is the one
 * kept just before the restore's own save (`versions`: newest first, as
 * listed after the restore).
 */
export function restoredNotice(
  restored: IRestored,
  versions: IVersion[]
): string {
  if (restored.proposal) {
    return (
      `Version ${restored.restored} is proposed at the top of the notebook: ` +
      'accept it there. Then Z in command mode (Edit › Undo) takes it back.'
    );
  }
  const made = restored.version?.number;
  if (made === undefined) {
    return `The notebook already held version ${restored.restored}.`;
  }
  const at = versions.findIndex(version => version.number === made);
  const replaced = at >= 0 ? versions[at + 1] : undefined;
  return (
    `Restored version ${restored.restored} (now version ${made}).` +
    (replaced
      ? ` What the notebook held before is version ${replaced.number}: restore it to undo.`
      : '')
  );
}
