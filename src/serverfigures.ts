import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

/**
 * Figures the server keeps for every tab and user (what completions cost, the
 * day's token budget), fetched when they are shown and shortly after something
 * that changes them, not polled.
 */
export class ServerFigures<T> implements IDisposable {
  constructor(
    private readonly _fetch: () => Promise<T>,
    private readonly _delay = 1000
  ) {}

  /** The server's last answer; null until one came. */
  get value(): T | null {
    return this._value;
  }

  /** Emitted when `value` changes. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /**
   * Ask the server now. One request at a time: a refresh asked for while one
   * is under way runs once it ends. A failure keeps the last figures (an older
   * server without the endpoint answers 404, a user without the right 403).
   */
  async refresh(): Promise<void> {
    if (this._inFlight) {
      this._again = true;
      return this._inFlight;
    }
    this._inFlight = this._load();
    try {
      await this._inFlight;
    } finally {
      this._inFlight = null;
    }
    if (this._again && !this._disposed) {
      this._again = false;
      await this.refresh();
    }
  }

  /** Refresh after a quiet moment: a burst of completions makes one request. */
  refreshSoon(): void {
    if (this._disposed) {
      return;
    }
    clearTimeout(this._timer);
    this._timer = setTimeout(() => void this.refresh(), this._delay);
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    clearTimeout(this._timer);
    Signal.clearData(this);
  }

  private async _load(): Promise<void> {
    let value: T;
    try {
      value = await this._fetch();
    } catch {
      return;
    }
    if (!this._disposed) {
      this._value = value;
      this._changed.emit();
    }
  }

  private _value: T | null = null;
  private _changed = new Signal<this, void>(this);
  private _inFlight: Promise<void> | null = null;
  private _again = false;
  private _timer: ReturnType<typeof setTimeout> | undefined = undefined;
  private _disposed = false;
}
