"""Output budgets: sizes, cuts, markers, placeholders and the bounded cell model (pure)."""

from __future__ import annotations

import copy
import weakref
from typing import Any

from jupyter_loop.execution.outputs.budget import (
    LINE_COST,
    METADATA_KEY,
    MIN_TOTAL,
    Omitted,
    OutputBudget,
    clean_text,
    clean_value,
    front_cut,
    head_cut,
    human_bytes,
    marker_output,
    placeholder_output,
    text_size,
    with_fallback_text,
)
from jupyter_loop.execution.outputs.cell_outputs import CellOutputs
from jupyter_loop.execution.outputs.ops import (
    AppendOutput,
    AppendStream,
    ClearOutputs,
    UpdateDisplay,
)
from jupyter_loop.execution.outputs.record_edits import (
    Discard,
    NewOutput,
    NewStream,
    OutputUpdate,
    StreamEdit,
)

SMALL = OutputBudget(head=200, tail_max=200, tail_keep=100)


class Records:
    """A run's record in memory, from the model's record edits (as ``RunRecord`` writes
    them): counts how often it was opened and discarded."""

    def __init__(self) -> None:
        self.opened = 0
        self.discarded = 0
        self.parts: list[dict[str, Any]] = []
        self._open = False

    def link(self, part: int | None) -> str:
        return "/full" if part is None else f"/full/{part}"

    def take(self, model: CellOutputs) -> Records:
        for edit in model.take_record_edits():
            if isinstance(edit, Discard):
                self.discarded += self._open
                self._open = False
                continue
            if not self._open:
                self.opened += 1
                self._open, self.parts = True, []
            if isinstance(edit, NewStream):
                self.parts.append({"output_type": "stream", "name": edit.name, "text": edit.text})
            elif isinstance(edit, StreamEdit):
                text = self.parts[-1]["text"]
                self.parts[-1]["text"] = text[: len(text) - len(edit.removed)] + edit.insert
            elif isinstance(edit, NewOutput):
                self.parts.append(edit.output)
            elif isinstance(edit, OutputUpdate):
                self.parts[edit.part] = edit.output
        return self


_documents: weakref.WeakKeyDictionary[CellOutputs, list[dict[str, Any]]] = (
    weakref.WeakKeyDictionary()
)


def document(model: CellOutputs) -> list[dict[str, Any]]:
    """The model's outputs as the writer leaves them in the document (see ``outputs``)."""
    return _documents.setdefault(model, [])


def outputs(model: CellOutputs) -> list[dict[str, Any]]:
    """Write the model's plan into its document, as the writer does; returns the document."""
    shown = document(model)
    plan = model.plan(shown.__getitem__)
    assert plan is not None
    if plan.delete_from is not None:
        del shown[plan.delete_from :]
    if plan.edit is not None:
        removed, insert = plan.edit
        text = shown[-1]["text"].encode()
        shown[-1]["text"] = text[: len(text) - removed].decode() + insert
    shown.extend(copy.deepcopy(plan.append))
    model.committed()
    return shown


def display(text: str, display_id: str | None = None) -> AppendOutput:
    output = {"output_type": "display_data", "data": {"text/plain": text}, "metadata": {}}
    return AppendOutput(output, display_id)


# -- sizes and cuts ------------------------------------------------------------------------


def test_from_total_splits_head_and_tail_with_room_for_the_marker() -> None:
    budget = OutputBudget.from_total(100_000)
    assert budget.head + budget.tail_max < 100_000
    assert budget.tail_keep == budget.tail_max // 2
    assert budget.rich_limit == budget.tail_max


def test_from_total_has_a_floor() -> None:
    assert OutputBudget.from_total(10) == OutputBudget.from_total(MIN_TOTAL)


def test_text_size_counts_utf8_bytes_and_a_cost_per_line() -> None:
    assert text_size("ab\n") == 3 + LINE_COST
    assert text_size("é😀") == 6


def test_head_cut_ends_at_a_line_within_the_limit() -> None:
    text = "aa\nbb\ncc"
    assert head_cut(text, text_size("aa\nbb\n")) == 6
    assert head_cut(text, text_size("aa\nbb\n") - 1) == 3
    assert head_cut(text, 2) == 0


def test_head_cut_counts_multibyte_characters() -> None:
    text = "😀\n😀\n"
    assert head_cut(text, text_size("😀\n")) == 2


def test_front_cut_starts_at_the_next_line() -> None:
    text = "aa\nbb\ncc"
    assert front_cut(text, 1) == 3
    assert front_cut(text, text_size("aa\n")) == 3
    assert front_cut(text, text_size("aa\n") + 1) == 6


def test_front_cut_without_a_later_line_cuts_exactly() -> None:
    assert front_cut("abcdef", 2) == 2
    assert front_cut("é" * 4, 3) == 2  # two characters hold the 3 bytes asked for


def test_front_cut_keeps_the_end_of_one_long_line() -> None:
    assert front_cut("x" * 100 + "\n", 50) == 50


def test_human_bytes() -> None:
    assert [human_bytes(n) for n in (512, 2048, 3 * 1024**2, 5 * 1024**3)] == [
        "512 bytes",
        "2.0 KB",
        "3.0 MB",
        "5.0 GB",
    ]


# -- clean text and fallbacks --------------------------------------------------------------


def test_lone_surrogates_become_replacement_characters() -> None:
    assert clean_text("a\udcff b\ud800") == "a\ufffd b\ufffd"
    assert clean_value({"k": ["\udc80"]}) == {"k": ["\ufffd"]}


def test_an_unknown_mime_type_gets_a_text_line() -> None:
    output = {"output_type": "display_data", "data": {"application/x-thing": "…"}, "metadata": {}}
    plain = with_fallback_text(output)["data"]["text/plain"]
    assert plain.startswith("<application/x-thing output")


def test_a_bundle_with_text_is_left_alone() -> None:
    output = {"output_type": "display_data", "data": {"text/plain": "x"}, "metadata": {}}
    assert with_fallback_text(output) is output


# -- markers and placeholders --------------------------------------------------------------


def test_marker_says_what_was_omitted_and_links_the_full_output() -> None:
    omitted = Omitted(lines=1200, bytes=5000)
    marker = marker_output(omitted, "/base/api/x", SMALL)
    assert "1,200 lines (4.9 KB) omitted" in marker["data"]["text/plain"]
    assert '<a href="/base/api/x" target="_blank">' in marker["data"]["text/html"]
    assert marker["metadata"][METADATA_KEY]["full_output"] == "/base/api/x"


def test_marker_without_a_store_says_not_kept() -> None:
    marker = marker_output(Omitted(outputs=2, bytes=10), None, SMALL)
    assert "2 outputs (10 bytes) omitted here (not kept)" in marker["data"]["text/plain"]
    assert "<a " not in marker["data"]["text/html"]


def test_placeholder_keeps_a_text_preview_and_links_the_payload() -> None:
    image = {
        "output_type": "execute_result",
        "execution_count": 3,
        "data": {"image/png": "A" * 5000, "text/plain": "<Figure>"},
        "metadata": {},
    }
    placeholder = placeholder_output(image, 31_457_280, "/full/2")
    assert placeholder["execution_count"] == 3
    assert placeholder["data"]["text/plain"].startswith("<Figure>\n[image/png, text/plain output")
    assert "30.0 MB" in placeholder["data"]["text/plain"]
    assert '<a href="/full/2" target="_blank">open it</a>' in placeholder["data"]["text/html"]
    assert "image/png" not in placeholder["data"]


def test_html_in_a_preview_is_escaped() -> None:
    output = {"output_type": "display_data", "data": {"text/plain": "<b>x</b>"}, "metadata": {}}
    assert "&lt;b&gt;x&lt;/b&gt;" in placeholder_output(output, 10, None)["data"]["text/html"]


def test_a_huge_error_keeps_the_ends_of_its_traceback() -> None:
    error = {
        "output_type": "error",
        "ename": "ValueError",
        "evalue": "v" * 5000,
        "traceback": [f"frame {i}" for i in range(100)],
    }
    short = placeholder_output(error, 123_456, "/full/0")
    assert short["ename"] == "ValueError" and len(short["evalue"]) <= 201
    assert short["traceback"][:2] == ["frame 0", "frame 1"]
    assert short["traceback"][-2] == "frame 99"
    assert (
        "80 traceback lines omitted; full error on the server: /full/0" in (short["traceback"][10])
    )


# -- the cell model ------------------------------------------------------------------------


def test_a_run_within_the_budget_opens_no_record() -> None:
    records = Records()
    model = CellOutputs(SMALL, records.link)
    model.apply(AppendStream("stdout", "hello\n"))
    model.apply(display("x"))
    assert [o["output_type"] for o in outputs(model)] == ["stream", "display_data"]
    assert records.take(model).opened == 0


def test_a_long_stream_is_cut_into_head_marker_and_tail() -> None:
    records = Records()
    model = CellOutputs(SMALL, records.link)
    text = "".join(f"line {i}\n" for i in range(100))
    model.apply(AppendStream("stdout", text))
    head, marker, tail = outputs(model)
    assert text.startswith(head["text"]) and text.endswith(tail["text"])
    assert text_size(head["text"]) <= SMALL.head and text_size(tail["text"]) <= SMALL.tail_max
    assert marker["metadata"][METADATA_KEY]["full_output"] == "/full"
    assert records.take(model).parts == [{"output_type": "stream", "name": "stdout", "text": text}]


def test_the_head_keeps_whole_lines_only() -> None:
    model = CellOutputs(SMALL, Records().link)
    model.apply(AppendStream("stdout", "x" * 30 + "\npartial"))
    model.apply(AppendStream("stdout", " line " + "y" * 300 + "\n"))
    head, _, tail = outputs(model)
    assert head["text"] == "x" * 30 + "\n"
    assert tail["text"].endswith("y\n")


def test_a_progress_line_rewrites_in_the_tail() -> None:
    model = CellOutputs(SMALL, Records().link)
    model.apply(AppendStream("stdout", "".join(f"{i}\n" for i in range(100))))
    outputs(model)
    model.apply(AppendStream("stdout", "10%"))
    model.apply(AppendStream("stdout", "\r90%"))
    assert outputs(model)[-1]["text"].endswith("99\n90%")


def test_a_huge_rich_output_is_recorded_in_full_and_shown_as_a_placeholder() -> None:
    records = Records()
    model = CellOutputs(OutputBudget(head=2000, tail_max=2000, tail_keep=1000), records.link)
    model.apply(AppendStream("stdout", "first\n"))
    model.apply(display("z" * 3000))
    stream, placeholder = outputs(model)
    assert stream["text"] == "first\n"
    assert placeholder["metadata"][METADATA_KEY]["full_output"] == "/full/1"
    assert records.take(model).parts[1]["data"]["text/plain"] == "z" * 3000


def test_old_outputs_leave_the_tail_and_are_counted() -> None:
    model = CellOutputs(SMALL, Records().link)
    for i in range(40):
        model.apply(display(f"output {i:02d} " + "." * 20))
    shown = outputs(model)
    marker = next(
        o for o in shown if "lines" in o["metadata"].get(METADATA_KEY, {}).get("omitted", {})
    )
    omitted = marker["metadata"][METADATA_KEY]["omitted"]
    assert shown[-1]["data"]["text/plain"].startswith("output 39")
    assert omitted["outputs"] == 40 - len(shown) + 1


def test_updating_a_display_that_left_the_tail_updates_the_record() -> None:
    records = Records()
    model = CellOutputs(SMALL, records.link)
    model.apply(display("a" * 50, display_id="d"))
    model.apply(AppendStream("stdout", "".join(f"{i}\n" for i in range(200))))
    outputs(model)
    assert model.has_display("d")
    model.apply(UpdateDisplay("d", {"text/plain": "new"}, {}))
    assert records.take(model).parts[0]["data"]["text/plain"] == "new"


def test_clear_output_discards_the_record_and_starts_over() -> None:
    records = Records()
    model = CellOutputs(SMALL, records.link)
    model.apply(AppendStream("stdout", "x\n" * 100))
    outputs(model)
    model.apply(ClearOutputs())
    model.apply(AppendStream("stdout", "again\n"))
    assert outputs(model) == [{"output_type": "stream", "name": "stdout", "text": "again\n"}]
    assert records.take(model).discarded == 1


def test_the_plan_never_starts_a_rewrite_with_a_stream() -> None:
    model = CellOutputs()
    model.apply(AppendStream("stdout", "a\n"))
    model.apply(display("d", display_id="d"))
    model.apply(AppendStream("stdout", "b\n"))
    model.apply(AppendStream("stderr", "c\n"))
    outputs(model)
    model.apply(UpdateDisplay("d", {"text/plain": "e"}, {}))
    plan = model.plan(document(model).__getitem__)
    assert plan is not None and plan.delete_from == 1
    assert plan.append[0]["output_type"] == "display_data"


def test_a_line_without_end_stays_bounded() -> None:
    model = CellOutputs(SMALL, Records().link)
    for _ in range(2000):
        model.apply(AppendStream("stdout", "x" * 100))
    assert sum(item.size for item in model.items) < SMALL.head + SMALL.tail_max + 2048
