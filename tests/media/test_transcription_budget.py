"""Transcription inside the hard daily budget: each upload's worst case is held before it is
sent and becomes its real cost after; past the budget nothing is sent and the sender gets the
budget's sentence. The real ``openai`` SDK against the loopback fake OpenAI server."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config.settings import Settings
from bot.media.transcription import (
    Transcriber,
    TranscriptionConfig,
    TranscriptionFailed,
    silence_wav,
)
from bot.models.costs import SpendLog, load_prices
from tests.fakes.openai_server import FakeOpenAIServer

ONE_MINUTE = 0.006  # whisper-1 in the shipped prices.toml
MINUTE_WAV = silence_wav(60.0, rate=4000)
HALF_MINUTE_WAV = silence_wav(30.0, rate=4000)


def settings_for(home: Path, fake: FakeOpenAIServer, budget: str) -> Settings:
    return Settings.from_env({"FRONTDESK_HOME": str(home), "OPENAI_API_KEY": "sk-test",
                              "OPENAI_BASE_URL": fake.base_url,
                              "FRONTDESK_DAILY_BUDGET_USD": budget})


async def test_the_shipped_prices_know_the_transcription_models(tmp_path: Path) -> None:
    prices = load_prices(Settings.from_env({"FRONTDESK_HOME": str(tmp_path)}))
    assert prices.audio_cost("whisper-1", 60) == pytest.approx(ONE_MINUTE)
    assert prices.audio_cost("gpt-4o-mini-transcribe", 120) == pytest.approx(0.006)
    assert prices.audio_cost("small.en", 600) == 0.0  # a local model costs nothing


async def test_a_transcription_is_held_then_recorded_at_its_cost(tmp_path: Path) -> None:
    async with FakeOpenAIServer() as fake:
        settings = settings_for(tmp_path, fake, "1.00")
        config = TranscriptionConfig.from_settings(settings)
        assert config is not None
        transcriber = Transcriber(config)
        try:
            text = await transcriber.transcribe(HALF_MINUTE_WAV, "voice.wav", "audio/wav")
        finally:
            await transcriber.aclose()
    assert text == fake.transcript_text and len(fake.transcriptions) == 1
    spend = SpendLog.open(settings)
    assert spend.held() == 0.0  # the hold became the call
    [(provider, model, calls, _, _, usd)] = spend.by_model()
    assert (provider, model, calls) == ("transcription", "whisper-1", 1)
    assert usd == pytest.approx(ONE_MINUTE / 2)  # thirty seconds of audio


async def test_past_the_budget_nothing_is_sent_and_the_sender_is_told(tmp_path: Path) -> None:
    async with FakeOpenAIServer() as fake:
        settings = settings_for(tmp_path, fake, "0.02")
        config = TranscriptionConfig.from_settings(settings)
        assert config is not None
        transcriber = Transcriber(config)
        try:
            for _ in range(3):  # three minutes fit in two cents; the fourth does not
                await transcriber.transcribe(MINUTE_WAV, "voice.wav", "audio/wav")
            for _ in range(45):
                with pytest.raises(TranscriptionFailed) as refused:
                    await transcriber.transcribe(MINUTE_WAV, "voice.wav", "audio/wav")
                assert "budget" in str(refused.value) and "resume tomorrow" in str(refused.value)
        finally:
            await transcriber.aclose()
    assert len(fake.transcriptions) == 3  # no request past the cap
    spend = SpendLog.open(settings)
    assert spend.spent() == pytest.approx(3 * ONE_MINUTE) and spend.held() == 0.0


async def test_a_recording_of_unknown_length_is_held_at_its_bytes_worst_case(
        tmp_path: Path) -> None:
    async with FakeOpenAIServer() as fake:
        settings = settings_for(tmp_path, fake, "0.01")
        config = TranscriptionConfig.from_settings(settings)
        assert config is not None
        transcriber = Transcriber(config)
        try:  # 2 MB of Opus could be 44 minutes: more than a cent at whisper-1's price
            with pytest.raises(TranscriptionFailed):
                await transcriber.transcribe(b"OggS" + bytes(2_000_000), "voice.oga",
                                             "audio/ogg")
        finally:
            await transcriber.aclose()
    assert fake.transcriptions == []
