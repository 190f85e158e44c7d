"""Secrets are masked whole before any text is cut: no page, excerpt, summary or completion
window carries a piece of one (issue 18, defect 4).

Each notebook holds a configured secret where a cut falls inside it: at the offset a caller
pages from, at a page break the tool chooses itself, at the edge of a share of the prompt,
at the cursor. A secret written densely (``SECRET`` and a space, over and over, no line
breaks to snap to) puts every cut the tools choose inside one. What reaches the caller (an
MCP client's tool results, every request the scripted model server recorded, the panel's
conversation and the journal) must hold no piece of the secret as long as the masker's
shortest secret (:data:`PIECE`): a piece that long identifies the secret as well as the whole.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from agent_helpers import OPENAI_CHAT, Agent, notices, openai_config
from completion_helpers import COMPLETION, sent_text
from mcp_helpers import NamedUserIdentity, call, text_of
from traitlets.config import Config

from jupyter_loop.testing import call_tools, say

SECRET = "CANARY-qx7w-zz9q-mk4p"
"""21 characters, like the secret of the report; its 4-grams all hold a letter that a hex
id or nonce never has, so a match below cannot be chance."""
PIECE = 4
"""Shortest piece of the secret that must not get through (shorter than the masker's 6)."""
DENSE = (SECRET + " ") * 2_000
"""44,000 characters where a cut at any offset falls inside a secret 21 times in 22; masked,
still longer than a tool's page (14,000 characters)."""


def pieces_in(text: str) -> list[str]:
    """The pieces of :data:`SECRET` at least :data:`PIECE` long that ``text`` holds."""
    return [
        SECRET[start : start + PIECE]
        for start in range(len(SECRET) - PIECE + 1)
        if SECRET[start : start + PIECE] in text
    ]


def write_cells(root: Path, name: str, cells: list[tuple[str, str]]) -> str:
    """Code cells ``c0``, ``c1``, ... with these sources and printed text (none if "")."""
    nb = nbformat.v4.new_notebook()
    for index, (source, printed) in enumerate(cells):
        cell = nbformat.v4.new_code_cell(source, execution_count=index + 1)
        cell["id"] = f"c{index}"
        if printed:
            cell["outputs"] = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
        nb.cells.append(cell)
    (root / name).write_text(nbformat.writes(nb), encoding="utf-8")
    return name


@pytest.fixture
def jp_server_config(jp_server_config: Config) -> Config:
    jp_server_config.ServerApp.identity_provider_class = NamedUserIdentity
    return jp_server_config


@pytest.fixture
def loop_config(loop_model_server: Any) -> dict[str, Any]:
    return openai_config(
        loop_model_server,
        secrets=[SECRET],
        approval_policy="always",
        completion_model="scripted-plain",
    )


async def test_read_cell_pages_over_mcp_carry_no_piece_of_a_secret(
    loop_mcp_session: Any, jp_root_dir: Path
) -> None:
    # c0: the secret starts at offset 5, so paging from offset 6 starts inside it; c1: a
    # source far over one page, so the page break the tool picks falls inside one.
    path = write_cells(
        jp_root_dir, "keys.ipynb", [(f"k = '{SECRET}'\nprint(k)", ""), (DENSE, DENSE)]
    )
    async with loop_mcp_session() as session:
        texts = [text_of(await call(session, "read_cell", path=path, cell_id="c0", offset=6))]
        first = text_of(await call(session, "read_cell", path=path, cell_id="c1"))
        texts.append(first)
        offset = re.search(r"read more with offset=(\d+)", first)
        assert offset is not None, first  # the source did not fit one page
        texts.append(
            text_of(await call(session, "read_cell", path=path, cell_id="c1", offset=offset[1]))
        )
        texts.append(
            text_of(
                await call(session, "read_cell", path=path, cell_id="c1", output_index=0, offset=7)
            )
        )
        texts.append(text_of(await call(session, "read_notebook", path=path)))
    assert [pieces_in(text) for text in texts] == [[]] * len(texts)
    assert "••••••" in texts[1]  # the secrets were there, masked


async def test_a_turn_sends_the_model_no_piece_of_a_secret(
    api: Any, jp_root_dir: Path, loop_model_server: Any
) -> None:
    path = write_cells(
        jp_root_dir, "turn.ipynb", [(f"k = '{SECRET}'\nprint(k)", DENSE), ("# " + DENSE, "")]
    )
    loop_model_server.script(
        call_tools(("read_cell", {"cell_id": "c1"})),
        call_tools(("read_cell", {"cell_id": "c0", "offset": 6})),
        call_tools(("read_cell", {"cell_id": "c0", "output_index": 0, "offset": 7})),
        call_tools(("notebook_map", {})),
        say("Done."),
    )
    agent = Agent(api)
    # The user's message too is longer than its share of the prompt.
    await agent.start(path, "Which keys are these? " + DENSE * 2, focus_cell_ids=["c0", "c1"])
    conversation = await agent.ended(path)
    assert conversation["turn"]["state"] == "done", notices(conversation)
    bodies = loop_model_server.bodies(OPENAI_CHAT)
    assert len(bodies) == 5
    assert [pieces_in(json.dumps(body)) for body in bodies] == [[]] * 5
    assert "••••••" in json.dumps(bodies[-1], ensure_ascii=False)
    shown = json.dumps([conversation, await agent.journal(path)])
    assert pieces_in(shown) == []


async def test_an_inline_completion_sends_the_model_no_piece_of_a_secret(
    api: Any, jp_fetch: Any, jp_root_dir: Path, loop_model_server: Any
) -> None:
    # The cell keeps 4,000 characters on each side of the cursor: this "before" is cut 6
    # characters into its first secret, this "after" 6 characters before the end of its
    # last; the cursor stands inside a third. The cell above is cut to what the neighbours'
    # share leaves.
    filler = "#\n" * 2_000
    before = f"{SECRET}{filler[: 4_006 - len(SECRET)]}x = '{SECRET[:9]}"
    after = f"{SECRET[9:]}'\n{filler[: 4_000 - 6]}{SECRET}"
    path = write_cells(
        jp_root_dir, "edit.ipynb", [("# " + DENSE, DENSE), ("", ""), ("# " + DENSE, "")]
    )
    loop_model_server.script(say("1"))
    body = {"path": path, "cell_id": "c1", "editor_id": "t:c1", "before": before, "after": after}
    response = await jp_fetch(*COMPLETION, "stream", method="POST", body=json.dumps(body))
    assert response.code == 200
    sent = sent_text(loop_model_server.bodies(OPENAI_CHAT))
    assert "••••••" in sent
    assert pieces_in(sent) == []
