"""The module list of ``docs/architecture.md``, written from the modules' opening docstrings.

``python -m jupyter_loop.architecture_doc`` rewrites the list between the page's two
markers (``--stdout`` prints the page instead); a test checks that the committed page is
what this writes, so a module added, moved or renamed shows in the list, and a module's
line says what its own docstring says. Rejected: the hand-kept list the page had, one
paragraph per module (it described modules that had moved, and a reader could not tell
which paragraph was still true).

The rest of the page (where to look, the diagram, how to work on it) is prose, kept by hand.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
DOC = PACKAGE.parent / "docs" / "architecture.md"
BEGIN = "<!-- modules: written by `python -m jupyter_loop.architecture_doc`; do not edit -->"
END = "<!-- modules: end -->"
SKIPPED = {"labextension", "_version.py"}  # the built front end; the generated version


@dataclass(frozen=True)
class ModuleLine:
    """One module as the list shows it."""

    path: str
    summary: str


def summary(docstring: str) -> str:
    """The opening paragraph of a docstring, on one line, its reST code as Markdown's.

    >>> summary("One writer of outputs.\\n\\nMore on it.")
    'One writer of outputs.'
    >>> summary("Saves that cannot tear:\\na mixin over ``atomic_writing``.")
    'Saves that cannot tear: a mixin over `atomic_writing`.'
    >>> summary("Asked through :class:`~.asking.DirectPrompt` (:mod:`.rights`).")
    'Asked through `DirectPrompt` (`.rights`).'
    """
    paragraph = docstring.strip().split("\n\n")[0]
    text = " ".join(line.strip() for line in paragraph.splitlines())
    text = re.sub(r":[a-z]+:`~[^`]*?\.?([^.`]+)`", r"`\1`", text)  # :class:`~a.B` → `B`
    text = re.sub(r":[a-z]+:`([^`]+)`", r"`\1`", text)
    return re.sub(r"``([^`]+)``", r"`\1`", text)


def module_lines(package: Path = PACKAGE) -> list[ModuleLine]:
    """Every module of the package, a package's ``__init__`` before its modules."""
    lines = []
    for path in sorted(package.rglob("*.py"), key=_reading_order):
        relative = path.relative_to(package.parent)
        if SKIPPED & set(relative.parts):
            continue
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        lines.append(ModuleLine(relative.as_posix(), summary(docstring)))
    return lines


def _reading_order(path: Path) -> tuple[str, ...]:
    parts = path.relative_to(PACKAGE).parts
    # "" sorts an __init__ first among its package's files.
    return (*parts[:-1], "" if parts[-1] == "__init__.py" else parts[-1])


def render_list(lines: list[ModuleLine]) -> str:
    """The list, one line per module (a module without a docstring says so)."""
    return "\n".join(f"- `{line.path}` — {line.summary or '(no docstring)'}" for line in lines)


def render(page: str | None = None) -> str:
    """The page with its module list written anew."""
    text = DOC.read_text(encoding="utf-8") if page is None else page
    head, found, rest = text.partition(BEGIN)
    _, found_end, tail = rest.partition(END)
    if not (found and found_end):
        raise ValueError(f"{DOC.name} lacks the module list's markers")
    return f"{head}{BEGIN}\n\n{render_list(module_lines())}\n\n{END}{tail}"


def main(argv: list[str]) -> int:
    page = render()
    if "--stdout" in argv:
        sys.stdout.write(page)
    else:
        DOC.write_text(page, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
