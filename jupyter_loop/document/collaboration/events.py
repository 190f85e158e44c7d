"""What jupyter-collaboration's room events say, read off their ``action`` and ``msg``
(the event schema names the fields; the messages are upstream's wording, checked on each
supported line by ``tests/document/test_collaboration_adapter.py``)."""

from __future__ import annotations

from typing import Any

EVENTS_SCHEMA = "https://schema.jupyter.org/jupyter_collaboration/session/v1"
"""The schema of the rooms' events: ``load``/``initialize`` (built from the file),
``overwrite`` (reloaded from the file), ``save``."""


def built_from_file(event: Any) -> bool:
    """Whether a room event says the room's notebook now holds what its file held: the
    room was initialized (from the file, or from a store that matched it) or reloaded
    from the file after an out-of-band change (the event comes before that reload ends).

    >>> built_from_file({"action": "initialize", "msg": "Room initialized", "path": "a"})
    True
    >>> built_from_file({"action": "initialize", "msg": "The file is out-of-sync with …"})
    False
    """
    if not isinstance(event, dict):
        return False
    action = event.get("action")
    initialized = action == "initialize" and event.get("msg") == "Room initialized"
    return initialized or action == "overwrite"


def reload_about_to_begin(event: Any) -> bool:
    """Whether a room event comes just before the room sets its notebook from its file:
    at its load, after the store's notebook was applied and found out-of-sync (or with no
    store), and at an out-of-band change its watcher saw.

    >>> reload_about_to_begin({"action": "load", "msg": "Content loaded from disk."})
    True
    >>> reload_about_to_begin({"action": "overwrite", "msg": "Out-of-band changes while saving."})
    False
    """
    if not isinstance(event, dict):
        return False
    msg = str(event.get("msg", ""))
    if event.get("action") == "load":
        return msg.startswith("Content loaded from disk")
    return event.get("action") == "overwrite" and "while saving" not in msg


def reload_just_ended(event: Any) -> bool:
    """Whether a room event comes just after the room set its notebook from its file: a
    save that found the file changed on disk reloads it first, then says so.

    >>> reload_just_ended({"action": "overwrite", "msg": "Out-of-band changes while saving."})
    True
    """
    if not isinstance(event, dict):
        return False
    return event.get("action") == "overwrite" and "while saving" in str(event.get("msg", ""))


def reload_failed(event: Any) -> bool:
    """Whether a room event says the room could not read its file for a reload.

    >>> reload_failed({"level": "ERROR", "msg": "Error loading content from file: a.ipynb"})
    True
    >>> reload_failed({"level": "ERROR", "msg": "Error saving file: a.ipynb"})
    False
    """
    if not isinstance(event, dict):
        return False
    return event.get("level") == "ERROR" and str(event.get("msg", "")).startswith(
        "Error loading content"
    )
