/**
 * Actions a panel's user starts (send, stop, approve, accept, reject), each
 * at most once at a time under its key, so a double click sends one request,
 * and the panel can show which are in flight.
 */
export class PendingActions {
  /**
   * @param report - says a failure to the user (the action resolves `undefined`)
   * @param changed - called when an action starts or ends
   */
  constructor(
    private readonly _report: (error: unknown, failure: string) => void,
    private readonly _changed: () => void
  ) {}

  /** Whether an action is in flight under `key`. */
  has(key: string): boolean {
    return this._pending.has(key);
  }

  /**
   * Run `action` unless one runs under `key` already; a failure is reported
   * with `failure` as its heading, not thrown.
   *
   * @returns the action's result, `undefined` if it failed or did not run
   */
  async run<T>(
    key: string,
    failure: string,
    action: () => Promise<T>
  ): Promise<T | undefined> {
    if (this._pending.has(key)) {
      return undefined;
    }
    this._pending.add(key);
    this._changed();
    try {
      return await action();
    } catch (error) {
      this._report(error, failure);
      return undefined;
    } finally {
      this._pending.delete(key);
      this._changed();
    }
  }

  private _pending = new Set<string>();
}
