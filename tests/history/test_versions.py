"""Kept versions of notebooks (versions/): every save keeps one, an out-of-band file is kept
before a save replaces it, limits hold, and a version comes back into a closed notebook's
file or an open notebook's tabs, behind Jupyter's own authorization."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from typing import Any

import pytest
from authorizers import both
from loop_helpers import notebook_json, wait_for
from pycrdt import Map
from tornado.httpclient import HTTPClientError

from jupyter_loop.document import collaboration
from jupyter_loop.history.versions.store import MERGE_SECONDS, ON_DISK, SAVED, VersionStore
from jupyter_loop.testing.yjs import read_with_yjs

LOOP = ("api", "jupyter-loop")
VERSIONS = (*LOOP, "versions")


@pytest.fixture
def loop_config() -> dict[str, Any]:
    return {"versions_max": 4}


async def save(api: Any, path: str, *sources: str) -> None:
    """Save as a tab's Save does: ``PUT`` the whole notebook through the contents API."""
    model = {"type": "notebook", "content": json.loads(notebook_json(*sources))}
    await api("api", "contents", path, method="PUT", body=model)


async def versions(api: Any, path: str) -> list[dict[str, Any]]:
    reply = await api(*VERSIONS, params={"path": path})
    found: list[dict[str, Any]] = reply["versions"]
    return found


async def restore(api: Any, path: str, number: int) -> dict[str, Any]:
    reply: dict[str, Any] = await api(
        *VERSIONS, str(number), "restore", method="POST", body={"path": path}
    )
    return reply


async def sources_of(api: Any, path: str, number: int) -> list[str]:
    reply = await api(*VERSIONS, str(number), params={"path": path})
    return [cell["source"] for cell in reply["content"]["cells"]]


def sources_on_disk(root: Path, path: str) -> list[str]:
    cells = json.loads((root / path).read_text("utf-8"))["cells"]
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells]


async def test_an_out_of_band_overwrite_is_listed_and_restored(api: Any, jp_root_dir: Path) -> None:
    await save(api, "nb.ipynb", "x = 1")
    await save(api, "nb.ipynb", "x = 1", "y = 2")
    # Someone else's program overwrites the file: the server's last save is no longer on disk.
    (jp_root_dir / "nb.ipynb").write_text(notebook_json("clobbered"), "utf-8")
    kept = await versions(api, "nb.ipynb")
    assert [(v["kind"], v["cells"]) for v in kept] == [(SAVED, 2), (SAVED, 1)]
    assert await sources_of(api, "nb.ipynb", kept[0]["number"]) == ["x = 1", "y = 2"]

    reply = await api(
        *VERSIONS, str(kept[0]["number"]), "restore", method="POST", body={"path": "nb.ipynb"}
    )
    assert reply["live"] is False and reply["restored"] == kept[0]["number"]
    assert reply["version"]["kind"] == "restored"
    assert sources_on_disk(jp_root_dir, "nb.ipynb") == ["x = 1", "y = 2"]
    # The file the restore replaced is kept too: the restore can be undone.
    after = await versions(api, "nb.ipynb")
    assert [v["kind"] for v in after[:2]] == ["restored", ON_DISK]
    assert after[0]["restored_from"] == kept[0]["number"]
    assert await sources_of(api, "nb.ipynb", after[1]["number"]) == ["clobbered"]
    await restore(api, "nb.ipynb", after[1]["number"])
    assert sources_on_disk(jp_root_dir, "nb.ipynb") == ["clobbered"]


async def test_a_deleted_notebook_comes_back(api: Any, jp_root_dir: Path) -> None:
    (jp_root_dir / "sub").mkdir()
    await save(api, "sub/gone.ipynb", "keep me")
    await api("api", "contents", "sub/gone.ipynb", method="DELETE")
    assert not (jp_root_dir / "sub" / "gone.ipynb").exists()
    (number,) = [v["number"] for v in await versions(api, "sub/gone.ipynb")]
    await api(*VERSIONS, str(number), "restore", method="POST", body={"path": "sub/gone.ipynb"})
    assert sources_on_disk(jp_root_dir, "sub/gone.ipynb") == ["keep me"]
    # Its folder gone too: a plain 409, not a server error.
    await api("api", "contents", "sub/gone.ipynb", method="DELETE")
    await api("api", "contents", "sub", method="DELETE")
    with pytest.raises(HTTPClientError) as refused:
        await api(*VERSIONS, str(number), "restore", method="POST", body={"path": "sub/gone.ipynb"})
    assert refused.value.code == 409
    assert b"'sub'" in refused.value.response.body


async def emptied_by_delete_all(api: Any, tab: Any, root: Path, path: str) -> int:
    """Delete All in the tab, wait until the file holds it; the newest version with the two
    cells (the file as it was before the room's first save)."""
    await wait_for(lambda: len(tab.notebook.ycells) == 2)
    with tab.notebook.ydoc.transaction():
        del tab.notebook.ycells[0:2]  # Delete All
    await wait_for(lambda: sources_on_disk(root, path) == [])  # autosaved
    kept = await versions(api, path)
    for _ in range(100):  # the save's hook runs a moment after the file is in place
        if kept[0]["cells"] == 0:
            break
        await asyncio.sleep(0.05)
        kept = await versions(api, path)
    full = [v for v in kept if v["cells"] == 2]
    assert full and kept[0]["cells"] == 0
    number: int = full[0]["number"]
    return number


def proposal_in(tab: Any, proposal_id: str) -> dict[str, Any] | None:
    found = tab.notebook.ydoc.get("jupyter_loop:proposals", type=Map).get(proposal_id)
    return dict(found) if found is not None else None


async def test_delete_all_in_an_open_notebook_is_undone_by_accepting_a_proposal(
    api: Any, open_tab: Any, write_notebook: Any, jp_root_dir: Path
) -> None:
    path = write_notebook("open.ipynb", "a = 1", "b = 2")
    async with open_tab(path) as tab:
        number = await emptied_by_delete_all(api, tab, jp_root_dir, path)
        reply = await restore(api, path, number)
        # Open: proposed in the notebook (a tab accepts it, and can undo it there), the
        # file and the tabs left as they were until then.
        assert reply["live"] is True and reply["proposal"] and reply["version"] is None
        await wait_for(lambda: proposal_in(tab, reply["proposal"]) is not None)
        proposal = proposal_in(tab, reply["proposal"])
        assert proposal is not None
        assert (proposal["kind"], proposal["status"], proposal["version"]) == (
            "version",
            "pending",
            number,
        )
        content = json.loads(proposal["new_notebook"])
        assert [c["source"] for c in content["cells"]] == ["a = 1", "b = 2"]
        assert len(tab.notebook.ycells) == 0 and sources_on_disk(jp_root_dir, path) == []

        accept = (*LOOP, "agent", "proposals", reply["proposal"], "accept")
        await api(*accept, method="POST", body={"path": path})
        restored = ["a = 1", "b = 2"]
        await wait_for(lambda: [str(c["source"]) for c in tab.notebook.ycells] == restored)
        await wait_for(lambda: sources_on_disk(jp_root_dir, path) == restored)
        accepted = proposal_in(tab, reply["proposal"])
        # Resolved: the version store keeps the notebook, not the document.
        assert accepted is not None and accepted["status"] == "accepted"
        assert accepted["new_notebook"] is None
        # What a browser's Yjs reads: the two cells, nothing held back.
        (seen,) = read_with_yjs({"tab": [tab.notebook.ydoc.get_update()]}).values()
        assert seen.whole and [str(c["source"]) for c in seen.cells] == restored
    assert (await versions(api, path))[0]["cells"] == 2


async def test_now_restores_an_open_notebook_at_once(
    api: Any, open_tab: Any, write_notebook: Any, jp_root_dir: Path
) -> None:
    path = write_notebook("open.ipynb", "a = 1", "b = 2")
    async with open_tab(path) as tab:
        number = await emptied_by_delete_all(api, tab, jp_root_dir, path)
        reply = await api(
            *VERSIONS, str(number), "restore", method="POST", body={"path": path, "now": True}
        )
        assert reply["live"] is True and reply["proposal"] is None
        restored = ["a = 1", "b = 2"]
        await wait_for(lambda: [str(c["source"]) for c in tab.notebook.ycells] == restored)
        await wait_for(lambda: sources_on_disk(jp_root_dir, path) == restored)
    newest = (await versions(api, path))[0]
    assert newest["kind"] == "restored" and newest["cells"] == 2
    assert newest["restored_from"] == number


def tabs_connected(serverapp: Any) -> int:
    """Websockets the server still counts in its rooms (a tab that closed a moment ago is
    counted until the server has read its close)."""
    rooms = collaboration.rooms(collaboration.extension(serverapp.web_app.settings))
    return sum(hasattr(c, "ws_connection") for room in rooms.values() for c in room.clients)


async def test_a_notebook_no_tab_holds_is_restored_into_its_file(
    api: Any, open_tab: Any, write_notebook: Any, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    """The last tab closed (its room is still loaded, as a run or the cleanup delay keeps
    it): nobody could accept a proposal, so the restore writes the version, and what the
    room held is kept as a version first (the restore can be undone)."""
    path = write_notebook("left.ipynb", "a = 1", "b = 2")
    async with open_tab(path) as tab:
        number = await emptied_by_delete_all(api, tab, jp_root_dir, path)
    await wait_for(lambda: tabs_connected(jp_serverapp) == 0)  # (CI once restored too soon)
    reply = await restore(api, path, number)
    assert reply["proposal"] is None, reply
    assert reply["live"] is False
    await wait_for(lambda: sources_on_disk(jp_root_dir, path) == ["a = 1", "b = 2"])
    kept = await versions(api, path)
    assert kept[0]["kind"] == "restored" and kept[0]["restored_from"] == number
    assert any(v["cells"] == 0 for v in kept[1:]), kept  # the emptied notebook: undo
    async with open_tab(path) as tab:  # a tab opened now shows the version
        await wait_for(
            lambda: [str(c["source"]) for c in tab.notebook.ycells] == ["a = 1", "b = 2"]
        )


async def test_versions_max_keeps_the_newest(api: Any) -> None:
    for n in range(6):
        await save(api, "many.ipynb", f"x = {n}")
    kept = await versions(api, "many.ipynb")
    assert len(kept) == 4
    assert [await sources_of(api, "many.ipynb", v["number"]) for v in kept] == [
        [f"x = {n}"] for n in (5, 4, 3, 2)
    ]


async def test_the_store_is_owner_only(api: Any, tmp_path: Path) -> None:
    await save(api, "nb.ipynb", "x = 1")
    database = tmp_path / "jupyter_loop" / "versions.sqlite3"
    assert stat.S_IMODE(database.stat().st_mode) == 0o600


async def test_bad_requests_are_4xx(api: Any) -> None:
    await save(api, "nb.ipynb", "x = 1")
    for parts, kwargs, code in [
        (VERSIONS, {}, 400),
        ((*VERSIONS, "1"), {}, 400),
        ((*VERSIONS, "999"), {"params": {"path": "nb.ipynb"}}, 404),
        ((*VERSIONS, "999", "restore"), {"method": "POST", "body": {"path": "nb.ipynb"}}, 404),
        ((*VERSIONS, "1", "restore"), {"method": "POST", "body": {"path": "../x.ipynb"}}, 400),
        ((*VERSIONS, "1", "restore"), {"method": "POST", "body": "[]"}, 400),
    ]:
        with pytest.raises(HTTPClientError) as refused:
            await api(*parts, **kwargs)
        assert refused.value.code == code, (parts, kwargs)


@pytest.mark.parametrize("authorizer", both("NoContents"))
async def test_without_contents_read_everything_is_403(
    api: Any, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    (jp_root_dir / "nb.ipynb").write_text(notebook_json("secret work"), "utf-8")
    keeper = jp_serverapp.web_app.settings["jupyter_loop_versions"]
    keeper.store.add("nb.ipynb", notebook_json("older").encode())
    for parts, kwargs in [
        (VERSIONS, {"params": {"path": "nb.ipynb"}}),
        ((*VERSIONS, "1"), {"params": {"path": "nb.ipynb"}}),
        ((*VERSIONS, "1", "restore"), {"method": "POST", "body": {"path": "nb.ipynb"}}),
    ]:
        with pytest.raises(HTTPClientError) as refused:
            await api(*parts, **kwargs)
        assert refused.value.code == 403, parts
    assert sources_on_disk(jp_root_dir, "nb.ipynb") == ["secret work"]


@pytest.mark.parametrize("authorizer", both("ReadOnlyContents"))
async def test_a_reader_lists_but_cannot_restore(
    api: Any, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    (jp_root_dir / "nb.ipynb").write_text(notebook_json("now"), "utf-8")
    keeper = jp_serverapp.web_app.settings["jupyter_loop_versions"]
    keeper.store.add("nb.ipynb", notebook_json("older").encode())
    (number,) = [v["number"] for v in await versions(api, "nb.ipynb")]
    assert await sources_of(api, "nb.ipynb", number) == ["older"]
    with pytest.raises(HTTPClientError) as refused:
        await api(*VERSIONS, str(number), "restore", method="POST", body={"path": "nb.ipynb"})
    assert refused.value.code == 403
    assert sources_on_disk(jp_root_dir, "nb.ipynb") == ["now"]


# -- the store's bounds, on a real SQLite file ---------------------------------------


def test_the_byte_budget_drops_the_oldest_but_never_a_notebooks_newest(tmp_path: Path) -> None:
    store = VersionStore(tmp_path / "v.sqlite3", max_per_notebook=100, max_bytes=1)
    try:
        for n in range(3):
            for name in ("a.ipynb", "b.ipynb"):
                store.add(name, notebook_json(f"{name} {n}").encode(), now=float(n))
        assert [len(store.versions(name)) for name in ("a.ipynb", "b.ipynb")] == [1, 1]
        assert (
            store.content("a.ipynb", store.versions("a.ipynb")[0].number)
            == notebook_json("a.ipynb 2").encode()
        )
    finally:
        store.close()
    store = VersionStore(tmp_path / "w.sqlite3", max_per_notebook=100, max_bytes=10_000)
    try:
        for n in range(200):  # each ~300 bytes compressed: about 30 fit
            store.add("c.ipynb", notebook_json(f"print({n} * 'pad {n}')").encode(), now=n * 100.0)
        assert store.bytes_stored() <= 10_000
        assert 10 < len(store.versions("c.ipynb")) < 200
    finally:
        store.close()


def test_saves_of_outputs_only_update_the_newest_version_for_a_while(tmp_path: Path) -> None:
    store = VersionStore(tmp_path / "v.sqlite3")

    def with_output(text: str, source: str = "print(i)") -> bytes:
        notebook = json.loads(notebook_json(source))
        stream = {"output_type": "stream", "name": "stdout", "text": text}
        notebook["cells"][0]["outputs"] = [stream]
        return json.dumps(notebook).encode()

    try:
        store.add("nb.ipynb", with_output("1"), now=0.0)
        store.add("nb.ipynb", with_output("1 2"), now=5.0)  # the run prints on
        assert [v.saved for v in store.versions("nb.ipynb")] == [5.0]
        store.add("nb.ipynb", with_output("1 2 3"), now=MERGE_SECONDS + 1)  # a minute later
        store.add("nb.ipynb", with_output("", "edited"), now=MERGE_SECONDS + 2)  # a source edit
        assert [v.created for v in store.versions("nb.ipynb")] == [
            MERGE_SECONDS + 2, MERGE_SECONDS + 1, 0.0,
        ]  # fmt: skip
    finally:
        store.close()


async def test_a_half_written_file_on_disk_is_not_kept(api: Any, jp_root_dir: Path) -> None:
    await save(api, "nb.ipynb", "x = 1")
    (jp_root_dir / "nb.ipynb").write_text(notebook_json("x = 2")[:40], "utf-8")  # cut off
    await save(api, "nb.ipynb", "x = 3")
    kept = await versions(api, "nb.ipynb")
    assert [(v["kind"], v["cells"]) for v in kept] == [(SAVED, 1), (SAVED, 1)]
    assert [await sources_of(api, "nb.ipynb", v["number"]) for v in kept] == [["x = 3"], ["x = 1"]]
