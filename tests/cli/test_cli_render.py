"""The terminal client's pure parts: what it prints of outputs, cell choice, paths."""

from __future__ import annotations

from jupyter_loop.cli.render import OutputFollower, Style


def stream(text: str, name: str = "stdout") -> dict[str, str]:
    return {"output_type": "stream", "name": name, "text": text}


def test_a_progress_line_is_redrawn_in_place_on_a_terminal() -> None:
    follower = OutputFollower(Style(tty=True))
    written = [
        follower.update([stream("10%")]),
        follower.update([stream("10%")]),
        follower.update([stream("60%")]),
        follower.update([stream("100%\ndone\n")]),
        follower.finish(),
    ]
    assert written == ["10%", "", "\r\x1b[K60%", "\r\x1b[K100%\ndone\n", ""]


def test_piped_output_gets_finished_lines_only_and_the_open_line_at_the_end() -> None:
    follower = OutputFollower(Style(tty=False))
    written = [
        follower.update([stream("a\n10%")]),
        follower.update([stream("a\n60%")]),
        follower.update([stream("a\n60%"), stream("oops\n", "stderr")]),
        follower.finish(),
    ]
    assert written == ["a\n", "", "60%oops\n", ""]


def test_cleared_outputs_start_over() -> None:
    follower = OutputFollower(Style(tty=False))
    assert follower.update([stream("one\n")]) == "one\n"
    assert follower.update([stream("two\n")]) == "two\n"


def test_errors_lose_their_colours_when_piped() -> None:
    error = {
        "output_type": "error",
        "ename": "E",
        "evalue": "v",
        "traceback": ["\x1b[31mE\x1b[0m: v"],
    }
    assert OutputFollower(Style(tty=False)).update([error]) == "E: v\n"
    assert "\x1b[31m" in OutputFollower(Style(tty=True)).update([error])
