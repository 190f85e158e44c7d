"""Outputs summarised for a model: text cleaning and excerpts, tracebacks, tables, images,
placeholders, the per-cell headline (also covers the private helpers behind the facade)."""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

from jupyter_loop.notebook_view.summary import (
    Excerpt,
    ImageAttachment,
    clean_text,
    collapse_carriage_returns,
    head_tail,
    headline,
    share_budget,
    strip_ansi,
    summarize_output,
    summarize_outputs,
    summarize_traceback,
)

# A real IPython 9 traceback (ipykernel 7) for `def f(): return 1/0` then `f()`.
IPYTHON9_TRACEBACK = [
    "\x1b[31m---------------------------------------------------------------------------\x1b[39m",
    "\x1b[31mZeroDivisionError\x1b[39m                         Traceback (most recent call last)",
    "\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[1]\x1b[39m\x1b[32m, line 3\x1b[39m"
    "\n\x1b[32m      1\x1b[39m \x1b[38;5;28;01mdef\x1b[39;00m f():\n\x1b[32m      2\x1b"
    "[39m     \x1b[38;5;28;01mreturn\x1b[39;00m \x1b[32m1\x1b[39m/\x1b[32m0\x1b[39m\n"
    "\x1b[32m----> \x1b[39m\x1b[32m3\x1b[39m f()\n",
    "\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[1]\x1b[39m\x1b[32m, line 2\x1b[39m"
    ", in \x1b[36mf\x1b[39m\x1b[34m()\x1b[39m\n\x1b[32m      1\x1b[39m \x1b[38;5;28;01m"
    "def\x1b[39;00m f():\n\x1b[32m----> \x1b[39m\x1b[32m2\x1b[39m     \x1b[38;5;28;01mr"
    "eturn\x1b[39;00m \x1b[32m1\x1b[39m/\x1b[32m0\x1b[39m\n",
    "\x1b[31mZeroDivisionError\x1b[39m: division by zero",
]
LIBRARY_FRAME = (
    "\x1b[36mFile \x1b[39m\x1b[32m/opt/conda/lib/python3.11/json/decoder.py:337\x1b[39m, in "
    "\x1b[36mJSONDecoder.decode\x1b[39m\x1b[34m(self, s)\x1b[39m\n\x1b[32m--> \x1b[39m"
    "\x1b[32m337\x1b[39m     obj, end = self.raw_decode(s)\n"
)


def _error(
    traceback: list[str], ename: str = "ZeroDivisionError", evalue: str = "division by zero"
) -> dict[str, Any]:
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": traceback}


def _stream(text: str | list[str], name: str = "stdout") -> dict[str, Any]:
    return {"output_type": "stream", "name": name, "text": text}


def _display(data: dict[str, Any], metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"output_type": "display_data", "data": data, "metadata": metadata or {}}


def _result(data: dict[str, Any]) -> dict[str, Any]:
    return {"output_type": "execute_result", "execution_count": 1, "data": data, "metadata": {}}


def _png(width: int, height: int) -> str:
    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    ihdr = chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    body = b"\x89PNG\r\n\x1a\n" + ihdr + chunk(b"IDAT", bytes(100)) + chunk(b"IEND", b"")
    return base64.b64encode(body).decode()


def _jpeg(width: int, height: int) -> str:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return base64.b64encode(b"\xff\xd8" + app0 + sof0 + bytes(50) + b"\xff\xd9").decode()


def _gif(width: int, height: int) -> str:
    return base64.b64encode(b"GIF89a" + struct.pack("<HH", width, height) + bytes(20)).decode()


def _pandas_html(rows: int, cols: int, footer: bool = True) -> str:
    head = "<tr><th></th>" + "".join(f"<th>c{c}</th>" for c in range(cols)) + "</tr>"
    body = "".join(
        f"<tr><th>{r}</th>" + "".join(f"<td>{r * 10 + c}</td>" for c in range(cols)) + "</tr>\n"
        for r in range(rows)
    )
    html = f'<table border="1" class="dataframe"><thead>{head}</thead><tbody>{body}</tbody></table>'
    return html + (f"\n<p>{rows} rows × {cols} columns</p>" if footer else "")


# -- cleaning ----------------------------------------------------------------------------


def test_strip_ansi_removes_colours_and_hyperlinks() -> None:
    text = "\x1b[1;31mError\x1b[0m see \x1b]8;;http://x\x07link\x1b]8;;\x07."
    assert strip_ansi(text) == "Error see link."


def test_strip_ansi_drops_a_cut_off_escape_at_the_end() -> None:
    assert strip_ansi("ok \x1b[38;5") == "ok "


def test_collapse_carriage_returns_keeps_last_state_of_each_line() -> None:
    assert collapse_carriage_returns("a 10%\ra 50%\ra 100%\nb\n") == "a 100%\nb\n"


def test_collapse_carriage_returns_overwrites_like_a_terminal() -> None:
    assert collapse_carriage_returns("abcdef\rXY") == "XYcdef"


def test_collapse_carriage_returns_treats_crlf_as_newline() -> None:
    assert collapse_carriage_returns("a\r\nb\r\n") == "a\nb\n"


def test_clean_text_strips_then_collapses() -> None:
    assert clean_text("\x1b[32m 1/2\x1b[0m\r\x1b[32m 2/2\x1b[0m\n") == " 2/2\n"


# -- excerpts ----------------------------------------------------------------------------


def test_head_tail_keeps_text_within_budget() -> None:
    assert head_tail("short", 10) == Excerpt("short", 5, None, False)


def test_head_tail_cuts_at_line_breaks_with_a_marker() -> None:
    text = "".join(f"line {i:02d}\n" for i in range(50))
    excerpt = head_tail(text, 120)
    assert excerpt == Excerpt(
        "line 00\nline 01\nline 02\nline 03\n"
        "… [344 characters omitted; read more with offset=32] …\n"
        "line 47\nline 48\nline 49\n",
        400,
        32,
        True,
    )


def test_head_tail_stays_within_budget() -> None:
    text = "x" * 10_000
    assert [len(head_tail(text, budget).text) <= budget for budget in (80, 200, 999)] == [True] * 3


def test_head_tail_with_tiny_budget_keeps_only_the_head() -> None:
    assert head_tail("abcdefghij" * 10, 30) == Excerpt("abcdefghij" * 3, 100, 30, True)


def test_head_tail_pages_from_an_offset() -> None:
    text = "abcdefghij" * 20
    excerpt = head_tail(text, 100, offset=50)
    assert (excerpt.text.startswith(text[50:99]), excerpt.next_offset, len(excerpt.text)) == (
        True,
        99,
        99,
    )


def test_paging_with_next_offset_covers_the_text() -> None:
    text = "".join(f"row {i}\n" for i in range(500))
    pieces = [text[: head_tail(text, 300).next_offset]]
    offset = head_tail(text, 300).next_offset
    while offset is not None:
        page = head_tail(text, 300, offset=offset)
        end = page.next_offset if page.next_offset is not None else len(text)
        pieces.append(text[offset:end])
        assert page.text.startswith(text[offset:end])
        offset = page.next_offset
    assert "".join(pieces) == text


def test_head_tail_clean_cleans_pieces_and_offsets_count_raw_characters() -> None:
    text = "\x1b[31mred\x1b[0m\n" * 100
    excerpt = head_tail(text, 120, clean=True)
    assert (excerpt.text.startswith("red\nred\n"), "\x1b" in excerpt.text) == (True, False)
    assert text[excerpt.next_offset or 0 :].startswith("\x1b[31m")


def test_head_tail_never_splits_an_escape_sequence() -> None:
    text = "a" * 40 + "\x1b[38;5;196m" + "b" * 200
    excerpt = head_tail(text, 90, clean=True)
    assert "[38;5" not in excerpt.text


def test_head_tail_of_a_huge_text_is_cut() -> None:
    # How fast: bench/summaries.py (goal 50 ms); a clock here failed on a busy machine.
    text = "progress\r" * 5_000_000 + "done\n"
    excerpt = head_tail(text, 2_000, clean=True)
    assert excerpt.truncated
    assert len(excerpt.text) <= 2_000


def test_share_budget_gives_small_items_their_size() -> None:
    assert share_budget([10, 500, 1000, 20], 330) == [10, 150, 150, 20]


# -- tracebacks --------------------------------------------------------------------------


def test_traceback_keeps_headline_and_user_frames() -> None:
    assert summarize_traceback(_error(IPYTHON9_TRACEBACK), 1000) == (
        "ZeroDivisionError: division by zero\n"
        "Cell In[1], line 3\n"
        "      1 def f():\n"
        "      2     return 1/0\n"
        "----> 3 f()\n"
        "Cell In[1], line 2, in f()\n"
        "      1 def f():\n"
        "----> 2     return 1/0"
    )


def test_traceback_collapses_library_frames_to_a_count() -> None:
    traceback = [*IPYTHON9_TRACEBACK[:3], LIBRARY_FRAME, LIBRARY_FRAME, IPYTHON9_TRACEBACK[-1]]
    assert summarize_traceback(_error(traceback), 1000).splitlines()[-2:] == [
        "----> 3 f()",
        "[2 library frames]",
    ]


def test_traceback_recognises_old_ipykernel_frames() -> None:
    traceback = [
        "\x1b[0;32m/tmp/ipykernel_1234/567.py\x1b[0m in \x1b[0;36m<module>\x1b[0m\n"
        "\x1b[0;32m----> 1\x1b[0;31m \x1b[0;36m1\x1b[0m\x1b[0;34m/\x1b[0m\x1b[0;36m0\x1b[0m\n",
        "\x1b[0;32m<ipython-input-3-9f2c>\x1b[0m in \x1b[0;36m<module>\x1b[0m\n----> 2 g()\n",
    ]
    assert summarize_traceback(_error(traceback), 1000).splitlines() == [
        "ZeroDivisionError: division by zero",
        "/tmp/ipykernel_1234/567.py in <module>",
        "----> 1 1/0",
        "<ipython-input-3-9f2c> in <module>",
        "----> 2 g()",
    ]


def test_traceback_of_a_syntax_error_keeps_the_caret() -> None:
    traceback = [
        "  \x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[3]\x1b[39m\x1b[32m, line 1\x1b[39m\n"
        "\x1b[31m    \x1b[39m\x1b[31mx = (\x1b[39m\n         ^\n"
        "\x1b[31mSyntaxError\x1b[39m\x1b[31m:\x1b[39m incomplete input\n"
    ]
    error = _error(traceback, "SyntaxError", "incomplete input (1.py, line 1)")
    assert summarize_traceback(error, 1000).splitlines()[1:4] == [
        "Cell In[3], line 1",
        "    x = (",
        "         ^",
    ]


def test_traceback_keeps_chained_exception_lines() -> None:
    traceback = [
        IPYTHON9_TRACEBACK[2],
        "\x1b[31mKeyError\x1b[39m: 'a'",
        "\nDuring handling of the above exception, another exception occurred:\n",
        IPYTHON9_TRACEBACK[3],
        "\x1b[31mValueError\x1b[39m: boom",
    ]
    lines = summarize_traceback(_error(traceback, "ValueError", "boom"), 1000).splitlines()
    assert (lines[0], lines[5], lines[6]) == (
        "ValueError: boom",
        "KeyError: 'a'",
        "During handling of the above exception, another exception occurred:",
    )


def test_traceback_respects_budget() -> None:
    traceback = [IPYTHON9_TRACEBACK[2]] * 200
    assert len(summarize_traceback(_error(traceback), 500)) <= 500


def test_error_headline_is_first_line_of_evalue_capped() -> None:
    error = _error([], "ValueError", "x" * 300 + "\nsecond line")
    assert headline([error]) == "ValueError: " + "x" * 107 + "…"


# -- images ------------------------------------------------------------------------------


def test_png_placeholder_reads_dimensions_from_header() -> None:
    text, image = summarize_output(_display({"image/png": _png(640, 480)}), 1000)
    assert (text, image) == ("[image/png 640×480, 157 B]", None)


def test_jpeg_placeholder_reads_dimensions_from_header() -> None:
    text, _ = summarize_output(_display({"image/jpeg": _jpeg(1024, 768)}), 1000)
    assert text == "[image/jpeg 1024×768, 85 B]"


def test_gif_placeholder_reads_dimensions_from_header() -> None:
    text, _ = summarize_output(_display({"image/gif": _gif(32, 16)}), 1000)
    assert text == "[image/gif 32×16, 30 B]"


def test_svg_placeholder_reads_width_and_height() -> None:
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="300pt" height="150">' + " " * 2000
    assert (
        summarize_output(_display({"image/svg+xml": svg}), 100)[0]
        == "[image/svg+xml 400×150, 2.0 KB]"
    )


def test_svg_placeholder_falls_back_to_view_box() -> None:
    svg = '<svg viewBox="0 0 120 80"><rect/></svg>'
    assert (
        summarize_output(_display({"image/svg+xml": svg}), 100)[0] == "[image/svg+xml 120×80, 39 B]"
    )


def test_image_placeholder_uses_metadata_when_header_is_unknown() -> None:
    output = _display({"image/webp": "UklGRg=="}, {"image/webp": {"width": 50, "height": 20}})
    assert summarize_output(output, 100)[0] == "[image/webp 50×20, 4 B]"


def test_images_are_attached_when_the_model_takes_images() -> None:
    payload = _png(2, 2)
    summary = summarize_outputs([_display({"image/png": payload[:40] + "\n" + payload[40:]})], 500,
                                model_takes_images=True)  # fmt: skip
    assert (summary.text, summary.images) == (
        "[0] display\n[image/png 2×2, 157 B, attached as image 1]",
        (ImageAttachment("image/png", payload),),
    )


def test_attached_images_are_capped() -> None:
    outputs = [_display({"image/png": _png(2, 2)})] * 6
    summary = summarize_outputs(outputs, 2000, model_takes_images=True, max_images=4)
    assert len(summary.images) == 4


# -- tables ------------------------------------------------------------------------------


def test_pandas_html_becomes_a_text_table_with_shape() -> None:
    text, _ = summarize_output(_result({"text/html": _pandas_html(3, 2), "text/plain": "df"}), 1000)
    assert text == "table 3 rows × 2 columns\n   c0  c1\n0   0   1\n1  10  11\n2  20  21"


def test_html_table_rows_are_capped() -> None:
    text, _ = summarize_output(_result({"text/html": _pandas_html(100, 2)}), 5000)
    lines = text.splitlines()
    assert (lines[0], len(lines), lines[-1]) == (
        "table 100 rows × 2 columns (first rows shown)",
        17,
        "14  140  141",
    )


def test_html_table_columns_are_capped() -> None:
    text, _ = summarize_output(_result({"text/html": _pandas_html(1, 15)}), 5000)
    assert text.splitlines()[1].split()[-2:] == ["c8", "…"]


def test_html_table_without_footer_counts_rows() -> None:
    text, _ = summarize_output(_result({"text/html": _pandas_html(4, 1, footer=False)}), 1000)
    assert text.splitlines()[0] == "table 4 rows, 2 cells wide"


def test_huge_html_table_is_summarised() -> None:
    # How fast: bench/summaries.py (goal 100 ms); a clock here failed on a busy machine.
    html = _pandas_html(200_000, 5)
    text, _ = summarize_output(_result({"text/html": html}), 2000)
    assert text.splitlines()[0] == "table 200000 rows × 5 columns (first rows shown)"


def test_plain_pandas_repr_becomes_a_table_with_shape() -> None:
    plain = "    a   b\n0   1   2\n1   3   4\n..\n\n[1000 rows x 2 columns]"
    text, _ = summarize_output(_result({"text/plain": plain}), 1000)
    assert text.splitlines()[:3] == ["table 1000 rows × 2 columns", "    a   b", "0   1   2"]


def test_plain_text_that_is_not_a_table_stays_text() -> None:
    assert summarize_output(_result({"text/plain": "'hello world'"}), 100)[0] == "'hello world'"


# -- placeholders and choice of representation -------------------------------------------


def test_widget_placeholder_names_model() -> None:
    view = {"model_id": "1a2b3c4d5e6f", "version_major": 2, "version_minor": 0}
    data = {"application/vnd.jupyter.widget-view+json": view, "text/plain": "IntSlider(value=3)"}
    assert summarize_output(_display(data), 100)[0] == "[widget: IntSlider model 1a2b3c4d…]"


def test_javascript_is_a_placeholder() -> None:
    data = {"application/javascript": "alert(1)" * 100}
    assert summarize_output(_display(data), 100)[0] == "[script output omitted]"


def test_html_with_script_is_a_placeholder() -> None:
    data = {"text/html": "<div id=x></div><script>draw()</script>"}
    assert summarize_output(_display(data), 100)[0] == "[script output omitted]"


def test_unknown_mime_is_a_typed_placeholder() -> None:
    data = {"application/x-foo": "z" * 1229}
    assert summarize_output(_display(data), 100)[0] == "[application/x-foo output, 1.2 KB]"


def test_html_is_preferred_to_an_object_repr_and_tags_are_stripped() -> None:
    data = {
        "text/html": "<b>Total:</b> 3 &amp; 4",
        "text/plain": "<IPython.core.display.HTML object>",
    }
    assert summarize_output(_display(data), 100)[0] == "Total: 3 & 4"


def test_markdown_is_preferred_to_plain() -> None:
    data = {"text/markdown": "**bold**", "text/plain": "<IPython.core.display.Markdown object>"}
    assert summarize_output(_display(data), 100)[0] == "**bold**"


# -- whole cells -------------------------------------------------------------------------


def test_summarize_outputs_labels_each_output() -> None:
    outputs = [_stream("a\n"), _stream("warn\n", "stderr"), _result({"text/plain": "42"})]
    assert (
        summarize_outputs(outputs, 1000).text == "[0] stdout\na\n[1] stderr\nwarn\n[2] result\n42"
    )


def test_summarize_outputs_stays_within_budget() -> None:
    outputs = [_stream("x" * 100_000), _error(IPYTHON9_TRACEBACK), _stream("y\n" * 50_000)]
    summary = summarize_outputs(outputs, 2000)
    assert (len(summary.text) <= 2000, summary.truncated) == (True, True)


def test_summarize_outputs_gives_small_outputs_all_they_need() -> None:
    outputs = [_stream("z" * 100_000), _result({"text/plain": "small result"})]
    assert summarize_outputs(outputs, 1000).text.endswith("[1] result\nsmall result")


def test_summarize_outputs_marks_omitted_outputs() -> None:
    outputs = [_stream(f"{i}\n") for i in range(50)]
    assert summarize_outputs(outputs, 5000).text.splitlines()[-1] == (
        "[20 more outputs omitted; read them by index]"
    )


def test_summarize_outputs_reads_list_text() -> None:
    assert summarize_outputs([_stream(["a\n", "b\n"])], 100).text == "[0] stdout\na\nb"


def test_summarize_outputs_of_a_huge_stream() -> None:
    # How fast: bench/summaries.py (goal 50 ms); a clock here failed on a busy machine.
    outputs = [_stream("\x1b[32mok\x1b[0m line\n" * 5_000_000)]
    summary = summarize_outputs(outputs, 4000)
    assert summary.headline.startswith("stdout ")


# -- headline ----------------------------------------------------------------------------


def test_headline_names_the_error() -> None:
    assert (
        headline([_stream("a\n"), _error(IPYTHON9_TRACEBACK)])
        == "ZeroDivisionError: division by zero"
    )


def test_headline_counts_stream_lines_and_images() -> None:
    outputs = [_stream("a\nb\n"), _stream("c"), _display({"image/png": _png(1, 1)})]
    assert headline(outputs) == "stdout 3 lines, 1 image"


def test_headline_gives_size_of_a_long_stream() -> None:
    assert headline([_stream("x" * 2 * 1024 * 1024)]) == "stdout 2.0 MB"


def test_headline_gives_table_shape_and_result() -> None:
    outputs = [_result({"text/html": _pandas_html(5, 2), "text/plain": "df"})]
    assert headline(outputs) == "table 5 rows × 2 columns"


def test_headline_shows_a_short_result() -> None:
    outputs = [_display({"text/plain": "x"}), _result({"text/plain": "42\nmore"})]
    assert headline(outputs) == "1 display, result: 42"


def test_headline_counts_widgets() -> None:
    data = {"application/vnd.jupyter.widget-view+json": {"model_id": "m"}}
    assert headline([_display(data), _display(data)]) == "2 widgets"


def test_headline_of_no_outputs_is_empty() -> None:
    assert headline([]) == ""
