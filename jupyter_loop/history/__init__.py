"""What a notebook had before: its cells' past runs as the History view and the stale marks
read them (:mod:`.cells`, :mod:`.handlers`), its saved versions (:mod:`.versions`), and how
much of both is kept (:mod:`.traits`).

The run history itself is written by execution (``execution/history.py``, a row per run as
the queue ends it): this room reads it and sits above execution, never under it.
"""
