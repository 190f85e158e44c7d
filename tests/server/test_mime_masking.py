"""Secrets are masked in every MIME type of an output that carries text (issue 42, D18: an
``image/svg+xml`` output was never masked): SVG, HTML, JSON and ``+json``, LaTeX,
Markdown, JavaScript, any ``text/*``, and the text chunks of a PNG; other binary types
are kept as they are.

A pure table test per type (``SecretMasker.mask_value``, the one rule every route uses,
and ``OutputMasking`` as the writer applies it), PNG chunks in detail, and a real kernel
displaying every type: the shared document, the ``.ipynb`` and the full-output route.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from loop_helpers import wait_for
from mcp_helpers import call, text_of
from PIL import Image, PngImagePlugin

from jupyter_loop.execution.outputs.masking import OutputMasking
from jupyter_loop.execution.outputs.ops import AppendOutput
from jupyter_loop.png_text import SIGNATURE, chunk, chunks, mask_png_text
from jupyter_loop.secrets import DEFAULT_MASK, SecretMasker

SECRET = "hunter2-configured"  # c.JupyterLoopApp.secrets
M = DEFAULT_MASK


def png_with_text(secret: str, *, size: int = 4) -> bytes:
    """A real PNG (Pillow's) whose tEXt, zTXt and iTXt chunks hold ``secret``."""
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", f"plain {secret}")  # tEXt
    info.add_text("Author", f"zipped {secret}", zip=True)  # zTXt
    info.add_itxt("Title", f"utf-8 {secret} ✓", lang="en", tkey=f"Titel {secret}", zip=True)
    info.add_text("Software", "Matplotlib version3.9, https://matplotlib.org/")
    picture = Image.new("RGB", (size, size), (200, 30, 90))
    out = io.BytesIO()
    picture.save(out, format="PNG", pnginfo=info)
    return out.getvalue()


def png_texts(png: bytes) -> dict[str, str]:
    """The text a viewer reads from a PNG (Pillow checks every chunk's CRC on the way)."""
    picture = Image.open(io.BytesIO(png))
    picture.load()
    texts: dict[str, str] = dict(picture.text)  # type: ignore[attr-defined]
    return texts


def assert_crcs(png: bytes) -> None:
    """Every chunk's CRC is the CRC of its type and data."""
    position = len(SIGNATURE)
    while position < len(png):
        (length,) = struct.unpack_from(">I", png, position)
        body = png[position + 4 : position + 8 + length]
        (crc,) = struct.unpack_from(">I", png, position + 8 + length)
        assert crc == zlib.crc32(body), body[:4]
        position += 12 + length


PNG = png_with_text(SECRET)
PNG_B64 = base64.b64encode(PNG).decode()

ROWS: list[tuple[str, Any]] = [
    ("image/svg+xml", f'<svg xmlns="http://www.w3.org/2000/svg"><text>{SECRET}</text></svg>'),
    ("text/html", f"<b>{SECRET}</b>"),
    ("application/json", {SECRET: [SECRET, {"key": f"is {SECRET}"}], "n": 1}),
    ("application/vnd.custom+json", {"value": SECRET}),
    ("text/latex", f"$\\text{{{SECRET}}}$"),
    ("text/markdown", f"**{SECRET}**"),
    ("application/javascript", f'console.log("{SECRET}")'),
    ("text/csv", f"a,b\n1,{SECRET}\n"),
    ("text/x-anything", [f"line one {SECRET}\n", "line two"]),
    ("image/png", PNG_B64),
]
"""Every text-bearing MIME type, each holding the secret (as the kernel would send it)."""


def shown_text(mime: str, value: Any) -> str:
    """What a reader of this payload sees: the text, or a PNG's text chunks."""
    if mime == "image/png":
        return json.dumps(png_texts(base64.b64decode(value)), ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False)


# -- unit: the one rule --------------------------------------------------------------------


@pytest.mark.parametrize(("mime", "value"), ROWS, ids=[row[0] for row in ROWS])
def test_each_text_bearing_type_is_masked(mime: str, value: Any) -> None:
    masker = SecretMasker([SECRET], token_patterns=False)
    output = {"output_type": "display_data", "data": {mime: value}, "metadata": {mime: {}}}
    (written,) = OutputMasking(masker).ops(AppendOutput(output))
    assert isinstance(written, AppendOutput)
    masked = written.output["data"][mime]
    assert SECRET not in json.dumps(written.output, ensure_ascii=False)
    assert SECRET not in shown_text(mime, masked) and M in shown_text(mime, masked)
    assert masker.mask_value({mime: value}) == {mime: masked}  # the same rule on every read


def test_json_keys_that_mask_alike_are_all_kept() -> None:
    masker = SecretMasker([SECRET, "other-secret-9"], token_patterns=False)
    masked = masker.mask_value({"application/json": {SECRET: 1, "other-secret-9": 2, "a": 3}})
    assert masked == {"application/json": {M: 1, f"{M} 2": 2, "a": 3}}
    fields = masker.mask_value({"metadata": {SECRET: 1}})  # not JSON output: keys kept
    assert fields == {"metadata": {SECRET: 1}}


def test_a_png_keeps_its_pixels_and_gets_its_text_masked_with_valid_crcs() -> None:
    masker = SecretMasker([SECRET], token_patterns=False)
    masked = mask_png_text(PNG, masker.mask, masker.contains_secret)
    assert SECRET.encode() not in masked
    texts = png_texts(masked)
    assert texts == {
        "Comment": f"plain {M}",
        "Author": f"zipped {M}",
        "Title": f"utf-8 {M} ✓",
        "Software": "Matplotlib version3.9, https://matplotlib.org/",
    }
    assert_crcs(masked)
    before, after = Image.open(io.BytesIO(PNG)), Image.open(io.BytesIO(masked))
    assert before.tobytes() == after.tobytes()
    idat = [data for kind, data in chunks(PNG) if kind == b"IDAT"]
    assert idat == [data for kind, data in chunks(masked) if kind == b"IDAT"]
    itxt = [data for kind, data in chunks(masked) if kind == b"iTXt"]
    assert any(f"Titel {M}".encode() in data for data in itxt)  # the translated keyword
    assert not any(SECRET in zlib.decompress(d.split(b"\0", 1)[1][1:]).decode("latin-1")
                   for kind, d in chunks(masked) if kind == b"zTXt")  # fmt: skip


def test_a_png_with_nothing_to_mask_is_the_same_bytes() -> None:
    masker = SecretMasker(["not-in-this-image"], token_patterns=False)
    assert mask_png_text(PNG, masker.mask, masker.contains_secret) is PNG
    assert masker.mask_value({"image/png": PNG_B64})["image/png"] is PNG_B64


def test_png_chunks_that_cannot_hold_a_mask_are_dropped() -> None:
    """A secret in a keyword, an undecodable text chunk, an ``eXIf`` or a private chunk
    holding it, or text after ``IEND``: dropped, the image still valid."""
    masker = SecretMasker([SECRET], token_patterns=False)
    body = list(chunks(png_with_text("nothing")))
    extra = [
        chunk(b"tEXt", SECRET.encode() + b"\0value"),
        chunk(b"zTXt", b"Broken\0\0not zlib " + SECRET.encode()),
        chunk(b"eXIf", b"MM\0*" + SECRET.encode()),
        chunk(b"prVt", SECRET.encode()),
    ]
    png = SIGNATURE + chunk(*body[0]) + b"".join(extra)
    png += b"".join(chunk(kind, data) for kind, data in body[1:]) + SECRET.encode()
    masked = mask_png_text(png, masker.mask, masker.contains_secret)
    assert SECRET.encode() not in masked
    kinds = [kind for kind, _ in chunks(masked)]
    assert b"eXIf" not in kinds and b"prVt" not in kinds
    assert png_texts(masked)["Comment"] == "plain nothing"
    assert_crcs(masked)


def test_a_png_payload_that_is_no_png_is_masked_as_text_and_other_binaries_are_kept() -> None:
    masker = SecretMasker([SECRET], token_patterns=False)
    assert masker.mask_value({"image/png": f"not base64 {SECRET}"}) == {
        "image/png": f"not base64 {M}"
    }
    truncated = base64.b64encode(PNG[:40]).decode()
    assert masker.mask_value({"image/png": truncated}) == {"image/png": truncated}
    jpeg = base64.b64encode(b"\xff\xd8\xff" + struct.pack(">H", 2)).decode()
    assert masker.mask_value({"image/jpeg": jpeg, "audio/wav": "UklGR"}) == {
        "image/jpeg": jpeg,
        "audio/wav": "UklGR",
    }
    sized = masker.mask_value({"image/png": {"width": 4, "alt": SECRET}})  # output metadata
    assert sized == {"image/png": {"width": 4, "alt": M}}


# -- end to end ----------------------------------------------------------------------------


@pytest.fixture
def loop_config(tmp_path: Path) -> dict[str, Any]:
    return {"secrets": [SECRET], "data_dir": str(tmp_path / "loop")}


async def kept_url(api: Any, path: str) -> str:
    """Where the full-output route serves the cell's run (its record is written at its end)."""
    for _ in range(300):
        runs = (await api("api", "jupyter-loop", "history", params={"path": path}))["runs"]
        if runs and runs[0]["outputs_url"]:
            return str(runs[0]["outputs_url"])
        await asyncio.sleep(0.1)
    raise AssertionError(f"the run's outputs were not kept: {runs}")


def display_source() -> str:
    """A cell that displays each row's payload; the secret is made by the kernel, so the
    cell's source does not hold it (the PNG is in base64: its text is compressed)."""
    lines = [
        "from IPython.display import display",
        "s = 'hunter2-' + 'configured'",
        f"PNG = {PNG_B64!r}",
    ]
    for mime, value in ROWS:
        if mime == "image/png":
            payload = "PNG"
        else:
            payload = repr(value).replace(repr(SECRET), "s").replace(SECRET, "' + s + '")
        lines.append(f"display({{{mime!r}: {payload}, 'text/plain': 'x'}}, raw=True)")
    return "\n".join(lines)


async def test_every_type_a_kernel_displays_is_masked_in_the_document_file_and_route(
    write_notebook, start_kernel, run_cells, open_tab, api, jp_fetch, jp_root_dir, loop_mcp_session
):
    source = display_source()
    assert SECRET not in source
    path = write_notebook("types.ipynb", source)
    await start_kernel(path)
    async with open_tab(path) as tab:
        await run_cells(path, "c0")
        await wait_for(lambda: tab.cell("c0").get("execution_count") == 1)
        outputs = tab.cell("c0")["outputs"]
    assert [next(k for k in o["data"] if k != "text/plain") for o in outputs] == [
        mime for mime, _ in ROWS
    ]
    kept = await kept_url(api, path)
    await wait_for(lambda: M in (jp_root_dir / path).read_text())
    saved = json.loads((jp_root_dir / path).read_text())["cells"][0]["outputs"]

    for part, (mime, _) in enumerate(ROWS):
        in_document = outputs[part]["data"][mime]
        in_file = saved[part]["data"][mime]
        if isinstance(in_file, list):
            in_file = "".join(in_file)
        served = await jp_fetch(*kept.split("/"), str(part), params={"mime": mime})
        if mime == "image/png":
            from_route = json.dumps(png_texts(served.body), ensure_ascii=False)
        elif served.headers["Content-Type"] == "application/json":
            from_route = json.dumps(json.loads(served.body), ensure_ascii=False)
        else:
            from_route = served.body.decode()
        for where, text in (
            ("document", shown_text(mime, in_document)),
            ("file", shown_text(mime, in_file)),
            ("full-output route", from_route),
        ):
            assert SECRET not in text and M in text, (mime, where, text[:300])
    assert SECRET not in (jp_root_dir / path).read_text()

    # MCP: get_outputs (short outputs inline, the others as links) and resources/read.
    async with loop_mcp_session() as session:
        result = await call(session, "get_outputs", path=path, cell_id="c0")
        read: list[str] = [text_of(result)]
        links = [item for item in result.content if isinstance(item, types.ResourceLink)]
        # A PNG within the image budget is sent inline, and then not linked again.
        inline = [item for item in result.content if isinstance(item, types.ImageContent)]
        assert {"image/svg+xml", "image/png"} <= {
            *(link.mime_type for link in links),
            *(image.mime_type for image in inline),
        }
        for image in inline:
            if image.mime_type == "image/png":
                read.append(json.dumps(png_texts(base64.b64decode(image.data)), ensure_ascii=False))
        for link in links:
            for content in (await session.read_resource(link.uri)).contents:
                if isinstance(content, types.TextResourceContents):
                    read.append(content.text)
                elif content.mime_type == "image/png":
                    png = base64.b64decode(content.blob)
                    read.append(json.dumps(png_texts(png), ensure_ascii=False))
    assert all(SECRET not in text for text in read), read
    assert any(M in text for text in read[1:])
