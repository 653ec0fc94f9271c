"""Voice and audio to text through an OpenAI-compatible ``POST /v1/audio/transcriptions``.

The ``openai`` SDK makes the call (imported on first use), so OpenAI's own Whisper and any
local server that speaks the same API (faster-whisper-server, whisper.cpp's server, LocalAI)
work alike. ``FRONTDESK_TRANSCRIBE_MODEL`` (default ``whisper-1``) names the model,
``FRONTDESK_TRANSCRIBE_BASE_URL`` the server (else ``OPENAI_BASE_URL``), the key is
``OPENAI_API_KEY`` (a local server needs none). Transcription is on when
``FRONTDESK_TRANSCRIBE_BASE_URL`` or ``OPENAI_API_KEY`` is set.

The API picks the decoder by the upload's file name, so the name always carries an extension
it accepts: Telegram's ``.oga`` voice notes go as ``.ogg``. ``check_transcription(settings)``
sends a quarter second of silence and says whether the server answered (for a doctor check).

Transcription counts in the daily budget (``FRONTDESK_DAILY_BUDGET_USD``) like a model call:
before the upload, the audio's worst-case cost (its length: exact for WAV, else bounded from
its bytes at the lowest bitrate a voice codec uses, priced per minute from ``prices.toml``'s
``[transcription]`` table) is held in the spend log; past the budget nothing is sent and the
sender gets the budget's usual sentence. The hold then becomes the real cost, from the
seconds the server says it heard (else the bound), or is released when the server refused.
"""

from __future__ import annotations

import io
import logging
import math
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from bot.config.settings import Settings
from bot.models.costs import OverBudget, PriceTable, SpendLog, load_prices
from bot.models.guarded import refusal_sentence

log = logging.getLogger(__name__)

ACCEPTED_SUFFIXES = {".flac", ".mp3", ".mp4", ".mpeg", ".mpga", ".m4a", ".ogg", ".wav",
                     ".webm"}
SUFFIX_FOR_MIME = {"audio/ogg": ".ogg", "audio/opus": ".ogg", "audio/mpeg": ".mp3",
                   "audio/mp3": ".mp3", "audio/mp4": ".m4a", "audio/x-m4a": ".m4a",
                   "audio/m4a": ".m4a", "audio/aac": ".m4a", "audio/wav": ".wav",
                   "audio/x-wav": ".wav", "audio/wave": ".wav", "audio/webm": ".webm",
                   "audio/flac": ".flac", "audio/x-flac": ".flac", "video/mp4": ".mp4"}
RENAMED_SUFFIXES = {".oga": ".ogg", ".opus": ".ogg", ".aac": ".m4a"}
NOT_CONFIGURED = ("I can't listen to voice notes yet: transcription is off. The owner can "
                  "turn it on by setting OPENAI_API_KEY, or FRONTDESK_TRANSCRIBE_BASE_URL "
                  "to a local Whisper server that speaks the OpenAI API. Meanwhile, please "
                  "type your message.")
TIMEOUT_S = 120.0
# The fewest bytes a second of speech takes (Opus at 6 kbit/s): an upload's length is at most
# its bytes over this, whatever its header claims.
MIN_BYTES_PER_S = 750


class TranscriptionFailed(Exception):
    """The server could not transcribe; the message is one sentence for the sender."""


@dataclass(frozen=True)
class TranscriptionConfig:
    """Where transcriptions go, read from the settings."""

    model: str
    base_url: str | None
    api_key: str | None
    # Where the daily budget and the prices live (None: transcription is not counted).
    settings: Settings | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings) -> TranscriptionConfig | None:
        """The configuration, or None when transcription is off."""
        if not settings.transcribe_base_url and not settings.openai_api_key:
            return None
        return cls(settings.transcribe_model,
                   settings.transcribe_base_url or settings.openai_base_url,
                   settings.openai_api_key, settings)

    def describe(self) -> str:
        """One line for the owner: which model on which server (never the key)."""
        return f"{self.model} at {self.base_url or 'OpenAI'}"


def upload_name(file_name: str, mime_type: str) -> str:
    """A file name whose extension the transcription API accepts."""
    path = PurePosixPath(PurePosixPath(file_name).name or "audio")
    suffix = RENAMED_SUFFIXES.get(path.suffix.lower(), path.suffix.lower())
    if suffix not in ACCEPTED_SUFFIXES:
        suffix = SUFFIX_FOR_MIME.get(mime_type.split(";")[0].strip().lower(), ".ogg")
    stem = "".join(c for c in path.stem if c.isalnum() or c in "-_")[:40] or "audio"
    return stem + suffix


def audio_seconds_bound(data: bytes) -> float:
    """At most this many seconds of audio: a WAV's own length, else from its bytes."""
    import wave  # here: stdlib, and only a WAV upload needs it

    try:
        with wave.open(io.BytesIO(data), "rb") as sound:
            rate = sound.getframerate()
            return min(sound.getnframes() / rate, len(data) / MIN_BYTES_PER_S) if rate else 0.0
    except (wave.Error, EOFError, ValueError):
        return math.ceil(len(data) / MIN_BYTES_PER_S)


class Transcriber:
    """Sends audio to the configured server through the ``openai`` SDK, inside the budget."""

    def __init__(self, config: TranscriptionConfig, *, timeout: float = TIMEOUT_S,
                 spend_log: SpendLog | None = None, prices: PriceTable | None = None) -> None:
        self.config = config
        self.timeout = timeout
        self._client: Any = None
        self._spend_log = spend_log
        self._prices = prices
        self._budget = config.settings.daily_budget_usd if config.settings else None

    def _spending(self) -> tuple[SpendLog, PriceTable] | None:
        """The spend log and prices (opened on first use), or None when not counted."""
        if self._spend_log is None and self.config.settings is not None:
            self._spend_log = SpendLog.open(self.config.settings)
        if self._prices is None and self.config.settings is not None:
            self._prices = load_prices(self.config.settings)
        if self._spend_log is None or self._prices is None:
            return None
        return self._spend_log, self._prices

    def _sdk_client(self) -> Any:
        if self._client is None:
            import openai

            from bot.models.openai import LOCAL_PLACEHOLDER_KEY

            self._client = openai.AsyncOpenAI(
                api_key=self.config.api_key or LOCAL_PLACEHOLDER_KEY,
                base_url=self.config.base_url, timeout=self.timeout, max_retries=1)
        return self._client

    async def transcribe(self, data: bytes, file_name: str, mime_type: str) -> str:
        """The spoken text; ``TranscriptionFailed`` with a sentence when it cannot be had."""
        import openai

        name = upload_name(file_name, mime_type)
        spending = self._spending()
        model, bound = self.config.model, audio_seconds_bound(data)
        hold = None
        if spending is not None:
            spend_log, prices = spending
            try:
                hold = spend_log.reserve(usd=prices.audio_cost(model, bound),
                                         budget_usd=self._budget, provider="transcription",
                                         model=model, role="transcribe", purpose="transcribe")
            except OverBudget as over:
                log.warning("transcription refused by the daily budget: %s", over)
                raise TranscriptionFailed(refusal_sentence(over)) from None
        try:
            result = await self._sdk_client().audio.transcriptions.create(
                model=model, file=(name, data, mime_type or "audio/ogg"))
        except openai.APIStatusError as exc:
            if hold is not None and spending is not None:
                spending[0].release(hold)  # answered with an error: nothing was heard
            log.warning("transcription refused: HTTP %s", exc.status_code)
            raise TranscriptionFailed(
                f"The transcription server refused this recording (HTTP {exc.status_code})."
            ) from None
        except openai.OpenAIError as exc:  # connection errors and time-outs: the hold stays
            log.warning("transcription failed: %s", type(exc).__name__)
            raise TranscriptionFailed("The transcription server could not be reached.") \
                from None
        if hold is not None and spending is not None:
            seconds = min(heard_seconds(result) or bound, bound)
            spending[0].settle(hold, provider="transcription", model=model, role="transcribe",
                               purpose="transcribe", input_tokens=0, output_tokens=0,
                               cost_usd=spending[1].audio_cost(model, seconds))
        text = getattr(result, "text", result if isinstance(result, str) else "")
        return " ".join(str(text or "").split())

    async def aclose(self) -> None:
        """Close the SDK's HTTP connections, if a client was ever built."""
        if self._client is not None:
            await self._client.close()


def heard_seconds(result: Any) -> float | None:
    """The seconds of audio the server says it transcribed (``usage`` or ``duration``)."""
    usage = getattr(result, "usage", None)
    seconds = getattr(usage, "seconds", None) if usage is not None else None
    if seconds is None:
        seconds = getattr(result, "duration", None)
    try:
        return float(seconds) if seconds is not None else None
    except (TypeError, ValueError):
        return None


def silence_wav(seconds: float = 0.25, rate: int = 16_000) -> bytes:
    """A short silent WAV: the smallest honest test of a transcription server."""
    import wave  # here: only the doctor's check needs it

    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(rate)
        sound.writeframes(b"\0\0" * int(seconds * rate))
    return out.getvalue()


async def check_transcription(settings: Settings, *, timeout: float = 15.0) -> tuple[bool, str]:
    """(ok, one line) for ``frontdesk doctor``: off, or whether the server transcribes."""
    config = TranscriptionConfig.from_settings(settings)
    if config is None:
        return False, ("transcription is off: set OPENAI_API_KEY or "
                       "FRONTDESK_TRANSCRIBE_BASE_URL to hear voice notes")
    transcriber = Transcriber(config, timeout=timeout)
    try:
        await transcriber.transcribe(silence_wav(), "check.wav", "audio/wav")
    except TranscriptionFailed as failed:
        return False, f"transcription with {config.describe()} failed: {failed}"
    finally:
        await transcriber.aclose()
    return True, f"transcription works ({config.describe()})"
