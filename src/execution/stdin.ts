import { Notification } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { postJSON, requestAPI } from '../request';
import { IInputRequest } from '../tokens';

const PROMPT_CLASS = 'jp-Loop-InputPrompt';

/**
 * The `input()` prompt of a cell running on the server. Every tab shows it; the
 * first answer wins and the server echoes it into the cell's outputs.
 */
export class InputPrompt extends Widget {
  constructor(
    private readonly _target: { path: string; cellId: string },
    readonly request: IInputRequest
  ) {
    super();
    this.addClass(PROMPT_CLASS);
    const label = document.createElement('label');
    label.className = `${PROMPT_CLASS}-label`;
    label.textContent = request.prompt;
    this._input = document.createElement('input');
    this._input.className = `${PROMPT_CLASS}-input`;
    this._input.type = request.password ? 'password' : 'text';
    this._input.setAttribute(
      'aria-label',
      request.prompt || 'Input requested by the cell'
    );
    this._input.addEventListener('keydown', this._onKeyDown);
    label.appendChild(this._input);
    this.node.appendChild(label);
  }

  focusInput(): void {
    this._input.focus();
  }

  private _onKeyDown = (event: KeyboardEvent): void => {
    event.stopPropagation();
    if (event.key !== 'Enter' || this._input.disabled) {
      return;
    }
    this._input.disabled = true;
    void this._answer(this._input.value);
  };

  private async _answer(value: string): Promise<void> {
    try {
      await requestAPI(
        'input',
        postJSON({
          path: this._target.path,
          cell_id: this._target.cellId,
          request_id: this.request.request_id,
          value
        })
      );
    } catch (error) {
      this._input.disabled = false;
      const message = error instanceof Error ? error.message : String(error);
      Notification.warning(`The answer was not sent: ${message}`, {
        autoClose: 6000
      });
    }
  }

  private _input: HTMLInputElement;
}
