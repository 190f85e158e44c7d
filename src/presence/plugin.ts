import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  INotebookTracker,
  Notebook,
  NotebookPanel
} from '@jupyterlab/notebook';

import { FOCUS_FIELD, ICellFocus } from '../tokens';
import { AgentsAtWork } from './agents';

/**
 * What this tab's person has in hand: the active cell and the cells selected with
 * it, in notebook order.
 */
export function focusOf(notebook: Notebook): ICellFocus {
  const active = notebook.activeCell?.model.id ?? null;
  const selected = notebook.widgets
    .filter(cell => notebook.isSelectedOrActive(cell))
    .map(cell => cell.model.id);
  return { cell_id: active, selected_cell_ids: selected };
}

/**
 * Publish the cell this tab's person has active, and the selection, in the
 * notebook's awareness (beside the `user` field jupyter-collaboration publishes), so
 * an outside agent asked about "this cell" knows which one (issue 21, item 4).
 */
function publish(panel: NotebookPanel): void {
  const awareness = panel.model?.sharedModel.awareness;
  if (!awareness) {
    return;
  }
  const focus = focusOf(panel.content);
  const previous = awareness.getLocalState()?.[FOCUS_FIELD] as
    ICellFocus | undefined;
  if (
    previous?.cell_id === focus.cell_id &&
    JSON.stringify(previous?.selected_cell_ids) ===
      JSON.stringify(focus.selected_cell_ids)
  ) {
    return; // unchanged: no awareness message for every keystroke or scroll
  }
  awareness.setLocalStateField(FOCUS_FIELD, focus);
}

export const presencePlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-loop:presence',
  description:
    'Tells the others in a notebook which cell you have in hand, and shows agents at work on cells.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_: JupyterFrontEnd, tracker: INotebookTracker): void => {
    tracker.widgetAdded.connect((_, panel) => {
      const update = () => publish(panel);
      panel.content.activeCellChanged.connect(update);
      panel.content.selectionChanged.connect(update);
      void panel.context.ready.then(update);
      const agents = new AgentsAtWork(panel);
      panel.disposed.connect(() => agents.dispose());
    });
  }
};
