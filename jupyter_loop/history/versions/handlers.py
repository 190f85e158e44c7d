"""``/api/jupyter-loop/versions``: the kept versions of a notebook, one of them, a restore.

``GET versions?path=P``: the versions of ``P``, newest first (no content);
``GET versions/N?path=P``: version ``N`` and its notebook, as the save left it;
``POST versions/N/restore`` with ``{"path": P}``: bring version ``N`` back: into the file,
or, when the notebook is open, as a proposal in it (``"now": true``: into it at once).

Reading a version needs what reading the notebook needs; a restore replaces the notebook's
content, so it also needs ``write`` on ``contents`` (the ``restore`` row of the rights table).

A version is returned as the save wrote it, sources and outputs unmasked: it is the
notebook's own content, behind the right that reads the file, and a preview must show what
a restore would bring back. (Outputs that jupyter-loop wrote were masked before they
reached the notebook; nothing here sends a version to a model.)
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tornado import web

from ...access.rights import Ability, requires
from ...errors import BadRequest, Unavailable
from ...handlers import NAMESPACE, LoopHandler
from .keeper import VersionKeeper

_NUMBER = r"([0-9]{1,18})"


class VersionsBase(LoopHandler):
    @property
    def keeper(self) -> VersionKeeper:
        keeper: VersionKeeper | None = self.settings.get("jupyter_loop_versions")
        if keeper is None:
            raise Unavailable("This server keeps no versions of notebooks (versions_max is 0).")
        return keeper

    def notebook_path(self, body: dict[str, Any] | None = None) -> str:
        path = body.get("path") if body is not None else self.get_query_argument("path", "")
        if not isinstance(path, str) or not path:
            raise BadRequest("'path' is required: the notebook whose versions to use.")
        return path


class VersionsHandler(VersionsBase):
    @web.authenticated
    @requires(Ability.READ)
    async def get(self) -> None:
        path = self.notebook_path()
        versions = await self.keeper.versions(path)
        self.reply({"path": path, "versions": [v.to_json() for v in versions]})


class VersionHandler(VersionsBase):
    @web.authenticated
    @requires(Ability.READ)
    async def get(self, number: str) -> None:
        version, notebook = await self.keeper.notebook(self.notebook_path(), int(number))
        # A version may be many megabytes: written out in a worker thread, not on the loop.
        self.finish(await asyncio.to_thread(version_reply, version.to_json(), notebook))


class RestoreHandler(VersionsBase):
    @web.authenticated
    @requires(Ability.RESTORE)
    async def post(self, number: str) -> None:
        body = self.body_object()
        now = body.get("now", False)
        if not isinstance(now, bool):
            raise BadRequest("'now' must be true or false: restore an open notebook at once.")
        by = self.user_name()
        restored = await self.keeper.restore(self.notebook_path(body), int(number), by, now=now)
        done = "proposed" if restored.proposal else "restored"
        self.log.info("jupyter-loop: %s %s version %s of %s", by, done, number, restored.path)
        self.reply(restored.to_json())


def version_reply(version: dict[str, Any], notebook: dict[str, Any]) -> str:
    """``{"version": …, "content": notebook}`` as JSON, encoded a cell at a time.

    One ``json.dumps`` of a 16 MB notebook holds the interpreter for its whole length
    (0.2 s, in C), in a worker thread too; cell by cell, the event loop gets its turns.

    Example:
        >>> json.loads(version_reply({"number": 1}, {"cells": [{"a": 1}, {"b": 2}], "n": 4}))
        {'version': {'number': 1}, 'content': {'cells': [{'a': 1}, {'b': 2}], 'n': 4}}
        >>> json.loads(version_reply({}, {"cells": []}))
        {'version': {}, 'content': {'cells': []}}
    """
    cells = notebook.get("cells")
    if not isinstance(cells, list):
        return json.dumps({"version": version, "content": notebook})
    rest = json.dumps({k: v for k, v in notebook.items() if k != "cells"})[1:-1]
    content = '{"cells": [' + ", ".join(json.dumps(cell) for cell in cells) + "]"
    content += f", {rest}}}" if rest else "}"
    return f'{{"version": {json.dumps(version)}, "content": {content}}}'


def route_table() -> list[tuple[str, type[LoopHandler]]]:
    base = rf"/api/{NAMESPACE}/versions"
    return [
        (base, VersionsHandler),
        (rf"{base}/{_NUMBER}", VersionHandler),
        (rf"{base}/{_NUMBER}/restore", RestoreHandler),
    ]
