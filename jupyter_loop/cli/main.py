"""``jupyter loop``: run cells, ask the agent and answer it from a terminal.

Commands (a running Jupyter server with jupyter-loop; see ``--help``)::

    jupyter loop run NOTEBOOK [CELL…]      run cells (ids or numbers from 1; none: all)
    jupyter loop ask NOTEBOOK "question"   ask the notebook's agent, in its conversation
    jupyter loop approve NOTEBOOK ID [--turn|--deny]
    jupyter loop accept NOTEBOOK ID / jupyter loop reject NOTEBOOK ID
    jupyter loop status                    runs and agent turns in flight
    jupyter loop history NOTEBOOK [CELL]   the runs the cells had, who started them
    jupyter loop versions NOTEBOOK         the versions of the notebook the server kept
    jupyter loop restore NOTEBOOK VERSION  bring one of them back
    jupyter loop token create --scope read|propose|run [--notebook PATH] [--expires 8h]
    jupyter loop token list / jupyter loop token revoke ID

Exit statuses: see ``failures.py`` (``EXIT_STATUSES``); errors are one line, ``--debug``
adds the traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

# Only what ``--help`` needs is imported here: each command imports its own parts when it
# runs (the Y document for ``run``/``ask``, tornado's HTTP client for every call), so the
# client starts in a tenth of a second instead of the seconds the server's imports take.
from .failures import EXIT_STATUS_HELP, EXIT_STATUSES, explain
from .render import BOLD, DIM, Style, visible

if TYPE_CHECKING:
    from .connection import Api

__all__ = ["EXIT_STATUSES", "main", "parser"]


def connection_options(default: Any) -> argparse.ArgumentParser:
    """``--url``/``--token``, accepted before the command and after it.

    The copy on each command has ``SUPPRESS`` as its default: with ``None`` there, a command
    given no ``--url`` would overwrite the ``--url`` given before it (argparse copies a
    subparser's defaults over the namespace). Rejected: one parser with the options only on
    the commands (``jupyter loop --url … status``, the form documented so far, would break).
    """
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--url", default=default, help="The server's URL (with its base "
                         "URL), e.g. http://127.0.0.1:8888/user/ada/. Default: a running "
                         "server found in Jupyter's runtime files.")  # fmt: skip
    options.add_argument("--token", default=default, help="The server's token (default: "
                         "$JUPYTER_TOKEN, or the running server's).")  # fmt: skip
    options.add_argument("--debug", action="store_true", default=default, help="On an "
                         "error, print the traceback too.")  # fmt: skip
    return options


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="jupyter loop",
        description="Run notebook cells and talk to the notebook's agent on a running "
        "Jupyter server with jupyter-loop.",
        parents=[connection_options(None)],
        epilog=EXIT_STATUS_HELP,
    )
    per_command = [connection_options(argparse.SUPPRESS)]
    commands = top.add_subparsers(dest="command", required=True)

    def command(name: str, helptext: str) -> argparse.ArgumentParser:
        return commands.add_parser(
            name, help=helptext, parents=per_command, epilog=EXIT_STATUS_HELP
        )

    run = command("run", "Run cells and stream their outputs.")
    run.add_argument("notebook")
    run.add_argument("cells", nargs="*", metavar="CELL", help="Cell id or number (from 1).")
    ask = command("ask", "Ask the notebook's agent.")
    ask.add_argument("notebook")
    ask.add_argument("question")
    ask.add_argument("--model", help="The model to use (default: the server's).")
    ask.add_argument("--approval", choices=["ask", "turn", "always", "never"])
    ask.add_argument(
        "--agent", help="An ACP agent the server hosts, by name (default: the built-in assistant)."
    )
    approve = command("approve", "Answer a pending approval.")
    approve.add_argument("notebook")
    approve.add_argument("id")
    answer = approve.add_mutually_exclusive_group()
    answer.add_argument("--turn", action="store_true", help="Allow for the rest of the turn.")
    answer.add_argument("--deny", action="store_true", help="Refuse.")
    for name, helptext in (("accept", "Accept a proposal."), ("reject", "Reject a proposal.")):
        answering = command(name, helptext)
        answering.add_argument("notebook")
        answering.add_argument("id")
    command("status", "Runs and agent turns in flight.")
    history = command("history", "The runs a notebook's cells had.")
    history.add_argument("notebook")
    history.add_argument("cell", nargs="?", metavar="CELL", help="Cell id or number (from 1).")
    history.add_argument("--limit", type=int, default=20, help="Runs to show (default 20).")
    versions = command("versions", "The versions of a notebook the server kept.")
    versions.add_argument("notebook")
    restore = command("restore", "Bring back a kept version of a notebook.")
    restore.add_argument("notebook")
    restore.add_argument("version", help="The version's number (see versions).")
    restore.add_argument(
        "--now",
        action="store_true",
        help="Put it into an open notebook at once, not as a proposal to accept there.",
    )
    token = command("token", "Scoped tokens for outside agents (the MCP endpoint).")
    token_commands = token.add_subparsers(dest="token_command", required=True)
    create = token_commands.add_parser(
        "create", help="Make a token; it is printed alone on the last line.", parents=per_command
    )
    create.add_argument("--scope", required=True, choices=["read", "propose", "run"])
    create.add_argument("--notebook", help="The one notebook it may touch (default: any).")
    create.add_argument("--expires", help="How long it lasts: 30m, 8h, 7d (default: always).")
    token_commands.add_parser("list", help="Your tokens (not the tokens).", parents=per_command)
    revoke = token_commands.add_parser("revoke", help="Revoke a token.", parents=per_command)
    revoke.add_argument("id")
    return top


async def dispatch(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .connection import Api, find_server

    notebook = getattr(args, "notebook", None)
    server = find_server(args.url, args.token, notebook)
    api = Api(server)
    path = server.notebook_path(notebook) if notebook else ""
    agent = ("api", "jupyter-loop", "agent")
    if args.command == "run":
        from .run import run_command

        return await run_command(api, path, tuple(args.cells), out, err)
    if args.command == "ask":
        from .ask import ask_command

        return await ask_command(
            api, path, args.question, args.model, args.approval, out, err, agent=args.agent
        )
    if args.command == "approve":
        decision = "deny" if args.deny else "turn" if args.turn else "once"
        body = {"path": path, "decision": decision, "answered_in": "terminal"}
        await api.call(*agent, "approvals", args.id, method="POST", body=body)
        out.write(f"{decision}: {args.id}\n")
        return 0
    if args.command == "history":
        from .history import history_command

        return await history_command(api, path, args.cell, args.limit, out)
    if args.command in ("versions", "restore"):
        from .versions import restore_command, versions_command

        if args.command == "versions":
            return await versions_command(api, path, out)
        return await restore_command(api, path, args.version, args.now, out)
    if args.command == "token":
        from . import tokens

        if args.token_command == "create":
            return await tokens.create_command(api, args.scope, path, args.expires, out)
        if args.token_command == "list":
            return await tokens.list_command(api, out)
        return await tokens.revoke_command(api, args.id, out)
    if args.command in ("accept", "reject"):
        parts = (*agent, "proposals", args.id, args.command)
        reply = await api.call(*parts, method="POST", body={"path": path})
        out.write(f"{visible(str(reply['status']))}: {args.id}\n")
        return 0
    return await status_command(api, out)


async def status_command(api: Api, out: TextIO) -> int:
    style = Style(tty=out.isatty())
    status = await api.call("api", "jupyter-loop", "status")
    out.write(style.paint(f"Server {api.server.url}", BOLD) + "\n")
    runs, turns = status["runs"], status["turns"]
    approvals = status.get("approvals") or []  # a server before 0.x lists none
    if not runs and not turns and not approvals:
        out.write("Nothing running.\n")
    for approval in approvals:
        out.write(approval_lines(approval))
    for run in runs:
        run = {key: visible(str(value)) for key, value in run.items()}
        out.write(f"run   {run['path']}  cell {run['cell_id']}  {run['state']}  by {run['by']}\n")
    for turn in turns:
        turn = {key: visible(str(value)) for key, value in turn.items()}
        line = f"turn  {turn['path']}  {turn['id']}  {turn['state']}  by {turn['started_by']}"
        out.write(line + style.paint(f"  ({turn.get('model')})", DIM) + "\n")
    out.write(tokens_line(status.get("tokens")) + "\n")
    for damaged in status.get("damaged", []):  # state files moved aside at the start
        line = f"Damaged, moved aside: {damaged['file']} -> {damaged['moved_to']}"
        out.write(visible(line) + style.paint(f"  ({visible(damaged['reason'])})", DIM) + "\n")
    out.write(loop_line(status.get("loop")) + "\n")
    if status.get("store_writes_waiting") is not None:
        out.write(
            f"Updates waiting for the collaboration store: {status['store_writes_waiting']}\n"
        )
    return 0


def approval_lines(approval: dict[str, Any]) -> str:
    """A waiting approval, and the command that answers it.

    Example:
        >>> print(approval_lines({"id": "a-1", "path": "x.ipynb", "cell_ids": ["c0", "c1"],
        ...     "asked_by": 'an MCP client of ada, calling itself "bot"'}), end="")
        approval a-1  x.ipynb  cell c0, c1  asked by an MCP client of ada, calling itself "bot"
          answer: jupyter loop approve x.ipynb a-1 [--turn | --deny]

    An ACP agent's permission request names no cell: what it asks, a line each.

        >>> print(approval_lines({"id": "a-2", "path": "x.ipynb", "cell_ids": [],
        ...     "asked_by": "Qwen Code for ada", "asks": ["Qwen Code asks to: push"]}), end="")
        approval a-2  x.ipynb  asked by Qwen Code for ada
          Qwen Code asks to: push
          answer: jupyter loop approve x.ipynb a-2 [--turn | --deny]
    """
    keys = ("id", "path", "asked_by")
    shown = {key: visible(str(approval.get(key, ""))) for key in keys}
    cell_ids = approval.get("cell_ids") or []
    cells = f"  cell {', '.join(visible(str(c)) for c in cell_ids)}" if cell_ids else ""
    asks = "".join(
        f"  {visible(line)}\n"
        for words in approval.get("asks") or []
        for line in str(words).split("\n")
    )
    return (
        f"approval {shown['id']}  {shown['path']}{cells}  asked by {shown['asked_by']}\n"
        f"{asks}"
        f"  answer: jupyter loop approve {shown['path']} {shown['id']} [--turn | --deny]\n"
    )


def loop_line(loop: dict[str, Any] | None) -> str:
    """How late the server's event loop runs (``loop_health.py``): what an admin watches on
    a shared server before its users notice.

    Example:
        >>> loop_line({"p95_ms": 3.2, "max_ms": 41.0, "samples": 3000, "stalls": 0})
        'Server event loop lag (last 5 min): p95 3.2 ms, max 41.0 ms, 0 stalls over 1 s.'
        >>> loop_line({"p95_ms": 9.0, "max_ms": 80.0, "samples": 30, "stalls": 2, "stall_s": 0.15})
        'Server event loop lag (last 5 min): p95 9.0 ms, max 80.0 ms, 2 stalls over 0.15 s.'
        >>> loop_line(None)
        'Server event loop lag: not reported by this server.'
    """
    if not loop:
        return "Server event loop lag: not reported by this server."
    return (
        f"Server event loop lag (last 5 min): p95 {float(loop['p95_ms']):.1f} ms, "
        f"max {float(loop['max_ms']):.1f} ms, {int(loop['stalls'])} stalls over "
        f"{float(loop.get('stall_s', 1)):g} s."
    )


def tokens_line(tokens: dict[str, Any] | None) -> str:
    """Your model tokens today, and what is left of the day's cap.

    Example:
        >>> tokens_line({"day": "2026-11-27", "used": 1200, "limit": 5000, "left": 3800})
        'Model tokens today (2026-11-27 UTC): 1,200 used, 3,800 left of 5,000.'
        >>> tokens_line({"day": "2026-11-27", "used": 0, "limit": None, "left": None})
        'Model tokens today (2026-11-27 UTC): 0 used (no daily cap).'
    """
    if not tokens:
        return "Model tokens today: not counted by this server."
    head = f"Model tokens today ({visible(str(tokens['day']))} UTC): {int(tokens['used']):,} used"
    if tokens.get("limit") is None:
        return head + " (no daily cap)."
    return f"{head}, {int(tokens['left']):,} left of {int(tokens['limit']):,}."


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    import asyncio

    try:
        return asyncio.run(dispatch(args, sys.stdout, sys.stderr))
    except BaseException as e:  # noqa: BLE001 (every failure ends in one line and a status)
        if isinstance(e, SystemExit):
            raise
        failure = explain(e)
        if failure.kind == "closed pipe":
            return quietly(failure.status)
        if args.debug:
            import traceback

            traceback.print_exception(e)
        if failure.kind != "detached":
            sys.stderr.write(f"jupyter loop: {visible(str(failure))}\n")  # may quote the server
        return failure.status


def quietly(status: int) -> int:
    """End with ``status`` once the output's reader has gone: Python would otherwise print
    another ``BrokenPipeError`` when it flushes stdout at exit (the fix its manual gives)."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file (a test's StringIO)
        pass
    return status


if __name__ == "__main__":
    sys.exit(main())
