import { OutputArea, IStdin } from '@jupyterlab/outputarea';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';
import { Panel } from '@lumino/widgets';

import { IInputRequest } from '../payloads';

// JupyterLab's own classes for the stdin item of an output area, so that its
// styles, and anything that looks for them, treat our prompt as its own.
const ITEM_CLASS = 'jp-OutputArea-child';
const STDIN_ITEM_CLASS = 'jp-OutputArea-stdin-item';
const HIDING_CLASS = 'jp-OutputArea-stdin-hiding';
const PROMPT_CLASS = 'jp-OutputArea-prompt';
const OUTPUT_CLASS = 'jp-OutputArea-output';

/** Sends the answer to the server; rejects with the server's message. */
export type SendAnswer = (value: string) => Promise<void>;

/**
 * The one part of a kernel future that JupyterLab's `Stdin` widget uses. The cell
 * runs on the server, which owns the kernel's stdin channel: the answer goes to
 * jupyter-loop's REST API, and the server echoes it into the shared document.
 */
class AnswerChannel implements Pick<Kernel.IShellFuture, 'sendInputReply'> {
  constructor(
    private readonly _send: SendAnswer,
    private readonly _onFailed: (error: unknown) => void
  ) {}

  sendInputReply(content: KernelMessage.IInputReplyMsg['content']): void {
    if (content.status === 'ok') {
      this._send(content.value).catch(this._onFailed);
    }
  }
}

/**
 * The header `Stdin` answers to. Its `session` keys the input history when the
 * notebook keeps one history per session: here, one per kernel.
 */
function requestHeader(
  request: IInputRequest,
  kernelId: string | undefined
): KernelMessage.IHeader<'input_request'> {
  return {
    date: '',
    msg_id: request.request_id,
    msg_type: 'input_request',
    session: kernelId ?? '',
    username: '',
    version: '5.3'
  };
}

/**
 * A pending `input()` prompt in a cell's output area, built as JupyterLab's
 * `OutputArea.onInputRequest` builds it: an output prompt beside the output area's
 * own `Stdin` widget (prompt, masked password, input history and its search).
 *
 * Unlike JupyterLab, the answer is not added to the output model here: the server
 * writes the echo for every tab, and the prompt goes when the server clears it.
 */
export class StdinItem extends Panel {
  constructor(options: StdinItem.IOptions) {
    super();
    this.request = options.request;
    this.addClass(ITEM_CLASS);
    this.addClass(STDIN_ITEM_CLASS);
    const factory = options.outputArea.contentFactory;
    const prompt = factory.createOutputPrompt();
    prompt.addClass(PROMPT_CLASS);
    this.addWidget(prompt);
    const channel = new AnswerChannel(options.send, error =>
      this._failed.emit(error)
    );
    this.stdin = factory.createStdin({
      prompt: options.request.prompt,
      password: options.request.password,
      // `Stdin` calls nothing but `sendInputReply` on its future.
      future: channel as unknown as Kernel.IShellFuture,
      parent_header: requestHeader(options.request, options.kernelId),
      inputHistoryScope: options.inputHistoryScope,
      showInputPlaceholder: options.showInputPlaceholder
    });
    this.stdin.addClass(OUTPUT_CLASS);
    this.addWidget(this.stdin);
    void this.stdin.value.then(() => this._onAnswered(options.outputArea));
  }

  /** The server's request this prompt answers. */
  readonly request: IInputRequest;

  /** JupyterLab's stdin widget inside. */
  readonly stdin: IStdin;

  /** Whether the user pressed Enter: the widget takes no more keys. */
  get answered(): boolean {
    return this._answered;
  }

  /** Emitted with the error when the server did not take the answer. */
  get failed(): ISignal<this, unknown> {
    return this._failed;
  }

  private _onAnswered(outputArea: OutputArea): void {
    this._answered = true;
    this.addClass(HIDING_CLASS);
    // As JupyterLab does: let the echo of the answer show past a capped output
    // count. (If nothing is trimmed yet, the output area disposes this item.)
    const outputs = outputArea.model.length;
    if (!outputArea.isDisposed && outputs >= outputArea.maxNumberOutputs) {
      outputArea.maxNumberOutputs = outputs + 1;
    }
  }

  private _answered = false;
  private _failed = new Signal<this, unknown>(this);
}

export namespace StdinItem {
  export interface IOptions {
    /** The output area the prompt goes into; its content factory makes the widgets. */
    outputArea: OutputArea;
    request: IInputRequest;
    /** The kernel that asked, whose input history the prompt offers. */
    kernelId?: string;
    send: SendAnswer;
    inputHistoryScope?: 'global' | 'session';
    showInputPlaceholder?: boolean;
  }
}
