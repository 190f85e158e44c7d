"""Cell outputs as MCP resources: their URIs, the links a tool result carries, and what
reading one answers (``notebook_view.output_resources`` decides which outputs and what
they hold; the endpoint checks the caller's rights as for a tool).

A URI names the notebook, the cell, the output's place and the run it came from:
``jupyter-loop://outputs/CELL_ID/INDEX?path=NOTEBOOK&run=RUN_ID``. Nothing is listed
(``resources/list`` is empty: a server's outputs are unbounded); the one template says how
the URIs are made, and links come with the results of ``get_outputs``, ``read_cell`` and
``run_cells`` (``tools.LINKED_CELLS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from ..notebook_view.output_resources import OutputContent, OutputLink
from ..rights import Ability

if TYPE_CHECKING:
    import mcp_types as types

SCHEME = "jupyter-loop"
ABILITY = Ability.READ
"""What reading an output needs: what ``read_cell`` needs (a row of ``docs/rights.md``)."""
METHOD = "resources/read"
TEMPLATE = f"{SCHEME}://outputs/{{cell_id}}/{{index}}{{?path,run}}"


@dataclass(frozen=True)
class OutputAddress:
    path: str
    cell_id: str
    index: int
    run: str


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

    template = types.ResourceTemplate(
        name="cell output",
        uri_template=TEMPLATE,
        description=(
            "One output of a notebook cell, whole (text masked, or an image), from the run "
            "named; get_outputs, read_cell and run_cells give these links with a caption each."
        ),
    )
    return types.ListResourceTemplatesResult(resource_templates=[template])
