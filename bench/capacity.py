"""A team server: N busy notebooks on one server, jupyter-loop against stock JupyterLab.

One server (127.0.0.1, its own home), ``N`` notebooks each printing ``--rate`` lines a
second of 80 characters for ``--seconds``, each with one open "tab": a Y client on the
notebook's room plus the kernel websocket a JupyterLab panel keeps (binary v1 protocol).
Beside them a collaborator types in another notebook (a keystroke every 200 ms from one Y
client, timed until a second Y client sees it) and ``GET /api/status`` is sampled every
100 ms.

* jupyter-loop: the tab asks for the run over the runs socket; the server writes the
  outputs into the room; print→tab is timed when the line reaches the tab's Y document.
* stock (the same venv, jupyter_loop disabled with ``--ServerApp.jpserver_extensions``):
  the tab sends ``execute_request`` on the kernel websocket and writes each stream
  message into the room, as stock's browser does; print→tab is timed when the line
  reaches the kernel websocket (what stock's page renders from).

Systems alternate within a repeat (the order swapped every repeat), so the load other
programs put on the machine falls on both alike. Each line carries the kernel's
``time.time()``; the bench and the kernels share the clock.

Printed per system and N (medians over the repeats): status p95 and its slowest answer
(the loop held at least that long, less the request's own time), keystroke echo p95,
print→tab p95, the server's CPU per 10k lines net of its idle CPU (with N rooms open),
its idle CPU, the kernels' and keepers' CPU apart, the bench client's own CPU, the saves
("Saving file" in the server's log) during the run and lines lost (the tab and the saved
``.ipynb`` each hold every line?) and, for jupyter-loop, the holds of its loop of about
50 ms or more its watchdog named while the notebooks printed (``loop_stall_warning`` at
0.15 s; the watchdog looks every 0.1 s, so it misses some: a floor, not a count; the
slowest status answer bounds them from above, with the bench's own delays in it). Then
the knee per system: the first N where status p95 > 100 ms, echo p95 > 250 ms or
print→tab p95 > 1 s.

Usage::

    python bench/capacity.py [--n 10,20,40] [--rate 50] [--seconds 20] [--repeat 1]
                             [--systems loop,stock] [--idle 5] [--keep-home]

Every server and kernel it starts is stopped at the end of its round.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import psutil
from jupyter_server.services.kernels.connection.base import (
    deserialize_msg_from_ws_v1,
    serialize_msg_to_ws_v1,
)
from jupyter_ydoc import YNotebook
from pycrdt import Map, Provider, Text
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from jupyter_loop.cli.ychannel import TornadoChannel
from jupyter_loop.document.reference import NotebookRef
from jupyter_loop.testing.server_process import TOKEN, ServerProcess, ask_run_socket

LINE = 80
PY_SPY = str(Path(sys.executable).parent / "py-spy")
WS_V1 = "v1.kernel.websocket.jupyter.org"
_LINE_RE = re.compile(r"^(\d+\.\d+) (\d{7}) x+$")
STOCK = ('--ServerApp.jpserver_extensions={"jupyter_loop": False}',)
# The servers' own defaults, not the fast saves of the test helper (ServerProcess).
DEFAULTS = ("--YDocExtension.document_save_delay=1.0",)
# The watchdog names every hold of the loop of about 50 ms it sees (loop_health.py: it looks
# every 0.1 s, so a hold between two looks is missed): the "holds" column, while printing.
LOOP = ("--JupyterLoopApp.save_interval=30.0", "--JupyterLoopApp.loop_stall_warning=0.15")
STALL_WARNING = "event loop has not run"


def printing_code(rate: float, seconds: float) -> str:
    lines = int(rate * seconds)
    return (
        "import time\n"
        "t0 = time.time()\n"
        f"for i in range({lines}):\n"
        "    head = f'{time.time():.4f} {i:07d} '\n"
        f"    print(head + 'x' * ({LINE - 1} - len(head)))\n"
        f"    time.sleep(max(0.0, t0 + (i + 1) / {rate} - time.time()))\n"
    )


def p95(values: list[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


class Lines:
    """The printed lines one tab has seen, and how late each came."""

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.delays: list[float] = []
        self._partial = ""

    def feed(self, text: str) -> None:
        now = time.time()
        text = self._partial + text
        *complete, self._partial = text.split("\n")
        for line in complete:
            match = _LINE_RE.match(line)
            if match is None:
                continue
            index = int(match.group(2))
            if index not in self.seen:
                self.seen.add(index)
                self.delays.append(now - float(match.group(1)))


def lines_in_file(path: Path) -> int:
    try:
        notebook = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
    except (OSError, ValueError):
        return 0
    text = "".join(
        output.get("text", "")
        for output in notebook.cells[0].get("outputs", [])
        if output.get("output_type") == "stream"
    )
    return len({m.group(2) for line in text.split("\n") if (m := _LINE_RE.match(line))})


class KernelSocket:
    """The kernel websocket a notebook panel keeps (v1 binary protocol)."""

    def __init__(self, connection: WebSocketClientConnection, session: str) -> None:
        self.connection = connection
        self.session = session

    @classmethod
    async def open(cls, server: ServerProcess, kernel_id: str) -> KernelSocket:
        session = uuid.uuid4().hex
        url = server.url("api", "kernels", kernel_id, "channels").replace("http", "ws", 1)
        request = HTTPRequest(
            f"{url}?session_id={session}",
            headers={"Authorization": f"token {TOKEN}"},
            connect_timeout=120,
            request_timeout=120,
        )
        connection = await websocket_connect(request, subprotocols=[WS_V1])
        return cls(connection, session)

    async def execute(self, code: str) -> str:
        msg_id = uuid.uuid4().hex
        header = {
            "msg_id": msg_id, "msg_type": "execute_request", "username": "bench",
            "session": self.session, "date": "", "version": "5.3",
        }  # fmt: skip
        content = {
            "code": code, "silent": False, "store_history": True,
            "user_expressions": {}, "allow_stdin": False, "stop_on_error": True,
        }  # fmt: skip
        parts = [json.dumps(part).encode() for part in (header, {}, {}, content)]
        await self.connection.write_message(serialize_msg_to_ws_v1(parts, "shell"), binary=True)
        return msg_id

    async def messages(self) -> Any:
        while True:
            raw = await self.connection.read_message()
            if raw is None:
                return
            if isinstance(raw, str):
                continue
            channel, parts = deserialize_msg_from_ws_v1(raw)
            if channel != "iopub":
                yield channel, None
                continue
            yield channel, (json.loads(parts[0]), json.loads(parts[1]), json.loads(parts[3]))


async def open_room(server: ServerProcess, path: str) -> tuple[TornadoChannel, YNotebook]:
    """A channel to the notebook's room (``ServerProcess.open_room``, with the patience a
    loaded machine needs)."""
    session = await server.api(
        "api", "collaboration", "session", path, method="PUT",
        body={"format": "json", "type": "notebook"},
    )  # fmt: skip
    room = NotebookRef(path, str(session["fileId"])).room_id
    url = server.url("api", "collaboration", "room", room).replace("http", "ws", 1)
    request = HTTPRequest(
        f"{url}?sessionId={session['sessionId']}",
        headers={"Authorization": f"token {TOKEN}"},
        connect_timeout=120,
        request_timeout=120,
    )
    return TornadoChannel(await websocket_connect(request), room), YNotebook()


@dataclass
class Tab:
    """One notebook's open tab: its room and its kernel websocket."""

    path: str
    kernel_id: str
    document: YNotebook
    provider: Provider
    kernel: KernelSocket
    lines: Lines = field(default_factory=Lines)
    done: asyncio.Event = field(default_factory=asyncio.Event)


def follow_outputs(tab: Tab, expected: int) -> None:
    """jupyter-loop: the lines as they reach the tab's Y document."""

    def on_event(events: Iterable[Any]) -> None:
        for event in events:
            for change in getattr(event, "delta", None) or []:
                inserted = change.get("insert") if isinstance(change, dict) else None
                if isinstance(inserted, str):
                    tab.lines.feed(inserted)
                elif isinstance(inserted, list):
                    for item in inserted:
                        if isinstance(item, Map) and isinstance(item.get("text"), Text):
                            tab.lines.feed(str(item["text"]))
        if len(tab.lines.seen) >= expected:
            tab.done.set()

    tab.document.ycells.observe_deep(on_event)


async def drain(tab: Tab) -> None:
    """jupyter-loop's tab keeps the kernel websocket open and reads it, as a panel does."""
    async for _ in tab.kernel.messages():
        pass


async def stock_run(tab: Tab, code: str) -> None:
    """Stock: the tab runs the cell and writes its stream output into the room."""
    msg_id = await tab.kernel.execute(code)
    cell = tab.document.ycells[0]
    outputs = cell["outputs"]
    async for _channel, message in tab.kernel.messages():
        if message is None:
            continue
        header, parent, content = message
        if parent.get("msg_id") != msg_id:
            continue
        kind = header["msg_type"]
        if kind == "stream":
            text = content["text"]
            tab.lines.feed(text)  # what the page renders from
            if len(outputs) and outputs[len(outputs) - 1].get("output_type") == "stream":
                stream: Text = outputs[len(outputs) - 1]["text"]
                stream += text
            else:
                outputs.append(Map({"output_type": "stream", "name": "stdout", "text": Text(text)}))
        elif kind == "execute_input":
            cell["execution_count"] = content.get("execution_count")
        elif kind == "status" and content.get("execution_state") == "idle":
            tab.done.set()
            return


class Probe:
    """``GET /api/status`` every 100 ms, and the collaborator's keystroke echo."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self.status: list[float] = []
        self.echo: list[float] = []

    async def statuses(self, stop: asyncio.Event) -> None:
        client = AsyncHTTPClient()
        request = HTTPRequest(
            self.server.url("api", "status"),
            headers={"Authorization": f"token {TOKEN}"},
            request_timeout=60,
        )
        while not stop.is_set():
            start = time.perf_counter()
            await client.fetch(request)
            self.status.append(time.perf_counter() - start)
            await asyncio.sleep(max(0.0, 0.1 - (time.perf_counter() - start)))

    async def typing(self, writer: YNotebook, reader: YNotebook, stop: asyncio.Event) -> None:
        source: Text = writer.ycells[0]["source"]
        seen: Text = reader.ycells[0]["source"]
        sent: dict[int, float] = {}

        def on_change(_: Any) -> None:
            now = time.perf_counter()
            for length in [n for n in sent if n <= len(seen)]:
                self.echo.append(now - sent.pop(length))

        seen.observe(on_change)
        while not stop.is_set():
            source += "a"
            sent[len(source)] = time.perf_counter()
            await asyncio.sleep(0.2)


async def keep(provider: Provider) -> None:
    """Keep a tab's document synced with its room until cancelled."""
    async with provider:
        await asyncio.Event().wait()


def cpu_seconds(process: psutil.Process) -> float:
    with contextlib.suppress(psutil.Error):
        times = process.cpu_times()
        return times.user + times.system
    return 0.0


def family_cpu(server: psutil.Process) -> dict[str, float]:
    """CPU seconds of the server, its kernels and its keepers, apart."""
    totals = {"server": cpu_seconds(server), "kernels": 0.0, "keepers": 0.0}
    with contextlib.suppress(psutil.Error):
        for child in server.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                command = " ".join(child.cmdline())
                kind = "keepers" if "jupyter_loop.keeper" in command else "kernels"
                totals[kind] += cpu_seconds(child)
    return totals


def in_log(home: Path, words: str) -> int:
    """How many times the server's log says ``words`` so far."""
    return sum(
        log.read_text(encoding="utf-8", errors="replace").count(words)
        for log in home.glob("server-*.log")
    )


@dataclass
class Round:
    system: str
    n: int
    status_p95: float
    status_max: float  # the slowest status answer while the notebooks printed
    echo_p95: float
    print_p95: float
    cpu_per_10k: float
    idle_cpu: float
    kernels_cpu: float
    keepers_cpu: float
    client_cpu: float
    saves: int
    lost_tab: int
    lost_file: int
    holds: int | None = None  # the loop's holds of ~50 ms+ named while printing (loop only)


async def one_round(system: str, n: int, args: argparse.Namespace) -> Round:
    home = Path(tempfile.mkdtemp(prefix=f"capacity-{system}-"))
    options = (*DEFAULTS, *(LOOP if system == "loop" else STOCK), *args.server_option)
    server = ServerProcess(home, *options)
    server.root.mkdir(parents=True)
    code = printing_code(args.rate, args.seconds)
    expected = int(args.rate * args.seconds)
    paths = [f"busy{i:03d}.ipynb" for i in range(n)]
    for path in [*paths, "typing.ipynb"]:
        notebook = nbformat.v4.new_notebook()
        notebook.cells.append(nbformat.v4.new_code_cell(code if path in paths else "", id="c0"))
        (server.root / path).write_text(nbformat.writes(notebook))
    server.start()
    assert server.process is not None
    me = psutil.Process()
    keep_home = args.keep_home
    tabs: list[Tab] = []
    stop = asyncio.Event()
    background: list[asyncio.Task[Any]] = []
    try:
        await server.ready()
        proc = psutil.Process(server.process.pid)
        for batch in range(0, n, 8):  # sessions in small batches: kernels start in parallel
            ids = await asyncio.gather(*(server.start_kernel(p) for p in paths[batch : batch + 8]))
            for path, kernel_id in zip(paths[batch : batch + 8], ids, strict=True):
                channel, document = await open_room(server, path)
                provider = Provider(document.ydoc, channel)
                background.append(asyncio.ensure_future(keep(provider)))
                kernel = await KernelSocket.open(server, kernel_id)
                tabs.append(Tab(path, kernel_id, document, provider, kernel))
        typists = []
        for _ in range(2):
            channel, document = await open_room(server, "typing.ipynb")
            provider = Provider(document.ydoc, channel)
            background.append(asyncio.ensure_future(keep(provider)))
            typists.append((document, provider))
        for tab in [*tabs]:
            while not len(tab.document.ycells):
                await asyncio.sleep(0.05)
        for document, _ in typists:
            while not len(document.ycells):
                await asyncio.sleep(0.05)
        if system == "loop":
            for tab in tabs:
                follow_outputs(tab, expected)
                background.append(asyncio.ensure_future(drain(tab)))
        await asyncio.sleep(2)  # rooms settle
        # Idle: N rooms open, tabs connected, nothing printing.
        before, started = family_cpu(proc), time.monotonic()
        await asyncio.sleep(args.idle)
        idle_rate = (family_cpu(proc)["server"] - before["server"]) / (time.monotonic() - started)
        probe = Probe(server)
        background.append(asyncio.ensure_future(probe.statuses(stop)))
        background.append(asyncio.ensure_future(probe.typing(typists[0][0], typists[1][0], stop)))
        saves_before, holds_before = in_log(home, "Saving file:"), in_log(home, STALL_WARNING)
        spy = None
        if args.py_spy:
            out = Path(args.py_spy) / f"{system}-{n}-{time.strftime('%H%M%S')}.txt"
            spy = subprocess.Popen(
                [PY_SPY, "record", "--pid", str(proc.pid), "--format", "raw", "--rate", "50",
                 "--duration", str(int(args.seconds)), "--output", str(out)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        before, started = family_cpu(proc), time.monotonic()
        client_before = cpu_seconds(me)
        if system == "loop":
            socket = await server.open_run_socket()
            for tab in tabs:
                body = {"path": tab.path, "cell_ids": ["c0"], "kernel_id": tab.kernel_id}
                await ask_run_socket(socket, body)
        else:
            background.extend(asyncio.ensure_future(stock_run(tab, code)) for tab in tabs)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(
                asyncio.gather(*(tab.done.wait() for tab in tabs)), args.seconds + 60
            )
        elapsed = time.monotonic() - started
        after = family_cpu(proc)
        client_cpu = cpu_seconds(me) - client_before
        holds = in_log(home, STALL_WARNING) - holds_before  # while printing, not after
        stop.set()
        if spy is not None:  # waited for off the loop; a py-spy that hangs is stopped
            with contextlib.suppress(subprocess.TimeoutExpired):
                await asyncio.to_thread(spy.wait, 30)
            if spy.poll() is None:
                spy.kill()
        await asyncio.sleep(args.settle)  # the last saves land
        saves = in_log(home, "Saving file:") - saves_before
        if system == "loop":  # the server's own view of its loop (loop_health.py)
            status = await server.api("api", "jupyter-loop", "status")
            print(f"  loop N={n}: the server's loop lag {status.get('loop')}", file=sys.stderr)
        seen = [len(tab.lines.seen) for tab in tabs]
        in_files = [lines_in_file(server.root / tab.path) for tab in tabs]
        lines = sum(seen) or 1
        net = after["server"] - before["server"] - idle_rate * elapsed
        return Round(
            system=system,
            n=n,
            status_p95=p95(probe.status) * 1000,
            status_max=max(probe.status, default=0.0) * 1000,
            echo_p95=p95(probe.echo) * 1000,
            print_p95=p95([d for tab in tabs for d in tab.lines.delays]) * 1000,
            cpu_per_10k=net / lines * 10_000,
            idle_cpu=idle_rate * 100,
            kernels_cpu=(after["kernels"] - before["kernels"]) / elapsed * 100,
            keepers_cpu=(after["keepers"] - before["keepers"]) / elapsed * 100,
            client_cpu=client_cpu / elapsed * 100,
            saves=saves,
            lost_tab=expected * n - sum(seen),
            lost_file=expected * n - sum(in_files),
            holds=holds if system == "loop" else None,
        )
    except Exception:
        keep_home = True  # the server's log says what held it up
        raise
    finally:
        stop.set()
        for task in background:
            task.cancel()
        for tab in tabs:
            tab.kernel.connection.close()
        server.kill()
        if not keep_home:
            shutil.rmtree(home, ignore_errors=True)
        else:
            print(f"  ({system} N={n}: home kept in {home})", file=sys.stderr)


@dataclass(frozen=True)
class Failed:
    """A round that did not get to measure (a tab that could not connect, say): at that N
    the server was not smooth, or the bench was wrong; its server's home is kept."""

    system: str
    n: int
    error: str


def knee(rounds: dict[int, list[Round]], failed_at: set[int]) -> str:
    for n in sorted({*rounds, *failed_at}):
        if n in failed_at:
            return f"N={n} (a round failed)"
        r = rounds[n]
        status = statistics.median(x.status_p95 for x in r)
        echo = statistics.median(x.echo_p95 for x in r)
        printed = statistics.median(x.print_p95 for x in r)
        if status > 100 or echo > 250 or printed > 1000:
            return f"N={n}"
    return f"above N={max(rounds)}" if rounds else "no round measured"


def table(results: list[Round], failed: list[Failed], args: argparse.Namespace) -> None:
    print(
        f"\n{args.rate:g} lines/s of {LINE} chars for {args.seconds:g} s per notebook, "
        f"{args.repeat} repeat(s), medians over repeats (2 cores shared: noisy)"
    )
    header = (
        "system", "N", "status p95", "status max", "echo p95", "print→tab p95", "srv CPU/10k lines",
        "idle CPU", "kernels CPU", "keepers CPU", "bench CPU", "saves", "lost tab/file",
        "holds ≥50 ms",
    )  # fmt: skip
    print(" | ".join(header))
    by: dict[str, dict[int, list[Round]]] = {}
    for r in results:
        by.setdefault(r.system, {}).setdefault(r.n, []).append(r)
    for system, rounds in by.items():
        for n, rs in sorted(rounds.items()):

            def med(name: str, rs: list[Round] = rs) -> float:
                return statistics.median(getattr(x, name) for x in rs)

            print(
                f"{system} | {n} | {med('status_p95'):.1f} ms | {med('status_max'):.0f} ms | "
                f"{med('echo_p95'):.1f} ms | "
                f"{med('print_p95'):.0f} ms | {med('cpu_per_10k'):.2f} s | "
                f"{med('idle_cpu'):.0f} % | {med('kernels_cpu'):.0f} % | "
                f"{med('keepers_cpu'):.0f} % | {med('client_cpu'):.0f} % | "
                f"{med('saves'):.0f} | {med('lost_tab'):.0f}/{med('lost_file'):.0f} | "
                + (f"{med('holds'):.0f}" if rs[0].holds is not None else "—")
            )
    for f in failed:
        print(f"{f.system} | {f.n} | failed: {f.error}")
    for system in dict.fromkeys([*by, *(f.system for f in failed)]):
        failed_at = {f.n for f in failed if f.system == system}
        print(f"knee ({system}): {knee(by.get(system, {}), failed_at)}")


async def main(args: argparse.Namespace) -> None:
    # SIGTERM cancels the bench, so the round under way stops its server and kernels.
    main_task = asyncio.current_task()
    assert main_task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, main_task.cancel)
    systems = args.systems.split(",")
    results: list[Round] = []
    failed: list[Failed] = []
    for repeat in range(args.repeat):
        for n in args.n:
            order = systems if repeat % 2 == 0 else systems[::-1]
            for system in order:
                try:
                    result = await one_round(system, n, args)
                except Exception as e:  # the next rounds still run: say it in the table
                    failed.append(Failed(system, n, f"{type(e).__name__}: {e}"))
                    print(f"{system} N={n} failed: {e!r}", file=sys.stderr, flush=True)
                    continue
                print(result, file=sys.stderr, flush=True)
                results.append(result)
    table(results, failed, args)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=lambda s: [int(x) for x in s.split(",")], default=[10, 20, 40])
    parser.add_argument("--rate", type=float, default=50)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--systems", default="loop,stock")
    parser.add_argument("--idle", type=float, default=5, help="seconds of idle CPU measured")
    parser.add_argument("--settle", type=float, default=4, help="seconds for the last saves")
    parser.add_argument("--keep-home", action="store_true")
    parser.add_argument(
        "--py-spy", metavar="DIR", help="profile the server (py-spy raw stacks) during each run"
    )
    parser.add_argument(
        "--server-option", action="append", default=[], help="another server option, repeatable"
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse(sys.argv[1:])))
