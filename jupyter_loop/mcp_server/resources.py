"""What an MCP client can read as resources: their URIs, the links a tool result carries,
and what reading one answers (the endpoint checks the caller's rights as for a tool).

* Cell outputs (``notebook_view.output_resources`` decides which outputs and what they
  hold). A URI names the notebook, the cell, the output's place and the run it came from:
  ``jupyter-loop://outputs/CELL_ID/INDEX?path=NOTEBOOK&run=RUN_ID``; links come with the
  results of ``get_outputs``, ``read_cell`` and ``run_cells`` (``tools.LINKED_CELLS``).
* The cell in the hand of the person the agent works for (``jupyter-loop://focus?path=
  NOTEBOOK``): what "this cell" means to them in their tab, read as ``read_cell`` reads it.

Nothing is listed (``resources/list`` is empty: a server's outputs are unbounded); the
templates say how the URIs are made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from ..access.rights import Ability
from ..notebook_view.output_resources import OutputContent, OutputLink

if TYPE_CHECKING:
    import mcp_types as types

SCHEME = "jupyter-loop"
ABILITY = Ability.READ
"""What reading an output needs: what ``read_cell`` needs (a row of ``docs/rights.md``)."""
METHOD = "resources/read"
TEMPLATE = f"{SCHEME}://outputs/{{cell_id}}/{{index}}{{?path,run}}"
FOCUS_TEMPLATE = f"{SCHEME}://focus{{?path}}"


@dataclass(frozen=True)
class OutputAddress:
    path: str
    cell_id: str
    index: int
    run: str


@dataclass(frozen=True)
class FocusAddress:
    """The cell the caller's person has active in the notebook at ``path``."""

    path: str


def parse_uri(uri: str) -> OutputAddress | FocusAddress | None:
    """What a URI of ours names, ``None`` if it names nothing here.

    >>> parse_uri("jupyter-loop://focus?path=dir/a%20b.ipynb")
    FocusAddress(path='dir/a b.ipynb')
    >>> parse_uri("jupyter-loop://focus") is None
    True
    """
    parts = urlsplit(uri)
    if parts.scheme == SCHEME and parts.netloc == "focus" and parts.path in ("", "/"):
        path = parse_qs(parts.query).get("path", [""])[0]
        return FocusAddress(path) if path else None
    return parse_output_uri(uri)


def output_uri(path: str, link: OutputLink) -> str:
    """The URI of one output.

    Example:
        >>> link = OutputLink("c1", 2, "r9", "image/png", "[image/png 3×2, 68 B]", 68)
        >>> uri = output_uri("dir/my plot.ipynb", link)
        >>> uri
        'jupyter-loop://outputs/c1/2?path=dir/my%20plot.ipynb&run=r9'
        >>> parse_output_uri(uri)
        OutputAddress(path='dir/my plot.ipynb', cell_id='c1', index=2, run='r9')
        >>> parse_output_uri("file:///etc/passwd") is None
        True
    """
    cell = quote(link.cell_id, safe="")
    return f"{SCHEME}://outputs/{cell}/{link.index}?path={quote(path)}&run={quote(link.run)}"


def parse_output_uri(uri: str) -> OutputAddress | None:
    """The output a URI names, ``None`` if it is not one of ours."""
    parts = urlsplit(uri)
    pieces = parts.path.strip("/").split("/")
    if parts.scheme != SCHEME or parts.netloc != "outputs" or len(pieces) != 2:
        return None
    query = parse_qs(parts.query)
    path, run = query.get("path", [""])[0], query.get("run", [""])[0]
    cell_id, index = pieces
    if not (path and run and cell_id and index.isdigit()):
        return None
    return OutputAddress(path, unquote(cell_id), int(index), run)


def resource_links(path: str, links: tuple[OutputLink, ...]) -> list[Any]:
    """The links a tool result carries, each with its caption."""
    import mcp_types as types

    return [
        types.ResourceLink(
            type="resource_link",
            uri=output_uri(path, link),
            name=f"{link.cell_id} output {link.index}",
            description=link.caption,
            mime_type=link.mime_type,
            size=link.size,
        )
        for link in links
    ]


def text_result(uri: str, text: str) -> types.ReadResourceResult:
    import mcp_types as types

    item = types.TextResourceContents(uri=uri, mime_type="text/plain", text=text)
    return types.ReadResourceResult(contents=[item])


def read_result(uri: str, content: OutputContent) -> types.ReadResourceResult:
    import mcp_types as types

    item: types.TextResourceContents | types.BlobResourceContents
    if content.blob is not None:
        item = types.BlobResourceContents(uri=uri, mime_type=content.mime_type, blob=content.blob)
    else:
        item = types.TextResourceContents(
            uri=uri, mime_type=content.mime_type, text=content.text or ""
        )
    return types.ReadResourceResult(contents=[item])


def templates() -> types.ListResourceTemplatesResult:
    import mcp_types as types

    output = types.ResourceTemplate(
        name="cell output",
        uri_template=TEMPLATE,
        description=(
            "One output of a notebook cell, whole (text masked, or an image), from the run "
            "named; get_outputs, read_cell and run_cells give these links with a caption each."
        ),
    )
    focus = types.ResourceTemplate(
        name="the user's current cell",
        uri_template=FOCUS_TEMPLATE,
        mime_type="text/plain",
        description=(
            "The cell the person you work for has active in their tab of the notebook (what "
            '"this cell" means to them), read as read_cell reads it; says who has which cell '
            "when that person has none."
        ),
    )
    return types.ListResourceTemplatesResult(resource_templates=[output, focus])
