import {
  ILabShell,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { historyIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

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
    /** Bring the view `shown` finds to the front, refreshed; else add `made()` beside `panel`. */
    const showView = <T extends Widget & { refresh(): Promise<void> }>(
      panel: NotebookPanel,
      shown: (widget: Widget) => widget is T,
      made: () => T
    ): void => {
      const found = Array.from(app.shell.widgets('main')).find(
        widget => shown(widget) && !widget.isDisposed
      ) as T | undefined;
      if (found) {
        void found.refresh();
        app.shell.activateById(found.id);
        return;
      }
      const view = made();
      app.shell.add(view, 'main', { mode: 'split-right', ref: panel.id });
      app.shell.activateById(view.id);
    };
    const open = (panel: NotebookPanel, cellId: string): void =>
      showView(
        panel,
        (widget): widget is CellHistoryView =>
          widget instanceof CellHistoryView && widget.cellId === cellId,
        () =>
          new CellHistoryView(panel, cellId, contents, () =>
            openVersions(panel)
          )
      );
    const openVersions = (panel: NotebookPanel): void =>
      showView(
        panel,
        (widget): widget is NotebookVersionsView =>
          widget instanceof NotebookVersionsView && widget.panel === panel,
        () => new NotebookVersionsView(panel, contents)
      );

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
