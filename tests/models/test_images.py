"""Image blocks in both providers (the real SDKs against the fakes), models without vision,
and the offline model's answer to a photo."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.media.images import prepare_image
from bot.models.anthropic import AnthropicClient
from bot.models.base import IMAGE_GONE
from bot.models.costs import Price, PriceTable
from bot.models.guarded import GuardedModel, ProviderClient
from bot.models.offline import OfflineModel
from bot.models.openai import OpenAIClient
from bot.models.vision import IMAGE_LEFT_OUT, NO_VISION, OFFLINE_IMAGES
from graphs import RetryPolicy
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer, error_reply
from tests.support.files import photo

PRICES = PriceTable({"gpt-4.1-mini": Price(0.40, 1.60), "claude-haiku-4-5": Price(1.0, 5.0)})


async def no_sleep(seconds: float) -> None:
    """The retry layer's pause, skipped."""


def guarded(client: ProviderClient) -> GuardedModel:
    return GuardedModel(client, role="big", prices=PRICES, sleep=no_sleep,
                        policy=RetryPolicy(max_attempts=2, delay=0.01))


@pytest.fixture
async def openai_fake() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def picture(tmp_path: Path) -> dict[str, Any]:
    """A prepared PNG on disk, as the attachment pipeline leaves it, and its bytes."""
    prepared = prepare_image(photo(40, 30, "PNG"))
    path = tmp_path / "0.view.png"
    path.write_bytes(prepared.data)
    return {"media_type": prepared.media_type, "path": str(path), "data": prepared.data}


def asking(picture: dict[str, Any], text: str = "What is this?") -> list[dict[str, Any]]:
    return [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": text, "images": [
                {"media_type": picture["media_type"], "path": picture["path"]}]}]


async def test_anthropic_gets_a_base64_image_block_before_the_text(
        picture: dict[str, Any]) -> None:
    async with FakeAnthropicServer() as server:
        model = guarded(AnthropicClient(name="claude-haiku-4-5", api_key="k",
                                        base_url=server.base_url))
        reply = await model.complete(asking(picture))
        await model.aclose()
        assert server.images == [{"media_type": "image/png", "data": picture["data"]}]
        [user] = server.requests[0].json["messages"]
    assert [block["type"] for block in user["content"]] == ["image", "text"]
    assert reply.text == "fake reply"


async def test_openai_gets_an_image_url_part_with_a_data_url(
        openai_fake: FakeOpenAIServer, picture: dict[str, Any]) -> None:
    model = guarded(OpenAIClient(name="gpt-4.1-mini", api_key="k",
                                 base_url=openai_fake.base_url))
    await model.complete(asking(picture))
    await model.aclose()
    assert openai_fake.images == [{"media_type": "image/png", "data": picture["data"]}]
    user = openai_fake.requests[0].json["messages"][1]
    assert user["content"][0] == {"type": "text", "text": "What is this?"}


async def test_a_model_that_refuses_images_is_asked_again_without_them_and_says_so(
        openai_fake: FakeOpenAIServer, picture: dict[str, Any]) -> None:
    model = guarded(OpenAIClient(name="llava-less", api_key=None,
                                 base_url=openai_fake.base_url))
    openai_fake.enqueue(error_reply(400, "image input is not supported by this model"))
    first = await model.complete(asking(picture))
    assert first.text == f"{NO_VISION}\n\nfake reply"
    refused, retried = openai_fake.requests
    assert isinstance(refused.json["messages"][1]["content"], list)
    assert retried.json["messages"][1]["content"] == f"{IMAGE_LEFT_OUT}\nWhat is this?"
    second = await model.complete(asking(picture, "And this?"))  # learned: no image attempt
    await model.aclose()
    assert second.text.startswith(NO_VISION)
    assert len(openai_fake.requests) == 3 and openai_fake.images == [
        {"media_type": "image/png", "data": picture["data"]}]


async def test_an_image_whose_file_is_gone_is_sent_as_a_line_of_text(
        openai_fake: FakeOpenAIServer, picture: dict[str, Any]) -> None:
    Path(picture["path"]).unlink()
    model = guarded(OpenAIClient(name="gpt-4.1-mini", api_key="k",
                                 base_url=openai_fake.base_url))
    await model.complete(asking(picture))
    await model.aclose()
    parts = openai_fake.requests[0].json["messages"][1]["content"]
    assert parts[1] == {"type": "text", "text": IMAGE_GONE}


async def test_offline_says_it_cannot_look_and_still_does_what_the_caption_asks(
        picture: dict[str, Any]) -> None:
    offline = OfflineModel(role="big")
    plain = await offline.complete(asking(picture, "hello there"))
    assert plain.text.startswith(f"{OFFLINE_IMAGES} I'm running in offline mode")
    without = await offline.complete([{"role": "user", "content": "hello there"}])
    assert not without.text.startswith(OFFLINE_IMAGES)
