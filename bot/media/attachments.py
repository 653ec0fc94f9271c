"""A message's files made into what the workflows read: text, transcripts and image paths.

``Attachments.prepare(msg, source)`` runs before triage, once per message, inside the
message's deadline:

* each part's declared size is checked against ``FRONTDESK_MAX_FILE_MB`` before anything is
  fetched; a kind Frontdesk does not read (sticker, location, contact, poll, video) is not
  fetched at all;
* a part is fetched through the platform's adapter (``FileSource``) at most once: the bytes
  are kept under ``FRONTDESK_HOME/attachments/<message key>/`` until the message is answered
  (``discard``), so a restart in between does not fetch again (nor transcribe again: the
  transcript is kept beside the audio);
* photos are downscaled (``bot.media.images``) and passed to the big model as image paths; voice
  and audio become their transcript (``bot.media.transcription``), which is the message text from
  then on; documents become their text (``bot.media.documents``) with the caption as the request;
* whatever is decoded (documents, photos) is decoded in a worker process (``bot.media.workers``),
  never on the event loop: killed past ``READ_SECONDS`` or at the message's deadline, limited in
  memory, so a hostile file costs one sentence to its sender and nothing to anyone else.

When nothing in a message can be used, ``Prepared.answer`` is the one short reply saying what
the bot can take. Stored files are named by their position, never by the sender's file name,
and the sender's names are shown as escaped text only.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from bot.config.disk import disk_full
from bot.config.settings import Settings
from bot.config.text import escape_markdown, one_line, one_name
from bot.media.documents import (
    READABLE,
    DocumentText,
    UnreadableDocument,
    extract_text,
    is_document,
)
from bot.media.images import PreparedImage, UnreadableImage, prepare_image
from bot.media.transcription import (
    NOT_CONFIGURED,
    Transcriber,
    TranscriptionConfig,
    TranscriptionFailed,
)
from bot.messages import READABLE_KINDS, Attachment, IncomingMessage
from bot.models.costs import SpendLog

if TYPE_CHECKING:
    from bot.media.workers import WorkerPool

log = logging.getLogger(__name__)

NO_CAPTION_REQUEST = "Please summarise this document."
PHOTO_WITHOUT_CAPTION = "[a photo, sent without a caption]"
ECHO_CHARS = 300  # the transcript shown back to the sender is cut here
CANT_TAKE = {"video": "videos", "sticker": "stickers", "location": "locations",
             "contact": "contacts", "poll": "polls", "other": "this kind of message"}
READ_SECONDS = 30.0  # one document or photo decoded; a worker past this is killed


class FileTooLarge(Exception):
    """A file over the limit, found out while fetching (the platform did not declare it, or
    declared less): ``size`` is the size it turned out to have, None when not known (the
    download was stopped at the limit)."""

    def __init__(self, size: int | None) -> None:
        super().__init__(f"{size} bytes" if size is not None else "over the limit")
        self.size = size


@runtime_checkable
class FileSource(Protocol):
    """What an adapter offers to fetch a message's files through its platform's client."""

    async def fetch_attachment(self, attachment: Attachment, max_bytes: int) -> bytes:
        """The file's bytes; ``FileTooLarge`` when it turns out to exceed ``max_bytes``."""
        ...


def can_take(max_mb: float) -> str:
    """The sentence that says what the bot can take."""
    return (f"I can take text, photos, voice notes and audio, and {READABLE}, up to "
            f"{max_mb:g} MB each.")


@dataclass
class Prepared:
    """What a message with attachments became."""

    text: str  # the message text from now on (history, trace and triage see this)
    caption: str  # what triage classifies on (the transcript, for a voice note)
    images: list[dict[str, str]] = field(default_factory=list)  # {"media_type", "path"}
    heard: list[str] = field(default_factory=list)  # transcripts, echoed in the reply
    notes: list[str] = field(default_factory=list)  # parts skipped, and why
    answer: str | None = None  # set when nothing could be used: the whole reply
    route: str = "refused"  # the answer's route ("failed" when worth sending again)

    def state(self) -> dict[str, Any]:
        """The keys a new run's input gets besides the text."""
        return {"caption": self.caption, "images": list(self.images)}

    def framed(self, reply: str, platform: str) -> str:
        """The reply with what was heard and what was skipped above it."""
        show: Callable[[str], str] = (lambda s: s) if platform == "console" else escape_markdown
        lines = [f'🎤 "{show(one_line(heard, ECHO_CHARS))}"' for heard in self.heard]
        lines += self.notes
        return "\n".join([*lines, "", reply]) if lines else reply


class Attachments:
    """The attachment pipeline over one directory (see the module docstring)."""

    def __init__(self, root: Path, max_mb: float, transcriber: Transcriber | None, *,
                 workers: WorkerPool | None = None, read_seconds: float = READ_SECONDS) -> None:
        self.root = root
        self.max_mb = max_mb
        self.max_bytes = int(max_mb * 1024 * 1024)
        self.transcriber = transcriber
        self.read_seconds = read_seconds
        self._workers = workers  # the process's shared pool unless given

    @property
    def workers(self) -> WorkerPool:
        """The worker processes files are decoded in (started at the first file)."""
        if self._workers is None:
            from bot.media.workers import shared_pool  # here: a text-only bot starts none

            self._workers = shared_pool()
        return self._workers

    @classmethod
    def from_settings(cls, settings: Settings,
                      spend_log: SpendLog | None = None) -> Attachments:
        """Files under ``FRONTDESK_HOME/attachments``; transcription when it is configured,
        its calls held against the budget in ``spend_log`` (the process's; else its own)."""
        config = TranscriptionConfig.from_settings(settings)
        return cls(settings.home / "attachments", settings.max_file_mb,
                   Transcriber(config, spend_log=spend_log) if config is not None else None)

    def folder(self, msg: IncomingMessage) -> Path:
        """Where this message's files are kept (named by a hash: nothing the sender chose)."""
        key = f"{msg.platform}|{msg.chat_id}|{msg.message_id}".encode()
        return self.root / hashlib.sha256(key).hexdigest()[:24]

    def discard(self, msg: IncomingMessage) -> None:
        """The message is answered: its files are not needed any more."""
        if msg.attachments:
            shutil.rmtree(self.folder(msg), ignore_errors=True)

    async def prepare(self, msg: IncomingMessage, source: object) -> Prepared:
        """Fetch, check and read every part of ``msg`` (see the module docstring)."""
        show = (lambda s: s) if msg.platform == "console" else escape_markdown
        caption = msg.text.strip()
        done = Prepared(text=caption, caption=caption)
        documents: list[str] = []
        failed_transcription: str | None = None
        for index, part in enumerate(msg.attachments):
            name = show(one_name(part.file_name)) if part.file_name else f"that {part.kind}"
            if part.kind not in READABLE_KINDS:
                done.notes.append(f"I can't take {CANT_TAKE.get(part.kind, CANT_TAKE['other'])}"
                                  " yet, so I skipped it.")
                continue
            if part.size is not None and part.size > self.max_bytes:
                done.notes.append(self._too_big(name, part.size))
                continue
            if part.kind in {"voice", "audio"} and self.transcriber is None:
                done.notes.append(NOT_CONFIGURED)
                continue
            if part.kind == "document" and not is_document(part.file_name, part.mime_type):
                done.notes.append(_unreadable_document(part, name))
                continue
            def fetch(index: int = index, part: Attachment = part) -> Awaitable[bytes]:
                return self._fetch(msg, index, part, source)

            try:
                if part.kind == "photo":
                    done.images.append(await self._image(msg, index, fetch))
                elif part.kind == "document":
                    documents.append(await self._document(part, await fetch()))
                else:
                    done.heard.append(await self._transcript(msg, index, part, fetch))
            except FileTooLarge as big:
                done.notes.append(self._too_big(name, big.size))
            except (UnreadableImage, UnreadableDocument) as unreadable:
                done.notes.append(str(unreadable))
            except TranscriptionFailed as failed:
                failed_transcription = str(failed)
            except Exception as exc:  # a fetch or a decoder that failed: skipped, visibly
                if disk_full(exc):  # not the file's fault: the turn waits for room, whole
                    raise
                stopped = _worker_failure(exc, name)
                if stopped is not None:
                    done.notes.append(stopped)
                    continue
                log.warning("fetching a %s attachment of %s/%s failed: %s", part.kind,
                            msg.platform, msg.message_id, type(exc).__name__)
                done.notes.append(f"I couldn't download {name}; please send it again.")
        return self._compose(done, documents, failed_transcription)

    def _compose(self, done: Prepared, documents: list[str],
                 failed_transcription: str | None) -> Prepared:
        heard = [text for text in done.heard if text]
        if done.heard and not heard:
            done.notes.append("I couldn't hear any words in that recording.")
        done.heard = heard
        if failed_transcription is not None:
            done.notes.append(f"I couldn't transcribe your recording: {failed_transcription} "
                              "Please send it again in a moment, or type it.")
        if heard:
            done.text = "\n\n".join([done.text, *heard] if done.text else heard)
            done.caption = done.text
        if documents:
            request = done.text or NO_CAPTION_REQUEST
            done.text = "\n\n".join([request, *documents])
        if done.images and not done.text:
            done.text = PHOTO_WITHOUT_CAPTION
        if not (heard or documents or done.images) and not done.caption:
            menu = failed_transcription is None and NOT_CONFIGURED not in done.notes
            done.answer = " ".join([*done.notes, can_take(self.max_mb) if menu else ""]).strip()
            done.route = "failed" if failed_transcription else "refused"
        return done

    def _too_big(self, name: str, size: int | None) -> str:
        if size is None:  # stopped at the limit: how big it really is was not worth learning
            return f"{name} is too big for me (I take files up to {self.max_mb:g} MB)."
        return (f"{name} is too big for me ({size / 1024 / 1024:.1f} MB; I take files up to "
                f"{self.max_mb:g} MB).")

    async def _fetch(self, msg: IncomingMessage, index: int, part: Attachment,
                     source: object) -> bytes:
        """The part's bytes: from the message's folder when fetched before, else fetched."""
        path = self.folder(msg) / f"{index}.file"
        if path.exists():
            return path.read_bytes()
        if not isinstance(source, FileSource):
            raise LookupError(f"the {msg.platform} adapter cannot fetch files")
        data = await source.fetch_attachment(part, self.max_bytes)
        if len(data) > self.max_bytes:
            raise FileTooLarge(len(data))
        _write(path, data)
        return data

    async def _image(self, msg: IncomingMessage, index: int,
                     fetch: Callable[[], Awaitable[bytes]]) -> dict[str, str]:
        """The photo as sent to the model: made once (after a restart it is there already)."""
        made = next(self.folder(msg).glob(f"{index}.view.*"), None)
        if made is not None:
            return {"media_type": "image/" + made.suffix[1:], "path": str(made)}
        image: PreparedImage = await self.workers.run(prepare_image, await fetch(),
                                                      seconds=self.read_seconds)
        path = self.folder(msg) / f"{index}.view.{image.media_type.split('/')[1]}"
        _write(path, image.data)
        return {"media_type": image.media_type, "path": str(path)}

    async def _transcript(self, msg: IncomingMessage, index: int, part: Attachment,
                          fetch: Callable[[], Awaitable[bytes]]) -> str:
        """The recording's words: heard once (after a restart they are there already)."""
        path = self.folder(msg) / f"{index}.transcript.txt"
        if path.exists():
            return path.read_text(encoding="utf-8")
        assert self.transcriber is not None
        text = await self.transcriber.transcribe(await fetch(),
                                                 part.file_name or f"{part.kind}.ogg",
                                                 part.mime_type)
        _write(path, text.encode("utf-8"))
        return text


    async def _document(self, part: Attachment, data: bytes) -> str:
        """The document's text as the agent reads it, with a line saying what it is."""
        found: DocumentText = await self.workers.run(
            extract_text, data, part.file_name, part.mime_type, seconds=self.read_seconds)
        pages = f", {found.pages:,} page{'s' * (found.pages != 1)}" if found.pages else ""
        block = [f"[Document {one_name(part.file_name) or '(no name)'} ({found.kind}{pages}), "
                 "its text:]", found.text]
        if found.cut:
            block.append(_cut_line(found))
        return "\n".join(block)


def _unreadable_document(part: Attachment, name: str) -> str:
    return f"I can't read {name}: I can read {READABLE}."


def _cut_line(found: DocumentText) -> str:
    """The line under a document's text saying what was left out."""
    shown = f"only the first {len(found.text):,} characters are shown"
    if found.total_chars is not None:
        return (f"[The text was cut here: the document has {found.total_chars:,} "
                f"characters and only the first {len(found.text):,} are shown.]")
    if found.pages and found.pages_read is not None and found.pages_read < found.pages:
        return (f"[The text was cut here: I read pages 1 to {found.pages_read} of "
                f"{found.pages:,}, and {shown}.]")
    return f"[The text was cut here: the document is longer, and {shown}.]"


def _worker_failure(exc: Exception, name: str) -> str | None:
    """The sentence for a file whose decoding was stopped, or None for another failure."""
    from bot.media.workers import WorkerFailed  # loaded already: a worker raised this

    if not isinstance(exc, WorkerFailed):
        return None
    if exc.reason == "time":
        return (f"I stopped reading {name}: it took too long. Please send a smaller file, "
                "or paste the text.")
    if exc.reason == "memory":
        return (f"I stopped reading {name}: it needs more memory than I allow. Please send "
                "a smaller file.")
    return f"I couldn't read {name}; please send it again."


def _write(path: Path, data: bytes) -> None:
    """Write a file whole or not at all (a crash leaves no half file to be read back)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    try:
        partial.write_bytes(data)
        os.replace(partial, path)
    except BaseException:  # a full disk: no half file is left behind either
        partial.unlink(missing_ok=True)
        raise
