"""The agent shows plots to models that take images (real server, the scripted model server)."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import nbformat
import pytest
from agent_helpers import OLLAMA_CHAT, OPENAI_CHAT, Agent, notices, openai_config, prompt_text
from PIL import Image

from jupyter_loop.notebook_view import vision
from jupyter_loop.notebook_view.summary import ImageAttachment
from jupyter_loop.testing import say


def png(width: int, height: int, color: str = "red") -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def plot_notebook(root: Path, name: str, *images: str) -> str:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("plt.plot(xs, ys)", execution_count=1)
    cell["id"] = "plot"
    cell["outputs"] = [
        nbformat.v4.new_output("display_data", data={"image/png": image, "text/plain": "<Fig>"})
        for image in images
    ]
    nb.cells.append(cell)
    (root / name).write_text(nbformat.writes(nb), encoding="utf-8")
    return name


def openai_images(body: dict) -> list[tuple[int, int]]:
    """Pixel sizes of the image parts in a chat request (user messages only)."""
    sizes = []
    for message in body["messages"]:
        if isinstance(message.get("content"), list):
            assert message["role"] == "user"
            for part in message["content"]:
                if part["type"] == "image_url":
                    url = part["image_url"]["url"]
                    assert url.startswith("data:image/png;base64,")
                    sizes.append(_size(url.split(",", 1)[1]))
    return sizes


def ollama_images(body: dict) -> list[tuple[int, int]]:
    sizes = []
    for message in body["messages"]:
        if message.get("images"):
            assert message["role"] == "user"
            sizes.extend(_size(image) for image in message["images"])
    return sizes


def _size(data: str) -> tuple[int, int]:
    return Image.open(io.BytesIO(base64.b64decode(data))).size


async def ask_about_the_plot(api, path: str) -> dict:
    agent = Agent(api)
    await agent.start(path, "What does the plot show?", focus_cell_ids=["plot"])
    conversation = await agent.ended(path)
    assert conversation["turn"]["state"] == "done", notices(conversation)
    return conversation


class TestOpenAI:
    @pytest.fixture
    def loop_config(self, loop_model_server):
        return openai_config(loop_model_server, agent_model="scripted-vision")

    async def test_a_vision_model_gets_the_plot_shrunk(self, api, jp_root_dir, loop_model_server):
        path = plot_notebook(jp_root_dir, "plot.ipynb", png(2000, 1000))
        loop_model_server.script(say("A red square."))
        await ask_about_the_plot(api, path)
        (body,) = loop_model_server.bodies(OPENAI_CHAT)
        assert openai_images(body) == [(1024, 512)]
        journal = await Agent(api).journal(path)
        calls = [e["details"] for e in journal if e["action"] == "model_call"]
        assert calls[0]["images"] == 1

    async def test_a_refusal_falls_back_to_text_and_is_remembered(
        self, api, jp_root_dir, loop_model_server
    ):
        path = plot_notebook(jp_root_dir, "text.ipynb", png(640, 480))
        loop_model_server.script(say("A plot."), say("Still a plot."))
        agent = Agent(api)
        await agent.start(path, "What is it?", focus_cell_ids=["plot"], model="scripted-tools")
        await agent.ended(path)
        refused, retried = loop_model_server.bodies(OPENAI_CHAT)
        assert openai_images(refused) == [(640, 480)]
        assert openai_images(retried) == []
        assert "were not attached: the model does not take images" in prompt_text(retried)
        assert "[image/png 640×480" in prompt_text(retried)
        journal = await agent.journal(path)
        assert [e["details"]["model"] for e in journal if e["action"] == "images_refused"] == [
            "scripted-tools"
        ]

        await agent.start(path, "And now?", focus_cell_ids=["plot"], model="scripted-tools")
        await agent.ended(path)
        later = loop_model_server.bodies(OPENAI_CHAT)[2:]
        assert len(later) == 1 and openai_images(later[0]) == []  # no second refusal
        assert "[image/png 640×480" in prompt_text(later[0])


class TestBudget:
    @pytest.fixture
    def loop_config(self, loop_model_server):
        return openai_config(loop_model_server, agent_images_per_step=2)

    async def test_images_beyond_the_step_budget_are_described(
        self, api, jp_root_dir, loop_model_server
    ):
        path = plot_notebook(jp_root_dir, "many.ipynb", *(png(50, 40) for _ in range(4)))
        loop_model_server.script(say("Four plots."))
        agent = Agent(api)
        await agent.start(path, "Compare", focus_cell_ids=["plot"], model="scripted-vision")
        await agent.ended(path)
        (body,) = loop_model_server.bodies(OPENAI_CHAT)
        assert openai_images(body) == [(50, 40)] * 2
        assert "2 more images left out (at most 2 images" in prompt_text(body)


class TestOff:
    @pytest.fixture
    def loop_config(self, loop_model_server):
        return openai_config(loop_model_server, agent_model="scripted-vision", agent_images="off")

    async def test_no_images_when_switched_off(self, api, jp_root_dir, loop_model_server):
        path = plot_notebook(jp_root_dir, "off.ipynb", png(300, 200))
        loop_model_server.script(say("A plot."))
        await ask_about_the_plot(api, path)
        (body,) = loop_model_server.bodies(OPENAI_CHAT)
        assert openai_images(body) == []
        assert "[image/png 300×200" in prompt_text(body)


class TestOllama:
    @pytest.fixture
    def loop_config(self, loop_model_server):
        return {
            "agent_provider": "ollama",
            "ollama_host": loop_model_server.ollama_host,
            "agent_model": "scripted-vision",
            "agent_request_timeout": 5.0,
            "batch_interval": 0.01,
        }

    async def test_a_vision_model_gets_images_as_base64(self, api, jp_root_dir, loop_model_server):
        path = plot_notebook(jp_root_dir, "plot.ipynb", png(1500, 3000))
        loop_model_server.script(say("A tall plot."))
        await ask_about_the_plot(api, path)
        (body,) = loop_model_server.bodies(OLLAMA_CHAT)
        assert ollama_images(body) == [(512, 1024)]
        assert body["messages"][-1]["images"]  # on the live view, the last message

    async def test_a_text_only_model_gets_a_description(self, api, jp_root_dir, loop_model_server):
        path = plot_notebook(jp_root_dir, "text.ipynb", png(1500, 3000))
        loop_model_server.script(say("A plot."))
        agent = Agent(api)
        await agent.start(path, "What?", focus_cell_ids=["plot"], model="scripted-tools")
        await agent.ended(path)
        (body,) = loop_model_server.bodies(OLLAMA_CHAT)
        assert ollama_images(body) == []
        assert "[image/png 1500×3000" in prompt_text(body)


def test_unreadable_images_are_left_out_with_a_note() -> None:
    broken = ImageAttachment("image/png", base64.b64encode(b"not a png").decode())
    prepared = vision.ImageShrinker().prepare([broken], vision.ImageBudget())
    assert prepared.parts == () and prepared.notes == ("1 image could not be decoded",)


def test_the_byte_budget_counts_shrunk_images() -> None:
    big = ImageAttachment("image/png", png(4000, 4000))
    prepared = vision.ImageShrinker().prepare([big, big], vision.ImageBudget(count=9, bytes=1))
    assert prepared.parts == () and "2 more images left out" in prepared.notes[0]


def test_small_images_pass_unchanged() -> None:
    small = png(10, 10)
    (part,) = (
        vision.ImageShrinker()
        .prepare([ImageAttachment("image/png", small)], vision.ImageBudget())
        .parts
    )
    assert part.data == small
