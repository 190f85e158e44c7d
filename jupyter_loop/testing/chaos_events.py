"""The real events a chaos trial is made of, each chosen and shaped by a seeded ``Random``.

Every event acts through what a user or an operator has: a tab (a Y client over the
room's websocket), the REST API, the runs websocket, the ``jupyter loop`` CLI, an outside
agent over MCP (``chaos_agents``), signals
to the server process, and files on disk (the ``.ipynb``, the collaboration store).
Each returns one line saying what it did, for the trial's log and its replay.

Two rules keep the expected state knowable without guessing (see ``bench/chaos.py``):
a kill or an out-of-band write comes after the typed lines reached the file (tabs are
typed into, then :meth:`World.settle_typed`), and tabs are closed over a restart (a
browser tab cannot resume its document across one: the server's collaboration session
id changes, and jupyter-collaboration makes the tab reload).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from .chaos_agents import accept_proposal, mcp_run
from .chaos_world import World, cell_code, printed_lines
from .server_process import TOKEN, ask_run_socket

Event = Callable[[World, random.Random], Awaitable[str]]

TAB_NAMES = ("A", "B", "C")
RUN_CHANNELS = ("socket", "post", "cli", "mcp")


async def open_tab(world: World, rng: random.Random) -> str:
    name = rng.choice(TAB_NAMES)
    known = world.tabs.get(name)
    if known is not None and known.online:
        return f"tab {name} is open"
    await world.open_tab(name)
    return f"{'reopen' if known else 'open'} tab {name}"


async def close_tab(world: World, rng: random.Random) -> str:
    online = world.online_tabs()
    if not online:
        return await open_tab(world, rng)
    tab = rng.choice(online)
    # A tab closed for good takes what it has not sent yet with it (a browser asks before
    # closing a page that has): it closes once its lines reached the server.
    await world.settle_typed()
    await tab.disconnect()
    return f"close tab {tab.name}"


async def _some_tab(world: World, rng: random.Random) -> list[str]:
    """Open a tab if none is: typing needs one."""
    if world.online_tabs():
        return []
    return [await open_tab(world, rng)]


async def type_lines(world: World, rng: random.Random) -> str:
    """One tab, or two at once in the same cell, type a few lines."""
    done = await _some_tab(world, rng)
    if len(world.online_tabs()) < 2 and rng.random() < 0.5:
        done.append(await open_tab(world, rng))
    tabs = world.online_tabs()
    typists = rng.sample(tabs, min(len(tabs), rng.choice((1, 2))))
    cell = rng.choice(world.expected.cells)
    for _ in range(rng.randint(1, 3)):
        # Both tabs type before either hears the other: concurrent edits of one cell.
        for tab in typists:
            cell.type(tab.name, tab.type_line(cell.cell_id))
        await asyncio.sleep(rng.choice((0, 0.01, 0.05)))
    names = "+".join(tab.name for tab in typists)
    return "; ".join([*done, f"tabs {names} type in {cell.cell_id}"])


async def laptop_lid(world: World, rng: random.Random) -> str:
    """A tab loses its connection, types on while the room is freed, then reconnects."""
    done = await _some_tab(world, rng)
    tab = rng.choice(world.online_tabs())
    others = [other for other in world.online_tabs() if other is not tab]
    close_others = bool(others) and rng.random() < 0.7
    if close_others:  # the room is freed only when no client is left
        await world.settle_typed()  # as in ``close_tab``
        for other in others:
            await other.disconnect()
    await tab.disconnect()
    cell = rng.choice(world.expected.cells)
    for _ in range(rng.randint(1, 3)):
        cell.type(tab.name, tab.type_line(cell.cell_id))
    await asyncio.sleep(world.cleanup_delay * 2 + 0.5)
    await tab.connect()
    closed = " (others closed)" if close_others else ""
    return "; ".join(
        [*done, f"tab {tab.name} offline{closed}, types in {cell.cell_id}, reconnects"]
    )


async def run_cells(world: World, rng: random.Random) -> str:
    """Run some cells from a tab's runs socket, ``POST runs``, the CLI or MCP; maybe leave
    it in flight for the next event."""
    chosen = sorted(rng.sample([c.cell_id for c in world.expected.cells], rng.randint(1, 2)))
    how = rng.choice(RUN_CHANNELS)
    wait = rng.random() < 0.6
    others_running = any(not task.done() for task in world.in_flight)
    task = asyncio.ensure_future(_run(world, how, chosen))
    for cell_id in chosen:
        world.expected.cell(cell_id).stdout = None  # until this run is known to be over
    if wait:
        try:
            await asyncio.wait_for(asyncio.shield(task), 60)
        except asyncio.TimeoutError:
            world.errors.append(f"run of {chosen} from {how} not over in 60 s")
        except Exception as e:
            world.errors.append(f"run of {chosen} from {how} failed: {e!r}")
        else:
            for cell_id in chosen:
                cell = world.expected.cell(cell_id)
                # A run still in flight from before may run the cell again after this one.
                cell.stdout = None if others_running else printed_lines(cell.tag)
    else:
        world.in_flight.append(task)
        await asyncio.sleep(rng.choice((0.05, 0.2, 0.4)))
    tabs = "+".join(t.name for t in world.online_tabs()) or "no tab"
    return f"run {','.join(chosen)} from {how} with {tabs}{'' if wait else ', in flight'}"


async def _run(world: World, how: str, cell_ids: list[str]) -> None:
    server = world.server
    if how == "cli":
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "jupyter_loop.cli", "--url", server.url(), "--token", TOKEN,
            "run", world.path, *cell_ids,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        world.processes.append(process)
        out, err = await process.communicate()
        # Queued behind an agent's run that was refused (its code changed after the
        # approval: a checkout), a cell is dropped as after any failure, and said "not run".
        dropped = any(c.agent_asked for c in world.expected.cells) and b"not run" in out + err
        if process.returncode not in (0, -signal.SIGKILL) and not world.restarting and not dropped:
            world.errors.append(
                f"CLI run {cell_ids} exited {process.returncode}: {err.decode()[-300:]}"
            )
        return
    body = {"path": world.path, "cell_ids": cell_ids, "kernel_id": await world.kernel_id()}
    if how == "mcp":  # on the notebook's kernel, as the other channels
        for cell_id in cell_ids:
            world.expected.cell(cell_id).agent_asked = True
        await mcp_run(world, cell_ids)
        return
    if how == "socket":
        socket = await server.open_run_socket()
        try:
            await ask_run_socket(socket, body)
        finally:
            socket.close()
    else:
        await server.api("api", "jupyter-loop", "runs", method="POST", body=body)
    await world.wait_runs_over()


async def restart(world: World, rng: random.Random) -> str:
    """SIGTERM or SIGKILL the server (maybe mid-run), then start it on the same state."""
    sig = rng.choice((signal.SIGTERM, signal.SIGKILL))
    await world.settle_typed()
    await world.close_all_tabs()
    await world.stop_server(sig)
    await world.start_server()
    return f"restart after {signal.Signals(sig).name}{world.cut_note}"


async def damage_store(world: World, rng: random.Random) -> str:
    """With the server stopped, delete or truncate its collaboration store, or leave a
    hot journal in it; then start the server again."""
    how = rng.choice(("delete", "truncate", "hot journal"))
    await world.settle_typed()
    await world.close_all_tabs()
    await world.stop_server(signal.SIGTERM)
    store = world.server.ystore
    if how == "delete":
        for suffix in ("", "-journal", "-wal", "-shm"):
            store.with_name(store.name + suffix).unlink(missing_ok=True)
    elif how == "truncate" and store.exists():
        size = store.stat().st_size
        with store.open("r+b") as file:
            file.truncate(rng.randint(0, max(size - 1, 0)))
    elif store.exists():
        leave_hot_journal(str(store))
    if how != "hot journal":
        # Proposals live in the shared document only: a store deleted or cut drops them
        # (the server moves a store it cannot read aside), as it drops the assistant's.
        world.expected.offered.clear()
    await world.start_server()
    return f"store {how}{world.cut_note}"


def leave_hot_journal(db_path: str) -> None:
    """A process that dies mid-transaction, as SQLite's own crash tests do: the rollback
    journal it leaves must be rolled back by the next opener."""
    script = (
        "import os, sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('PRAGMA journal_mode=DELETE')\n"
        "db.execute('PRAGMA cache_size=1')\n"  # pages spill to the file before the end
        "db.execute('BEGIN IMMEDIATE')\n"
        "db.execute('DELETE FROM yupdates')\n"
        "for i in range(200):\n"
        "    db.execute('INSERT INTO yupdates VALUES (?, ?, ?, ?)', ('x', bytes(4000), b'', i))\n"
        "os._exit(0)\n"
    )
    try:
        with sqlite3.connect(db_path) as probe:
            probe.execute("SELECT count(*) FROM yupdates").fetchone()
    except sqlite3.DatabaseError:
        return  # no store table yet: nothing to leave half-written
    subprocess.run([sys.executable, "-c", script, db_path], check=False, capture_output=True)


async def out_of_band_write(world: World, rng: random.Random) -> str:
    """Replace the ``.ipynb`` on disk, as a ``git checkout`` does, with new code in some
    cells (their typed lines gone): with or without a run in flight."""
    await world.settle_typed()
    during_run = rng.random() < 0.5
    note = ""
    if during_run:
        note = " during " + await run_cells_in_flight(world, rng)
    changed = await replace_file(world, rng)
    if changed is None:
        return "out-of-band write skipped: the file is unreadable"
    return f"out-of-band write of {','.join(changed)}{note}"


async def lid_over_a_checkout(world: World, rng: random.Random) -> str:
    """A tab loses its connection and types on; meanwhile the ``.ipynb`` is replaced and
    the room reloads it (kept open by the other tabs, or freed first and built again);
    the tab comes back. The file came last and wins: lines typed offline in a cell the
    checkout replaced come back as a proposal on it; in any other cell they merge."""
    done = await _some_tab(world, rng)
    await world.settle_typed()
    tab = rng.choice(world.online_tabs())
    freed = rng.random() < 0.5
    if freed:
        for other in world.online_tabs():
            if other is not tab:
                await other.disconnect()
    await tab.disconnect()
    cell = rng.choice(world.expected.cells)
    lines = [tab.type_line(cell.cell_id) for _ in range(rng.randint(1, 3))]
    if freed:
        await asyncio.sleep(world.cleanup_delay * 2 + 0.5)
    changed = await replace_file(world, rng)
    if changed is None:
        return "lid over a checkout skipped: the file is unreadable"
    if cell.cell_id in changed:
        world.expected.offered.setdefault(cell.cell_id, []).extend(lines)
    else:
        for line in lines:
            cell.type(tab.name, line)
    await tab.connect()
    if cell.cell_id in changed:
        # As typed lines reach the file before a kill, the proposal reaches the store.
        await tab.wait_offered(cell.cell_id, lines)
    room = "freed" if freed else "open"
    return "; ".join(
        [
            *done,
            f"tab {tab.name} offline, types in {cell.cell_id}; checkout of "
            f"{','.join(changed)} (room {room}); tab reconnects",
        ]
    )


async def replace_file(world: World, rng: random.Random) -> list[str] | None:
    """Write new code into some cells of the ``.ipynb`` and rename it over the file, as
    ``git checkout`` does; the cells changed, once the room shows them (``None``: the file
    was unreadable)."""
    saved = world.file_json()
    if saved is None:
        return None
    changed = rng.sample(world.expected.cells, rng.randint(1, len(world.expected.cells)))
    for entry in saved["cells"]:
        # The file's outputs win too: a cell whose outputs are known shows the file's.
        model = next((c for c in world.expected.cells if c.cell_id == entry.get("id")), None)
        if model is not None and model.stdout is not None:
            model.stdout = file_stdout(entry)
    for cell in changed:
        cell.tag = f"{cell.cell_id}-o{len(cell.tags)}"
        cell.tags.append(cell.tag)
        cell.code = cell_code(cell.tag)
        cell.typed = {}
        world.expected.offered.pop(cell.cell_id, None)  # a proposal against older code
        for entry in saved["cells"]:
            if entry.get("id") == cell.cell_id:
                entry["source"] = cell.code
    target = world.server.root / world.path
    temporary = target.with_name(target.name + ".checkout")
    temporary.write_text(json.dumps(saved, indent=1), encoding="utf-8")
    os.replace(temporary, target)
    world.expected.out_of_band = True
    await world.wait_room_has_code()
    return [cell.cell_id for cell in changed]


def file_stdout(cell: dict[str, Any]) -> list[str] | None:
    """A saved cell's stdout lines; ``None`` when it holds any other output."""
    text = ""
    for output in cell.get("outputs") or []:
        if output.get("output_type") != "stream" or output.get("name") != "stdout":
            return None
        part = output.get("text", "")
        text += "".join(part) if isinstance(part, list) else str(part)
    return text.splitlines()


async def run_cells_in_flight(world: World, rng: random.Random) -> str:
    chosen = [rng.choice(world.expected.cells).cell_id]
    how = rng.choice(RUN_CHANNELS)
    world.expected.cell(chosen[0]).stdout = None
    world.in_flight.append(asyncio.ensure_future(_run(world, how, chosen)))
    await asyncio.sleep(rng.choice((0.3, 0.6, 0.9)))
    return f"a run of {chosen[0]} from {how}"


EVENTS: tuple[tuple[Event, int], ...] = (
    (open_tab, 3),
    (close_tab, 2),
    (type_lines, 6),
    (laptop_lid, 2),
    (run_cells, 6),
    (restart, 2),
    (damage_store, 1),
    (out_of_band_write, 2),
    (lid_over_a_checkout, 1),
    (accept_proposal, 2),
)


def plan(rng: random.Random, steps: int) -> list[Event]:
    events, weights = zip(*EVENTS, strict=True)
    return list(rng.choices(events, weights=weights, k=steps))
