import type { YNotebook } from '@jupyter/ydoc';
import { NotebookPanel } from '@jupyterlab/notebook';
import { Contents } from '@jupyterlab/services';

import { AgentService } from './service';
import { AgentSession } from './session';

/**
 * The agent session of a notebook panel (made, and its conversation loaded, on
 * first use); null until the panel's model is ready.
 */
export function sessionOfPanel(
  service: AgentService,
  panel: NotebookPanel,
  contents: Contents.IManager
): AgentSession | null {
  const model = panel.context.model;
  if (!model || panel.isDisposed || !panel.context.isReady) {
    return null;
  }
  const sharedModel = model.sharedModel as YNotebook;
  const known = service.findSession(sharedModel);
  if (known) {
    return known;
  }
  const session = service.sessionFor({
    sharedModel,
    path: () => contents.localPath(panel.context.path)
  });
  void session.load();
  return session;
}
