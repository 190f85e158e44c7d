import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { ICompletionProviderManager } from '@jupyterlab/completer';

import { ICompletionUsage } from '../tokens';
import { completionStatus, streamCompletion } from './client';
import { LoopInlineProvider } from './provider';
import { CompletionUsage } from './usage';

/**
 * Inline completions (ghost text) from the server, listed in Settings →
 * Inline Completer. Registered at start-up (the inline completer lists only
 * providers known when JupyterLab is restored); quiet when the server has no
 * model provider. Provides the server's completion usage for the panel.
 */
export const completionPlugin: JupyterFrontEndPlugin<CompletionUsage> = {
  id: 'jupyter-loop:completion',
  description: 'Inline completions that know the notebook’s outputs.',
  autoStart: true,
  requires: [ICompletionProviderManager],
  provides: ICompletionUsage,
  activate: (
    app: JupyterFrontEnd,
    manager: ICompletionProviderManager
  ): CompletionUsage => {
    const provider = new LoopInlineProvider(
      { stream: streamCompletion },
      message =>
        Notification.warning(`Inline completion: ${message}`, {
          autoClose: 8000
        })
    );
    manager.registerInlineProvider(provider);
    const usage = new CompletionUsage(completionStatus);
    provider.landed.connect(() => usage.refreshSoon());
    // An old server without completions leaves the status unknown: stay on, fail quietly.
    void usage.refresh().then(() => {
      provider.configured = usage.status?.configured ?? true;
    });
    return usage;
  }
};
