import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { INotebookTracker } from '@jupyterlab/notebook';

import { sessionOfPanel } from '../agent/panels';
import { AgentService } from '../agent/service';
import { IAgentService } from '../tokens';
import { CellDecorations } from './decorations';

/**
 * The agent's proposals and approvals on the cells themselves, in every tab of
 * every open notebook.
 */
export const proposalsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-loop:agent-proposals',
  description:
    'Shows the AI agent’s proposals (diffs, ghost cells, deletions) and approvals on the cells.',
  autoStart: true,
  requires: [IAgentService, INotebookTracker],
  optional: [IEditorLanguageRegistry],
  activate: (
    app: JupyterFrontEnd,
    service: AgentService,
    tracker: INotebookTracker,
    languages: IEditorLanguageRegistry | null
  ): void => {
    const contents = app.serviceManager.contents;
    tracker.widgetAdded.connect((_, panel) => {
      void panel.context.ready.then(() => {
        const session = sessionOfPanel(service, panel, contents);
        if (!session || panel.isDisposed) {
          return;
        }
        const decorations = new CellDecorations(panel, session, languages);
        panel.disposed.connect(() => decorations.dispose());
      });
    });
  }
};
