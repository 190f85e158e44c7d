import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookCellExecutor, INotebookTracker } from '@jupyterlab/notebook';

import { ServerCellExecutor } from './executor';
import { CellMarkers } from './markers';
import { captureServerRunOutputs } from './widgets';

/**
 * Runs notebook cells on the server instead of through the browser's kernel
 * connection. Replaces JupyterLab's and jupyter-collaboration's cell executors,
 * which `package.json` disables.
 */
export const executorPlugin: JupyterFrontEndPlugin<INotebookCellExecutor> = {
  id: 'jupyter-loop:cell-executor',
  description:
    'Runs notebook cells on the server and keeps their outputs there.',
  autoStart: true,
  provides: INotebookCellExecutor,
  activate: (app: JupyterFrontEnd): INotebookCellExecutor =>
    new ServerCellExecutor(app.serviceManager.contents)
};

/**
 * Shows queued and running cells and pending `input()` prompts from the server's
 * run markers, in every tab.
 */
export const markersPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-loop:run-markers',
  description: 'Shows the server-side run queue and input prompts on cells.',
  autoStart: true,
  requires: [INotebookTracker, INotebookCellExecutor],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    executor: INotebookCellExecutor
  ): void => {
    if (executor instanceof ServerCellExecutor) {
      executor.useTracker(tracker);
    }
    tracker.widgetAdded.connect((_, panel) => {
      void panel.context.ready.then(() => {
        if (panel.isDisposed) {
          return;
        }
        const markers = new CellMarkers(panel, app.serviceManager.contents);
        panel.disposed.connect(() => markers.dispose());
        captureServerRunOutputs(panel.sessionContext);
      });
    });
  }
};
