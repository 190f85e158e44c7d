"""The notebook as a model sees it: cells read and masked, mapped, summarised, enveloped.

Shared by the assistant's turns (``agent/``), inline completions (``completion/``) and the
tools external clients call over MCP or from the terminal (``agent/outside.py``), so that
each of them reads cells, masks secrets and cuts outputs the same way:

- :mod:`.snapshot` — cells read from the live document, masked whole before any cut;
- :mod:`.notebook_map` — one line per cell (:class:`~.notebook_map.CellSnapshot`), cut
  around the focus to a budget;
- :mod:`.summary` — outputs within a budget (text as head + tail, tracebacks, images and
  tables), over its parts ``_excerpt``, ``_traceback`` and ``_media``;
- :mod:`.vision` — image outputs shrunk for models that take images;
- :mod:`.envelope` — the untrusted-data envelope notebook text travels in.

Nothing here imports the agent: the agent, completions and MCP build on this, not the
other way round. These modules used to live in ``agent/``, where completions had to reach
into the agent's private modules for them. Each part is imported by name; the package
re-exports nothing.
"""
