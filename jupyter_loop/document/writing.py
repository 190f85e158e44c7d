"""The one door for jupyter-loop's own writes into a shared notebook.

Every change the server makes to a notebook (outputs, run marks, proposals, the assistant's
turn, a restored version, a cell set back for a tab back from offline) is made inside
:func:`writing`: one transaction with our origin. A tab and the store then get each write
as one update, the server's undo stack never holds our writes, and our own observers can
tell a write of ours from a person's. Callers that hold no notebook yet open it by its
room with :meth:`LiveDocuments.edit` (loaded if no tab has it open), which goes through
this door too.

Rejected: pinning the room for every write, as runs and turns pin it for their length. A
one-off write would then end by scheduling the room's clean-up, and a room freed while its
save still waits cancels that save (``lagging_files``); callers whose work spans awaits pin
the room themselves (``LiveDocuments.pinned``).

Example:
    >>> from jupyter_ydoc import YNotebook
    >>> nb = YNotebook()
    >>> updates = []
    >>> _ = nb.ydoc.observe(lambda event: updates.append(event.update))
    >>> with writing(nb):
    ...     nb.append_cell({"id": "c0", "cell_type": "code", "source": "", "metadata": {}})
    ...     nb.append_cell({"id": "c1", "cell_type": "code", "source": "", "metadata": {}})
    >>> len(updates), len(nb.ycells)  # two cells, one update for the tabs and the store
    (1, 2)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from jupyter_ydoc import YNotebook
from pycrdt import Doc

ORIGIN = "jupyter_loop"
"""Origin of every transaction we make: keeps our writes out of the server's undo stack."""


@contextmanager
def writing(notebook: YNotebook | Doc[Any]) -> Iterator[None]:
    """One transaction of ours on ``notebook`` (or a notebook's document)."""
    doc = notebook.ydoc if isinstance(notebook, YNotebook) else notebook
    with doc.transaction(origin=ORIGIN):
        yield
