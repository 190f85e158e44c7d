"""The tabs' connections to a room: how the room sends to them, and which one a room hook
is serving. jupyter_server_ydoc's handler and pycrdt-websocket's room, reached by name."""

from __future__ import annotations

import asyncio
import weakref
from functools import partial
from typing import Any

from pycrdt import TransactionEvent, create_update_message

_SENDING_AT_ONCE: weakref.WeakSet[Any] = weakref.WeakSet()


def send_at_once(room: Any) -> None:
    """Have each tab's connection to ``room`` send small frames at once (``TCP_NODELAY``,
    tornado's ``set_nodelay``), as the browser's end of it already does.

    Neither tornado nor jupyter_server_ydoc switches Nagle's algorithm off, so an update
    the room sends while the tab has not yet acknowledged the one before waits for that
    acknowledgement, which the tab's system delays up to 40 ms: a run's start marks, then
    its first output a few milliseconds later, showed ``1 + 1``'s result about 30 ms late
    in half the runs (found with a timeline of ``bench/browser_latency.js``).
    """
    for client in list(getattr(room, "clients", ())):
        if client in _SENDING_AT_ONCE or getattr(client, "ws_connection", None) is None:
            continue
        try:
            client.set_nodelay(True)
        except Exception:  # a connection closing meanwhile: nothing to send any more
            continue
        _SENDING_AT_ONCE.add(client)


_SENDING_AT_COMMIT: weakref.WeakSet[Any] = weakref.WeakSet()


def send_at_commit(room: Any) -> None:
    """Have ``room`` send each update of its document to its tabs as the transaction that
    made it ends, instead of from its broadcast task (call once :func:`observed`).

    pycrdt-websocket's room puts each update in a memory stream; a task reads it and
    starts a task per tab to send it: two turns of the event loop, each behind whatever
    else was ready (jupyter_server's own websocket of the tab's kernel, busy with the same
    kernel message). A line a running cell printed reached its tabs 1 to 1.5 ms after its
    update was made, the gap to stock JupyterLab's kernel websocket. Here the update goes
    out at once to each tab's connection (tornado's ``write_message`` writes the frame
    when called), still in the order the updates are made; a client that is no tab
    connection (``LiveDocuments``' stand-in) and the store are handed it as the room
    does (jupyter-loop's store takes the update at once and starts one task per batch
    of updates, :meth:`~jupyter_loop.ystore.CompactSQLiteYStore.take`: an anyio task per
    update was a tenth of a busy server's loop at 20 printing notebooks). Rejected: a
    room subclass (jupyter_server_ydoc builds its rooms itself) and sending beside the
    room's own broadcast (every update twice to every tab).
    """
    if room in _SENDING_AT_COMMIT or getattr(room, "_subscription", None) is None:
        return
    room.ydoc.unobserve(room._subscription)
    room._subscription = room.ydoc.observe(partial(_send_update, room))
    _SENDING_AT_COMMIT.add(room)


def _send_update(room: Any, event: TransactionEvent) -> None:
    tasks = room._task_group
    if tasks is None or tasks.cancel_scope.cancel_called:
        return  # the room is stopping, as its own broadcast would see
    update = event.update
    message = create_update_message(update)
    for client in list(room.clients):
        write = getattr(client, "write_message", None)
        try:
            if write is None:
                tasks.start_soon(client.send, message)
            elif getattr(client, "ws_connection", None) is not None:
                write(message, binary=True)
        except Exception:  # a tab closing meanwhile syncs again when it comes back
            continue
    if room.ystore is None:
        return
    take = getattr(room.ystore, "take", None)
    if take is not None:
        take(update, tasks)  # a task per batch of updates, not per update
    else:
        tasks.start_soon(_store, room.ystore, update)


async def _store(ystore: Any, update: bytes) -> None:
    """Store an update once the store has started, as the room's broadcast does."""
    await ystore.started.wait()
    await ystore.write(update)


def served_connection(room: Any) -> Any | None:
    """The tab connection of ``room`` that the running task serves (``None`` outside the
    room's serving of a tab).

    pycrdt-websocket's room reads each tab's messages in the task the tab's handler made
    for it, which the handler keeps among its ``_background_tasks``; a room hook that
    must answer its tab later (``returning_tabs``) finds it there. A client that is no
    handler (``LiveDocuments``' stand-in, which keeps a room in memory) is passed by.
    """
    task = asyncio.current_task()
    for client in list(getattr(room, "clients", ())):
        if task in getattr(client, "_background_tasks", ()):
            return client
    return None
