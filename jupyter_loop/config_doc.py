"""``docs/configuration.md``, written from the configurable traits of jupyter-loop's classes.

``python -m jupyter_loop.config_doc`` rewrites the file (``--stdout`` prints it instead); a
test checks that the committed file is what this writes, so a setting's page cannot drift
from its trait. Rejected: a hand-kept table in the README (it said more than the help
strings in places, and less in others, and nothing noticed when a default changed).

Only traits a jupyter-loop class defines are listed: those ``JupyterLoopApp`` inherits from
``ExtensionApp`` (``open_browser``, ``static_paths``, …) and those ``CompactSQLiteYStore``
inherits from jupyter-collaboration's store are documented upstream.
"""

from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from traitlets import Enum, HasTraits, TraitType

DOC = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"


@dataclass(frozen=True)
class Section:
    """One configurable class as the page shows it."""

    cls: type[HasTraits]
    title: str
    note: str


def sections() -> list[Section]:
    """The classes, in the page's order. Imported here so that ``jupyter loop`` and the
    server's import of this package do not pay for the store and the provisioner."""
    from .app import JupyterLoopApp
    from .keeper.provisioner import KeeperProvisioner
    from .ystore import CompactSQLiteYStore

    return [
        Section(
            JupyterLoopApp,
            "JupyterLoopApp",
            "The server extension: `c.JupyterLoopApp.<name>` in `jupyter_server_config.py`, or "
            "`--JupyterLoopApp.<name>=…` on the command line.",
        ),
        Section(
            CompactSQLiteYStore,
            "CompactSQLiteYStore",
            "The collaboration store jupyter-loop gives jupyter-collaboration (it sets "
            "`c.YDocExtension.ystore_class` unless you set one; see "
            "[the collaboration store](manual/collaboration-store.md#the-collaboration-store)): "
            "`c.CompactSQLiteYStore.<name>`. Its other settings (`db_path`, …) are "
            "jupyter-collaboration's `SQLiteYStore`'s.",
        ),
        Section(
            KeeperProvisioner,
            "KeeperProvisioner",
            "The kernel provisioner of kept kernels (`jupyter-loop-keeper`). The server sets "
            "these from `JupyterLoopApp`'s settings (`data_dir`, `orphan_kernel_timeout`, "
            "`kept_journal_bytes`, the masking settings) when `keep_kernels` is not "
            "`never`; set those instead.",
        ),
    ]


INTRO = """\
# Configuration

Every setting of jupyter-loop, with its type, default and help text. The panel's provider,
model, approval policy and step budget are also in _Settings → jupyter-loop: AI assistant_;
empty values there follow the server. Inline completions have their own entry in
_Settings → Inline Completer_ (_jupyter-loop AI_: on or off, debounce, timeout, model).

Settings go in `jupyter_server_config.py` in Jupyter's config directory: the one
`jupyter --config-dir` prints (usually `~/.jupyter/`; `JUPYTER_CONFIG_DIR` moves it).
`jupyter server --generate-config` writes a commented one there; `jupyter lab` and
`jupyter notebook` read it too. For example:

```python
c.JupyterLoopApp.agent_provider = "openai"
c.JupyterLoopApp.approval_policy = "ask"
```

`jupyter --paths` lists the other directories read (a virtual environment's
`etc/jupyter/` among them); any setting can also be given on the command line,
`jupyter lab --JupyterLoopApp.approval_policy=ask`.

This file is written by `python -m jupyter_loop.config_doc` from the traits themselves; a
test fails when it differs from what they say.
"""


def _own_traits(cls: type[HasTraits]) -> list[tuple[str, TraitType]]:
    """The class's configurable traits that jupyter-loop defines, sorted by name."""
    traits = cls.class_traits(config=True)
    return sorted(
        (name, trait)
        for name, trait in traits.items()
        if trait.this_class is not None and trait.this_class.__module__.startswith("jupyter_loop")
    )


def _type(trait: TraitType) -> str:
    shown = type(trait).__name__
    if isinstance(trait, Enum):
        shown += " of " + ", ".join(f"`{value!r}`" for value in trait.values or ())
    else:
        shown = f"`{shown}`"
    if trait.allow_none:
        shown += " or `None`"
    return shown


def _default(cls: type[HasTraits], name: str, trait: TraitType) -> str:
    generators = getattr(cls, "_trait_default_generators", {})
    if name in generators and trait.this_class is not None:
        # A @default method: the value is computed when the server starts (the help says how).
        return "computed at start (see the help)"
    return f"`{trait.default_value_repr()}`"


def _help(trait: TraitType) -> str:
    """The help text as one Markdown paragraph, on one line (a wrapped line could begin
    like a list item or a heading). A ``*`` (the patterns' wildcard) or a ``_``
    that begins a word would open emphasis: both are escaped."""
    text = " ".join((trait.help or "(no help text)").split())
    text = text.replace("*", r"\*")
    return re.sub(r"(?<![A-Za-z0-9])_", r"\\_", text)


def _where(trait: TraitType) -> str:
    module = trait.this_class.__module__ if trait.this_class is not None else "?"
    return "jupyter_loop/" + "/".join(module.split(".")[1:]) + ".py"


def _section(section: Section) -> str:
    lines = [f"## {section.title}", "", textwrap.fill(section.note, 92), ""]
    for name, trait in _own_traits(section.cls):
        lines += [
            f"### `{section.title}.{name}`",
            "",
            f"- Type: {_type(trait)}",
            f"- Default: {_default(section.cls, name, trait)}",
            f"- Defined in: `{_where(trait)}`",
            "",
            _help(trait),
            "",
        ]
    return "\n".join(lines)


def render() -> str:
    return "\n".join([INTRO, *(_section(section) for section in sections())]).rstrip() + "\n"


def main(argv: list[str]) -> int:
    if argv == ["--stdout"]:
        sys.stdout.write(render())
        return 0
    if argv:
        sys.stderr.write("usage: python -m jupyter_loop.config_doc [--stdout]\n")
        return 2
    DOC.write_text(render(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
