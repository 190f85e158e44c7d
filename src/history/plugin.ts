import {
  ILabShell,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { historyIcon } from '@jupyterlab/ui-components';

import { StaleMarks } from './stale';
import { NotebookVersionsView } from './versions';
import { CellHistoryView } from './view';

/** The command that opens a cell's History view (args: `cellId`, else the active cell). */
export const CELL_HISTORY = 'jupyter-loop:cell-history';
/** The command that opens the current notebook's kept versions. */
export const NOTEBOOK_VERSIONS = 'jupyter-loop:notebook-versions';

/**
 * A cell's run history in the browser: the History view (cell toolbar, context
 * menu, palette) and the stale marks on cells, in every tab.
 */
export const cellHistoryPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-loop:cell-history',
  description:
    'Shows a cell’s runs (who, what, the source it ran, its outputs), marks stale outputs, and lists a notebook’s kept versions.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette, ILabShell],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    palette: ICommandPalette | null
  ): void => {
    const contents = app.serviceManager.contents;
    const open = (panel: NotebookPanel, cellId: string): void => {
      const shown = Array.from(app.shell.widgets('main')).find(
        widget =>
          widget instanceof CellHistoryView &&
          widget.cellId === cellId &&
          !widget.isDisposed
      ) as CellHistoryView | undefined;
      if (shown) {
        void shown.refresh();
        app.shell.activateById(shown.id);
        return;
      }
      const view = new CellHistoryView(panel, cellId, contents, () =>
        openVersions(panel)
      );
      app.shell.add(view, 'main', { mode: 'split-right', ref: panel.id });
      app.shell.activateById(view.id);
    };
    const openVersions = (panel: NotebookPanel): void => {
      const shown = Array.from(app.shell.widgets('main')).find(
        widget =>
          widget instanceof NotebookVersionsView &&
          widget.panel === panel &&
          !widget.isDisposed
      ) as NotebookVersionsView | undefined;
      if (shown) {
        void shown.refresh();
        app.shell.activateById(shown.id);
        return;
      }
      const view = new NotebookVersionsView(panel, contents);
      app.shell.add(view, 'main', { mode: 'split-right', ref: panel.id });
      app.shell.activateById(view.id);
    };

    app.commands.addCommand(CELL_HISTORY, {
      label: 'Show Cell History',
      caption: "See this cell's runs: who ran what, how it ended, its outputs",
      icon: historyIcon,
      isEnabled: () => tracker.activeCell?.model.type === 'code',
      execute: args => {
        const panel = tracker.currentWidget;
        const cellId =
          typeof args.cellId === 'string'
            ? args.cellId
            : tracker.activeCell?.model.id;
        if (panel && cellId) {
          open(panel, cellId);
        }
      }
    });
    palette?.addItem({
      command: CELL_HISTORY,
      category: 'Notebook Cell Operations'
    });

    app.commands.addCommand(NOTEBOOK_VERSIONS, {
      label: 'Show Notebook Versions',
      caption:
        'See the versions of this notebook the server kept, and restore one',
      icon: historyIcon,
      isEnabled: () => tracker.currentWidget !== null,
      execute: () => {
        const panel = tracker.currentWidget;
        if (panel) {
          openVersions(panel);
        }
      }
    });
    palette?.addItem({
      command: NOTEBOOK_VERSIONS,
      category: 'Notebook Operations'
    });

    tracker.widgetAdded.connect((_, panel) => {
      void panel.context.ready.then(() => {
        if (panel.isDisposed) {
          return;
        }
        const marks = new StaleMarks(panel, contents, cellId =>
          open(panel, cellId)
        );
        panel.disposed.connect(() => marks.dispose());
      });
    });
  }
};
