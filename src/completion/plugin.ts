import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { ICompletionProviderManager } from '@jupyterlab/completer';

import { completionStatus, streamCompletion } from './client';
import { LoopInlineProvider } from './provider';

/**
 * Inline completions (ghost text) from the server, listed in Settings →
 * Inline Completer. Registered at start-up (the inline completer lists only
 * providers known when JupyterLab is restored); quiet when the server has no
 * model provider.
 */
export const completionPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-loop:completion',
  description: 'Inline completions that know the notebook’s outputs.',
  autoStart: true,
  requires: [ICompletionProviderManager],
  activate: (app: JupyterFrontEnd, manager: ICompletionProviderManager) => {
    const provider = new LoopInlineProvider(
      { stream: streamCompletion },
      message =>
        Notification.warning(`Inline completion: ${message}`, {
          autoClose: 8000
        })
    );
    manager.registerInlineProvider(provider);
    void completionStatus()
      .then(status => {
        provider.configured = status.configured;
      })
      .catch(() => undefined); // an old server without completions: stay on, fail quietly
  }
};
