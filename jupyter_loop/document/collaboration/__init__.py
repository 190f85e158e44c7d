"""Every part of jupyter-collaboration (jupyter_server_ydoc) that jupyter-loop reaches past
its public API, in one package: the rooms (:mod:`.rooms`), the tabs' connections to them
(:mod:`.connections`) and what their events say (:mod:`.events`).

jupyter_server_ydoc offers ``get_document`` and its rooms' events; running cells on the
server needs more: a room's save now, its locks, its file loader's idea of the file, the
moment a new room starts sending updates. Each is reached here, by name, so that a new
collaboration release is checked in one place (``tests/document/test_collaboration_adapter.py``
runs against each supported line, JupyterLab 4.5's and 4.6's) and the rest of jupyter-loop
reads as if the API were public: it imports this package, never its modules. A part that
is missing raises ``AttributeError`` at its first use rather than being skipped in
silence, except where a line is known to lack it (said at the function).

Rejected: subclassing ``DocumentRoom`` or ``YDocExtension``: jupyter_server_ydoc builds its
rooms itself (no class to configure), and a subclass would copy more of upstream than the
handful of names used here.
"""

from .connections import send_at_commit, send_at_once, served_connection
from .events import (
    EVENTS_SCHEMA,
    built_from_file,
    reload_about_to_begin,
    reload_failed,
    reload_just_ended,
)
from .rooms import (
    EXTENSION,
    announce,
    awareness_states,
    delete_room,
    extension,
    hear_rooms,
    loaded,
    loader_lock,
    loader_of,
    look_at_file,
    not_reloading,
    notebook_of,
    observed,
    reload_file,
    room_lock,
    rooms,
    save_now,
    stored_document,
    update_lock,
)

__all__ = [
    "EVENTS_SCHEMA",
    "EXTENSION",
    "announce",
    "awareness_states",
    "built_from_file",
    "delete_room",
    "extension",
    "hear_rooms",
    "loaded",
    "loader_lock",
    "loader_of",
    "look_at_file",
    "not_reloading",
    "notebook_of",
    "observed",
    "reload_about_to_begin",
    "reload_failed",
    "reload_file",
    "reload_just_ended",
    "room_lock",
    "rooms",
    "save_now",
    "send_at_commit",
    "send_at_once",
    "served_connection",
    "stored_document",
    "update_lock",
]
