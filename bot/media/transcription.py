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
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from bot.config.settings import Settings

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


class TranscriptionFailed(Exception):
    """The server could not transcribe; the message is one sentence for the sender."""


@dataclass(frozen=True)
class TranscriptionConfig:
    """Where transcriptions go, read from the settings."""

    model: str
    base_url: str | None
    api_key: str | None

    @classmethod
    def from_settings(cls, settings: Settings) -> TranscriptionConfig | None:
        """The configuration, or None when transcription is off."""
        if not settings.transcribe_base_url and not settings.openai_api_key:
            return None
        return cls(settings.transcribe_model,
                   settings.transcribe_base_url or settings.openai_base_url,
                   settings.openai_api_key)

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


class Transcriber:
    """Sends audio to the configured server through the ``openai`` SDK."""

    def __init__(self, config: TranscriptionConfig, *, timeout: float = TIMEOUT_S) -> None:
        self.config = config
        self.timeout = timeout
        self._client: Any = None

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
        try:
            result = await self._sdk_client().audio.transcriptions.create(
                model=self.config.model, file=(name, data, mime_type or "audio/ogg"))
        except openai.APIStatusError as exc:
            log.warning("transcription refused: HTTP %s", exc.status_code)
            raise TranscriptionFailed(
                f"The transcription server refused this recording (HTTP {exc.status_code})."
            ) from None
        except openai.OpenAIError as exc:  # connection errors and time-outs
            log.warning("transcription failed: %s", type(exc).__name__)
            raise TranscriptionFailed("The transcription server could not be reached.") \
                from None
        text = getattr(result, "text", result if isinstance(result, str) else "")
        return " ".join(str(text or "").split())

    async def aclose(self) -> None:
        """Close the SDK's HTTP connections, if a client was ever built."""
        if self._client is not None:
            await self._client.close()


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
