import { Notebook } from '@jupyterlab/notebook';

/** Ids of cells in view sent with a request at most (the server's limit). */
export const MAX_VISIBLE_CELLS = 200;

/**
 * The ids of the cells the notebook shows on screen, top to bottom. With
 * windowing, cells scrolled far away are not in the page at all and are
 * skipped without being measured.
 */
export function visibleCellIds(notebook: Notebook): string[] {
  const view = (notebook.outerNode ?? notebook.node).getBoundingClientRect();
  const ids: string[] = [];
  for (const cell of notebook.widgets) {
    if (!cell.node.isConnected || cell.isHidden) {
      continue;
    }
    const box = cell.node.getBoundingClientRect();
    if (box.height > 0 && box.bottom > view.top && box.top < view.bottom) {
      ids.push(cell.model.id);
      if (ids.length === MAX_VISIBLE_CELLS) {
        break;
      }
    }
  }
  return ids;
}
