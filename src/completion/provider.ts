import {
  CompletionHandler,
  IInlineCompletionContext,
  IInlineCompletionItem,
  IInlineCompletionList,
  IInlineCompletionProvider
} from '@jupyterlab/completer';
import { NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { JSONValue, UUID } from '@lumino/coreutils';
import { ISignal, Signal } from '@lumino/signaling';

import {
  ACCEPTED_TAIL_MS,
  acceptsSuggestion,
  ITextDeltaStep
} from './acceptance';
import { ICompletionChunk, ICompletionRequest } from './payloads';
import { visibleCellIds } from './visible';

/** The provider's id in Settings → Inline Completer. */
export const PROVIDER_ID = 'jupyter-loop:inline';

/** Where a request goes and how it is streamed (the REST client, or a fake). */
export interface ICompletionSource {
  stream(
    request: ICompletionRequest,
    signal: AbortSignal
  ): AsyncGenerator<ICompletionChunk>;
}

/** A request in flight: its chunks, the text so far, and how to stop it. */
interface IFlight {
  chunks: AsyncGenerator<ICompletionChunk>;
  controller: AbortController;
  text: string;
  stopWatching: () => void;
}

/**
 * Ghost text from the server's completion service: the server adds the
 * neighbouring cells, the outputs of the cells on screen and the kernel's
 * variables to what the editor sends. One request per editor at a time; typing on aborts it (and
 * the server stops the model call), accepting its suggestion lets it end (see
 * `acceptsSuggestion`). Quiet when the server has no provider.
 */
export class LoopInlineProvider implements IInlineCompletionProvider {
  readonly identifier = PROVIDER_ID;
  readonly name = 'jupyter-loop AI';
  readonly schema: ISettingRegistry.IProperty = {
    description:
      'Completions from the model of the jupyter-loop server (the AI assistant’s provider and keys; c.JupyterLoopApp.completion_model). Without a provider on the server this stays quiet.',
    properties: {
      model: {
        title: 'Model',
        description:
          'The model for completions; empty: the server’s (c.JupyterLoopApp.completion_model, else agent_model).',
        type: 'string'
      }
    },
    default: { enabled: true, debouncerDelay: 250, timeout: 15000, model: '' }
  };

  constructor(
    private readonly _source: ICompletionSource,
    private readonly _report: (message: string) => void
  ) {}

  /** Whether the server can complete (unknown counts as yes until it says). */
  configured = true;

  /** Emitted when a request ends: answered, failed or aborted. */
  get landed(): ISignal<this, void> {
    return this._landed;
  }

  configure(settings: { [property: string]: JSONValue }): void {
    const model = settings.model;
    this._model = typeof model === 'string' ? model.trim() : '';
  }

  async fetch(
    request: CompletionHandler.IRequest,
    context: IInlineCompletionContext
  ): Promise<IInlineCompletionList<IInlineCompletionItem>> {
    const panel = context.widget;
    if (!this.configured || !(panel instanceof NotebookPanel)) {
      return { items: [] };
    }
    const cell = panel.content.activeCell;
    if (!cell || cell.model.type !== 'code') {
      return { items: [] };
    }
    const editorId = `${this._tab}:${cell.model.id}`;
    this._flights.get(editorId)?.controller.abort();
    const controller = new AbortController();
    const source = cell.model.sharedModel;
    // Typing on makes this suggestion stale; accepting it does not.
    const abort = (
      _: unknown,
      change: { sourceChange?: ITextDeltaStep[] | null }
    ) => {
      if (!change.sourceChange) {
        return;
      }
      if (acceptsSuggestion(change.sourceChange, flight.text)) {
        void this._readToEnd(editorId, flight);
      } else {
        controller.abort();
      }
    };
    source.changed.connect(abort);
    const flight: IFlight = {
      chunks: this._source.stream(
        {
          path: panel.context.path,
          cell_id: cell.model.id,
          editor_id: editorId,
          before: request.text.slice(0, request.offset),
          after: request.text.slice(request.offset),
          model: this._model || undefined,
          visible_cell_ids: visibleCellIds(panel.content),
          sequence: ++this._sequence
        },
        controller.signal
      ),
      controller,
      text: '',
      stopWatching: () => source.changed.disconnect(abort)
    };
    this._flights.set(editorId, flight);
    // Wait for the first piece, so the ghost text appears with something in it.
    const first = await this._next(flight);
    if (first === null) {
      this._land(editorId, flight);
      return { items: flight.text ? [{ insertText: flight.text }] : [] };
    }
    const token = UUID.uuid4();
    this._streams.set(token, { editorId, flight });
    return { items: [{ insertText: flight.text, isIncomplete: true, token }] };
  }

  async *stream(
    token: string
  ): AsyncGenerator<{ response: IInlineCompletionItem }> {
    const entry = this._streams.get(token);
    this._streams.delete(token);
    if (!entry) {
      return;
    }
    const { editorId, flight } = entry;
    try {
      while ((await this._next(flight)) !== null) {
        yield { response: { insertText: flight.text } };
      }
    } finally {
      this._land(editorId, flight);
    }
  }

  /** Read the next text; null once the answer ended, failed or was aborted. */
  private async _next(flight: IFlight): Promise<string | null> {
    try {
      for (;;) {
        const { value, done } = await flight.chunks.next();
        if (done || value.done) {
          if (value?.error) {
            this._reportOnce(value.error);
          }
          return null;
        }
        if (value.text) {
          flight.text += value.text;
          return value.text;
        }
      }
    } catch (error) {
      if (!flight.controller.signal.aborted) {
        this._reportOnce(
          error instanceof Error ? error.message : String(error)
        );
      }
      return null;
    }
  }

  /**
   * Read an accepted suggestion's answer to its end (at most
   * ACCEPTED_TAIL_MS), so the server counts its tokens, which come last; it is
   * no longer the editor's request, which a new one would abort.
   */
  private async _readToEnd(editorId: string, flight: IFlight): Promise<void> {
    flight.stopWatching();
    if (this._flights.get(editorId) === flight) {
      this._flights.delete(editorId);
    }
    const bound = setTimeout(() => flight.controller.abort(), ACCEPTED_TAIL_MS);
    try {
      while ((await this._next(flight)) !== null) {
        // text after the acceptance is not shown
      }
    } finally {
      clearTimeout(bound);
      this._land(editorId, flight);
    }
  }

  private _land(editorId: string, flight: IFlight): void {
    flight.stopWatching();
    if (this._flights.get(editorId) === flight) {
      this._flights.delete(editorId);
    }
    this._landed.emit();
  }

  /** Say a failure once, not on every keystroke that meets it again. */
  private _reportOnce(message: string): void {
    if (message !== this._lastReported) {
      this._lastReported = message;
      this._report(message);
    }
  }

  private _model = '';
  private _sequence = 0;
  private _landed = new Signal<this, void>(this);
  private _lastReported = '';
  private readonly _tab = UUID.uuid4();
  private readonly _flights = new Map<string, IFlight>();
  private readonly _streams = new Map<
    string,
    { editorId: string; flight: IFlight }
  >();
}
