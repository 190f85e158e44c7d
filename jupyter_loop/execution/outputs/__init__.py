"""A cell's outputs on their way into the shared notebook: kernel messages as edits
(:mod:`.ops`), masked, kept within the per-cell budget, and written by the one writer of the
cell (:mod:`.writer`) the way JupyterLab reads a shared code cell.

Most modules here are pure (no I/O): the model of what the document should hold
(:mod:`.cell_outputs`, :mod:`.budget_model`, :mod:`.sync`) is tried without a kernel or a
document. What the notebook cannot keep goes to ``execution/full_outputs/``.
"""
