"""Stream text rendered like a terminal, handed out as tail edits."""

from __future__ import annotations

import random

from jupyter_loop.execution.outputs.terminal import LINE_LIMIT, TailEdit, TerminalScreen


def render(*chunks: str) -> str:
    """Apply the screen's edits to a plain string, as the document would."""
    screen = TerminalScreen()
    text = ""
    for chunk in chunks:
        screen.write(chunk)
        edit = screen.take_edit()
        assert text.endswith(edit.removed)
        text = text[: len(text) - len(edit.removed)] + edit.insert
    return text


def test_plain_text_is_appended():
    assert render("a", "b\n", "c") == "ab\nc"


def test_carriage_return_overwrites_the_line():
    assert render("10%\r", "50%\r", "100%\n") == "100%\n"


def test_carriage_return_overwrites_only_what_it_writes():
    assert render("abcdef\rXY") == "XYcdef"


def test_backspace_moves_back_without_crossing_a_newline():
    assert render("ab\n\bc", "d\b\bX") == "ab\nXd"


def test_edits_only_touch_the_current_line():
    screen = TerminalScreen()
    screen.write("done\nstep 1")
    screen.take_edit()
    screen.write("\rstep 2")
    assert screen.take_edit() == TailEdit(removed="1", insert="2")


def test_an_unchanged_screen_gives_an_empty_edit():
    screen = TerminalScreen("x\ny")
    assert screen.take_edit().is_empty


def test_starting_from_existing_text_continues_its_last_line():
    screen = TerminalScreen("a\nprogress 1")
    screen.write("\rprogress 2\n")
    assert screen.take_edit() == TailEdit(removed="1", insert="2\n")


def test_any_split_of_the_input_renders_the_same():
    text = "a\rbc\n12\b3\r\r45\n\bx\ryz" * 5
    expected = render(text)
    generator = random.Random(7)
    for _ in range(200):
        cuts = sorted(generator.sample(range(1, len(text)), 6))
        pieces = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        assert render(*pieces) == expected


def test_a_line_past_the_limit_is_no_longer_rewritten():
    screen = TerminalScreen()
    screen.render("x" * (LINE_LIMIT + 1))
    assert screen.render("\rab") == TailEdit(removed="", insert="ab")
