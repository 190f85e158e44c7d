"""The floor plan holds: private modules stay in their package, and imports form no cycle.

Read from the source with :mod:`ast` rather than by importing: importing would only show
the modules a test happens to load. For private modules and the layers every import
counts, also those inside functions and under ``TYPE_CHECKING``. For cycles only the
imports that run when a module is loaded count: an import deferred into a function (the
package's lazy ``JupyterLoopApp``) or kept for type checking (a run and its origin name
each other's types) is how a cycle is broken on purpose, and Python never sees it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "jupyter_loop"
SKIPPED = {"labextension"}  # the built front end, no Python of ours


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported(path: Path, *, when_loaded: bool = False, typing: bool = False) -> set[str]:
    """The modules of ours that ``path`` imports, as absolute names.

    With ``when_loaded``, only the imports that run when ``path`` is imported: at module
    level, not in a function and not under ``if TYPE_CHECKING:`` (unless ``typing``).
    """
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in loaded_at_import(tree.body, typing) if when_loaded else ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:  # `from pkg import module` imports the module
                child = f"{source}.{alias.name}"
                found.add(child if is_module(child) else source)
    return {module for module in found if module.split(".")[0] == "jupyter_loop"}


def loaded_at_import(body: list[ast.stmt], typing: bool = False) -> list[ast.stmt]:
    """The statements of ``body`` that run when the module is imported, nested ones too
    (with ``typing``, also those a type checker reads under ``if TYPE_CHECKING:``)."""
    statements: list[ast.stmt] = []
    for node in body:
        statements.append(node)
        if isinstance(node, ast.If):
            typing_only = "TYPE_CHECKING" in ast.unparse(node.test) and not typing
            branches = node.orelse if typing_only else node.body + node.orelse
            statements += loaded_at_import(branches, typing)
        elif isinstance(node, ast.Try):
            handlers = [line for handler in node.handlers for line in handler.body]
            statements += loaded_at_import(
                node.body + handlers + node.orelse + node.finalbody, typing
            )
        elif isinstance(node, (ast.With, ast.ClassDef)):
            statements += loaded_at_import(node.body, typing)
    return statements


def our_modules(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if not SKIPPED & set(p.parts))


def test_examples_of_the_resolution() -> None:
    """A relative import from a package's ``__init__`` and one naming a module resolve."""
    assert module_name(PACKAGE / "notebook_view" / "__init__.py") == "jupyter_loop.notebook_view"
    assert "jupyter_loop.errors" in imported(PACKAGE / "providers" / "__init__.py")
    assert "jupyter_loop.agent.proposals" in imported(PACKAGE / "agent" / "tools" / "toolbox.py")


def test_no_private_module_is_imported_from_outside_its_package() -> None:
    """``pkg/_part.py`` is imported only by modules of ``pkg`` (and below).

    The benchmarks are held to it too; tests are not: a module's own test file may run its
    private parts' examples (one test file per module).
    """
    outside = []
    for path in [*our_modules(PACKAGE), *our_modules(ROOT / "bench")]:
        importer = module_name(path)
        for module in imported(path):
            parts = module.split(".")
            for depth, part in enumerate(parts):
                owner = ".".join(parts[:depth])
                private = part.startswith("_") and not part.startswith("__")
                if private and not (importer + ".").startswith(owner + "."):
                    outside.append(f"{importer} imports {module}")
    assert outside == []


def test_jupyter_collaborations_internals_are_reached_through_the_adapter_only() -> None:
    """``document/collaboration/`` is imported as a package, never one of its modules, from
    outside: a new collaboration release is checked in one place (its ``__init__`` names
    every part used, each tried by ``tests/document/test_collaboration_adapter.py``)."""
    adapter = "jupyter_loop.document.collaboration"
    past_the_face = [
        f"{module_name(path)} imports {module}"
        for path in [
            *our_modules(PACKAGE),
            *our_modules(ROOT / "bench"),
            *our_modules(ROOT / "tests"),
        ]
        for module in imported(path)
        if module.startswith(adapter + ".") and not module_name(path).startswith(adapter)
    ]
    assert past_the_face == []


def cycles_in(graph: dict[str, set[str]]) -> list[str]:
    """The import circles of ``graph`` (module -> the modules it imports), one per back edge."""
    cycles = []
    state: dict[str, str] = {}  # "open" while on the path, "done" once explored

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for target in sorted(graph.get(module, ())):
            if target == module:
                continue
            if state.get(target) == "open":
                cycles.append(" → ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return cycles


def test_the_import_graph_has_no_cycle() -> None:
    graph = {module_name(path): imported(path, when_loaded=True) for path in our_modules(PACKAGE)}
    assert cycles_in(graph) == []


TS_IMPORT = re.compile(r"""^(?:import|export)\b[^'";]*?\bfrom\s+'(\.{1,2}/[^']*)'""", re.M | re.S)


def ts_import_graph(src: Path) -> dict[str, set[str]]:
    """The front end's modules (``src/``, tests left out) and the modules of ours each
    imports, type-only imports included: a circle of types is still a circle to read."""

    def resolve(module: Path, target: str) -> str | None:
        base = (module.parent / target).resolve()
        for found in (base.with_suffix(".ts"), base.with_suffix(".tsx"), base / "index.ts"):
            if found.is_file():
                return found.relative_to(src.resolve()).as_posix()
        return None

    graph: dict[str, set[str]] = {}
    for module in sorted([*src.rglob("*.ts"), *src.rglob("*.tsx")]):
        if "__tests__" in module.parts:
            continue
        targets = (resolve(module, t) for t in TS_IMPORT.findall(module.read_text()))
        graph[module.relative_to(src).as_posix()] = {t for t in targets if t is not None}
    return graph


def test_the_front_end_has_no_import_circle() -> None:
    """``src/`` as ``madge --circular`` reads it: the plugin tokens live apart from the
    payloads (``src/tokens.ts`` / ``src/payloads.ts``) and a session sees its service
    through ``agent/host.ts``, so no module is reached again through its own imports."""
    graph = ts_import_graph(ROOT / "src")
    assert "agent/service.ts" in graph["tokens.ts"]  # the reading finds imports
    assert cycles_in(graph) == []


def test_the_shared_layers_do_not_import_the_agent() -> None:
    """Providers and the notebook view sit under the agent, completions and MCP."""
    above = {"agent", "completion", "mcp_server"}
    upward = [
        f"{module_name(path)} imports {module}"
        for layer in ("providers", "notebook_view")
        for path in our_modules(PACKAGE / layer)
        for module in imported(path)
        if module.split(".")[1:2] and module.split(".")[1] in above
    ]
    assert upward == []


def test_every_write_of_ours_goes_through_the_one_door() -> None:
    """A transaction with an origin is opened in ``document/writing.py`` only: every other
    module writes through ``writing`` or ``LiveDocuments.edit`` (plain reading transactions,
    with no origin, are anyone's)."""
    door = PACKAGE / "document" / "writing.py"
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == door or SKIPPED & set(path.relative_to(PACKAGE).parts):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "transaction"
                and (node.args or any(k.arg == "origin" for k in node.keywords))
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def imports_of_package(package: str) -> list[tuple[str, str]]:
    """(importer, imported) for every import of ours in ``jupyter_loop/<package>``."""
    return [
        (module_name(path), module)
        for path in our_modules(PACKAGE.joinpath(*package.split(".")))
        for module in imported(path)
    ]


def test_access_asks_no_channel() -> None:
    """``access/`` (the rights table, who is asking, the scoped tokens) is what every channel
    asks, so it imports none of them: a channel's rule would otherwise leak into the table."""
    channels = {"agent", "completion", "mcp_server", "acp", "execution", "document", "cli"}
    upward = [
        f"{importer} imports {module}"
        for importer, module in imports_of_package("access")
        if module.split(".")[1] in channels
    ]
    assert upward == []


def test_history_sits_above_execution() -> None:
    """``history/`` reads what execution wrote (the run history, the output store);
    execution writes it and never reads back through ``history/``."""
    downward = [
        f"{importer} imports {module}"
        for importer, module in imports_of_package("execution")
        if module.startswith("jupyter_loop.history")
    ]
    assert downward == []


def test_how_a_kernel_is_reached_stays_inside_execution_kernel() -> None:
    """Above ``execution/kernel/``, a kernel is a :mod:`~jupyter_loop.execution.kernel.line`
    and a connection; whether it is reached over ZeroMQ or a gateway's websocket, and with
    which session id, is decided by ``connection.link_to`` alone."""
    inner = {
        f"jupyter_loop.execution.kernel.{name}" for name in ("zmq_link", "gateway_link", "session")
    }
    reached = [
        f"{module_name(path)} imports {module}"
        for path in [*our_modules(PACKAGE), *our_modules(ROOT / "bench")]
        for module in imported(path)
        if module in inner and not module_name(path).startswith("jupyter_loop.execution.kernel.")
    ]
    assert reached == []


def test_outputs_are_written_the_same_whoever_runs_the_cell() -> None:
    """``execution/outputs/`` and ``execution/full_outputs/`` know outputs, not runs: they
    import nothing of the queue, the runs or the kernels (a run hands them its messages), only
    each other and the journal that keeps the same outputs on disk (``durability/wal.py``)."""
    allowed = ("outputs", "full_outputs", "durability.wal")
    reaching = [
        f"{importer} imports {module}"
        for room in ("execution.outputs", "execution.full_outputs")
        for importer, module in imports_of_package(room)
        if module.startswith("jupyter_loop.execution.")
        and not any(module.startswith(f"jupyter_loop.execution.{ok}") for ok in allowed)
    ]
    assert reaching == []


def test_durability_is_below_the_service() -> None:
    """``execution/durability/`` keeps and takes up runs for the service; it never reaches up
    into the service, the REST or socket faces, or the request parsing."""
    above = {"service", "handlers", "run_socket", "run_request", "payloads"}
    upward = [
        f"{importer} imports {module}"
        for importer, module in imports_of_package("execution.durability")
        if module.split(".")[:2] == ["jupyter_loop", "execution"]
        and module.split(".")[2:3]
        and module.split(".")[2] in above
    ]
    assert upward == []


# Two modules that name each other's types: the import one way runs, the other is read by
# the type checker only (``if TYPE_CHECKING:``), so Python never sees a circle. Each is
# kept on purpose, for the reason given; a new one must be added here with its own.
TYPE_ONLY_CIRCLES = {
    # The file reload is a record the kept reloads store; the reloader is handed the
    # store that keeps them, and names its type.
    (
        "jupyter_loop.document.file_guards.file_reloads",
        "jupyter_loop.document.file_guards.kept_reloads",
    ),
    # A kept run is followed again by its kernel's queue (``KernelQueue.follow``), and the
    # queue forgets a kept run's request once it ends (``kept_runs.forget_request``).
    ("jupyter_loop.execution.durability.kept_runs", "jupyter_loop.execution.queue"),
    # A run carries its origin; the origin's history record is made from the run's job,
    # run and outcome, which it names as types only.
    ("jupyter_loop.execution.run", "jupyter_loop.execution.run_origin"),
    # The MIME rules take the masker they apply; the masker applies the MIME rules.
    ("jupyter_loop.mime_masking", "jupyter_loop.secrets"),
}


def test_the_circles_for_types_only_are_the_ones_kept_on_purpose() -> None:
    graph = {
        module_name(path): imported(path, when_loaded=True, typing=True)
        for path in our_modules(PACKAGE)
    }
    circles = {
        (first, second)
        for first, targets in graph.items()
        for second in targets
        if first < second and first in graph.get(second, ())
    }
    assert circles == TYPE_ONLY_CIRCLES


def test_the_file_guards_are_started_in_one_place() -> None:
    """``document/file_guards/`` is started by its one function: from outside, the package
    is imported, and ``offline_edits`` (the record a returning tab's edits are offered back
    in); no guard module is built elsewhere, in an order of its own."""
    room = "jupyter_loop.document.file_guards"
    open_doors = {room, f"{room}.offline_edits"}
    past_the_door = [
        f"{module_name(path)} imports {module}"
        for path in [*our_modules(PACKAGE), *our_modules(ROOT / "bench")]
        for module in imported(path)
        if module.startswith(room)
        and module not in open_doors
        and not module_name(path).startswith(room)
    ]
    assert past_the_door == []
