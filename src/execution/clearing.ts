import type { ICodeCellModel } from '@jupyterlab/cells';

import { ICellMarker } from '../payloads';

/**
 * Clear a code cell's outputs as its run is sent, as stock JupyterLab does in
 * the key's own handler; returns how to put them back if the server refuses
 * the run.
 *
 * The server clears them as well, when the cell starts. Cleared here, the page
 * does that work while it is busy with the key anyway; left to the server, the
 * page did it after its first 30 to 50 ms, right before the new output
 * (`bench/browser_latency.js --breakdown`: a cell that had printed 100 lines
 * showed its new last line 1.2x stock's time, 0.9 to 1.1x with the old lines
 * gone first). A cell already queued or running keeps its outputs until its
 * turn comes (the server's clear then), and a read-only notebook is not
 * touched (the server would refuse the run).
 */
export function clearAsSent(
  model: ICodeCellModel,
  marker: ICellMarker | undefined,
  readOnly: boolean
): () => void {
  if (
    readOnly ||
    (marker && marker.state !== 'done') ||
    !model.outputs.length
  ) {
    return () => undefined;
  }
  const shown = model.outputs.toJSON();
  // Not undoable, as in stock JupyterLab: the run, not the person, cleared them.
  model.sharedModel.transact(() => model.outputs.clear(), false);
  return () => {
    if (!model.isDisposed && !model.outputs.length) {
      model.sharedModel.transact(() => model.outputs.fromJSON(shown), false);
    }
  };
}
