"""Every model call has a time-out (FRONTDESK_MODEL_TIMEOUT): a hung provider is given up on."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bot.config.settings import Settings
from bot.models import GuardedModel, build_models
from bot.models.anthropic import AnthropicClient
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer, hung_reply
from tests.support.models import Events, SleepRecorder, openai_model

TIMEOUT = 0.3


async def test_a_hung_provider_is_given_up_within_two_time_outs_and_offline_answers(
        sleeps: SleepRecorder, events: Events) -> None:
    async with FakeOpenAIServer() as server:
        server.responder = lambda request: hung_reply()  # takes every request, answers none
        model = openai_model(server, sleeps, timeout=TIMEOUT, attempts=3)
        started = time.monotonic()
        reply = await model.complete([{"role": "user", "content": "hello?"}], observer=events)
        took = time.monotonic() - started
        await model.aclose()
    assert reply.provider == "offline"
    assert reply.text.startswith("The OpenAI-compatible API timed out. The offline assistant "
                                 "answered instead:")
    # a time-out is transient once: two attempts, one backoff, however many the policy allows
    assert len(server.requests) == 2 and sleeps.delays == [0.5]
    assert took < TIMEOUT * 2 + 1.0
    assert events.of("model_call")[0]["error"] == "The OpenAI-compatible API timed out."


def test_the_time_out_is_read_from_the_environment(tmp_path: Path) -> None:
    home = {"FRONTDESK_HOME": str(tmp_path)}
    assert Settings.from_env(home).model_timeout == 60.0
    assert Settings.from_env({**home, "FRONTDESK_MODEL_TIMEOUT": "2.5"}).model_timeout == 2.5
    for bad in ("soon", "0", "-3", "inf", "nan"):
        with pytest.raises(ValueError, match=r"^FRONTDESK_MODEL_TIMEOUT=.*: expected a number "
                                             r"of seconds above 0, e.g. 60$"):
            Settings.from_env({**home, "FRONTDESK_MODEL_TIMEOUT": bad})


async def test_every_model_gets_the_time_out_and_no_sdk_retries(
        tmp_path: Path, anthropic_server: FakeAnthropicServer) -> None:
    settings = Settings.from_env({"FRONTDESK_HOME": str(tmp_path), "ANTHROPIC_API_KEY": "k",
                                  "ANTHROPIC_BASE_URL": anthropic_server.base_url,
                                  "FRONTDESK_MODEL_TIMEOUT": "7"})
    models = build_models(settings)
    for model in (models.small, models.big):
        assert isinstance(model, GuardedModel) and isinstance(model.client, AnthropicClient)
        assert model.client.timeout == 7.0
        sdk = model.client._sdk_client()
        assert (sdk.max_retries, sdk.timeout) == (0, 7.0)  # our retry layer is the only one
        await model.aclose()
