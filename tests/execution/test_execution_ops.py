"""Kernel messages as output edits."""

from __future__ import annotations

from jupyter_loop.execution.outputs.ops import (
    AppendOutput,
    AppendStream,
    ClearOutputs,
    UpdateDisplay,
    op_from_message,
)


def message(kind: str, **content: object) -> dict:
    return {"header": {"msg_type": kind}, "content": content}


def test_stream():
    assert op_from_message(message("stream", name="stderr", text="x")) == AppendStream(
        "stderr", "x"
    )


def test_display_data_keeps_its_display_id():
    op = op_from_message(
        message(
            "display_data", data={"text/plain": "a"}, metadata={}, transient={"display_id": "d1"}
        )
    )
    assert op == AppendOutput(
        {"output_type": "display_data", "data": {"text/plain": "a"}, "metadata": {}}, "d1"
    )


def test_execute_result_keeps_its_count():
    op = op_from_message(message("execute_result", data={}, metadata={}, execution_count=4))
    assert isinstance(op, AppendOutput)
    assert op.output["execution_count"] == 4


def test_error():
    op = op_from_message(message("error", ename="E", evalue="v", traceback=["t"]))
    assert op == AppendOutput(
        {"output_type": "error", "ename": "E", "evalue": "v", "traceback": ["t"]}
    )


def test_clear_output_and_wait():
    assert op_from_message(message("clear_output", wait=True)) == ClearOutputs(wait=True)


def test_update_display_data():
    op = op_from_message(
        message(
            "update_display_data",
            data={"text/plain": "b"},
            metadata={},
            transient={"display_id": "d1"},
        )
    )
    assert op == UpdateDisplay("d1", {"text/plain": "b"}, {})


def test_update_without_display_id_is_ignored():
    assert op_from_message(message("update_display_data", data={}, metadata={})) is None


def test_status_messages_produce_nothing():
    assert op_from_message(message("status", execution_state="busy")) is None
