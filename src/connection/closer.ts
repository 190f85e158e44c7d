/**
 * Closes JupyterLab's "Server Connection Error" dialog once the server answers again.
 *
 * JupyterLab shows the dialog when a request to the server fails and leaves it up until
 * someone clicks Close, even after the tab has reconnected and streams outputs again
 * (seen after a SIGKILL and a restart of the server): the dialog then says something
 * that is no longer true over a notebook that works. After a failure the server is
 * asked, with growing pauses, whether it answers; once it does, the dialogs that say the
 * connection is lost are closed as if their Close button were clicked. Rejected:
 * replacing JupyterLab's `IConnectionLost` provider, which would mean disabling one of
 * its plugins for every user of the extension.
 */
export class ConnectionErrorCloser {
  constructor(private readonly _options: ConnectionErrorCloser.IOptions) {}

  /** A request failed (JupyterLab is showing, or about to show, its dialog). */
  failed(): void {
    if (this._watching || this._disposed) {
      return;
    }
    this._watching = this._watch().finally(() => {
      this._watching = null;
    });
  }

  /** The watch under way, if any (tests wait for it). */
  get watching(): Promise<void> | null {
    return this._watching;
  }

  dispose(): void {
    this._disposed = true;
  }

  private async _watch(): Promise<void> {
    const delays = this._options.delays ?? [1000, 2000, 4000, 8000, 15000];
    for (let attempt = 0; !this._disposed; attempt++) {
      await sleep(delays[Math.min(attempt, delays.length - 1)]);
      let back = false;
      try {
        back = await this._options.answers();
      } catch {
        back = false;
      }
      if (back) {
        this._options.close();
        return;
      }
    }
  }

  private _watching: Promise<void> | null = null;
  private _disposed = false;
}

export namespace ConnectionErrorCloser {
  export interface IOptions {
    /** Whether the server answers now. */
    answers: () => Promise<boolean>;
    /** Close the dialogs that say the connection is lost. */
    close: () => void;
    /** Milliseconds between tries (the last repeats). */
    delays?: number[];
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, ms));
}
