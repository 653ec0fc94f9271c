"""Text out of a document: PDF pages with pypdf, text-like files decoded, HTML reduced to text.

``extract_text(data, file_name, mime_type)`` gives a ``DocumentText`` (capped at
``MAX_DOCUMENT_CHARS``, saying so when cut) or raises ``UnreadableDocument`` with one sentence
for the sender: a password-protected or broken PDF, a scan with no text in it, a kind of file
we do not read. HTML is reduced with the standard library's ``html.parser`` (scripts and styles
dropped), which is all "the text of a web page" needs.

The caps apply while reading, not after: a PDF is read page by page until ``MAX_PDF_PAGES``
pages or more than ``MAX_DOCUMENT_CHARS`` characters, an HTML page until it has more visible
text than that (the rest is never parsed); a plain text file is decoded whole, which costs no
more than its size (``FRONTDESK_MAX_FILE_MB``). ``bot.media.attachments`` runs
``extract_text`` in a worker process (``bot.media.workers``) with limits on time and memory.
"""

from __future__ import annotations

import codecs
import io
import logging
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

log = logging.getLogger(__name__)

MAX_DOCUMENT_CHARS = 30_000
MAX_PDF_PAGES = 200  # pages looked at; a longer PDF is read from its beginning
TEXT_SUFFIXES = {".txt": "text", ".md": "markdown", ".markdown": "markdown", ".csv": "csv",
                 ".json": "json", ".ics": "calendar", ".html": "html", ".htm": "html"}
TEXT_MIME_TYPES = {"text/plain": ".txt", "text/markdown": ".md", "text/csv": ".csv",
                   "application/json": ".json", "text/calendar": ".ics", "text/html": ".html",
                   "text/x-markdown": ".md"}
READABLE = "PDFs and text files (txt, md, csv, json, ics, html)"


class UnreadableDocument(Exception):
    """A document we cannot read; the message is one sentence for the sender."""


@dataclass(frozen=True)
class DocumentText:
    """The extracted text, how long it was before the cap, and what kind of file it was."""

    text: str
    total_chars: int | None  # None: reading stopped at a cap before the end
    kind: str  # "pdf", "text", "markdown", "csv", "json", "calendar", "html"
    pages: int | None = None
    pages_read: int | None = None  # fewer than ``pages`` when reading stopped early

    @property
    def cut(self) -> bool:
        return self.total_chars is None or self.total_chars > len(self.text)


@dataclass(frozen=True)
class PdfText:
    """The text of a PDF's first pages, how many pages it has, and how many were read."""

    text: str
    pages: int
    read: int


def is_document(file_name: str, mime_type: str) -> bool:
    """Whether ``extract_text`` reads this kind of file (by its name, else its MIME type)."""
    return _kind(file_name, mime_type) is not None


def extract_text(data: bytes, file_name: str, mime_type: str,
                 limit: int = MAX_DOCUMENT_CHARS) -> DocumentText:
    """The document's text, capped at ``limit`` characters."""
    kind = _kind(file_name, mime_type)
    if kind is None:
        suffix = PurePosixPath(file_name).suffix.lower() or mime_type or "this kind of"
        raise UnreadableDocument(f"I can't read {suffix} files; I can read {READABLE}.")
    pages = pages_read = None
    whole = True
    if kind == "pdf":
        pdf = _pdf_text(data, limit)
        text = pdf.text
        pages = pdf.pages
        pages_read = pdf.read
        whole = pages_read == pages
    elif kind == "html":
        from bot.media.html_text import visible_text_upto  # the parser is needed for HTML only

        text, whole = visible_text_upto(_decode(data), limit)
    else:
        text = _decode(data)
    text = re.sub(r"\n{3,}", "\n\n", text.replace("\r\n", "\n")).strip()
    if not text:
        raise UnreadableDocument("That file has no text in it that I can read.")
    return DocumentText(text[:limit], len(text) if whole else None, kind, pages, pages_read)


def _kind(file_name: str, mime_type: str) -> str | None:
    suffix = PurePosixPath(file_name).suffix.lower()
    if suffix == ".pdf" or mime_type == "application/pdf":
        return "pdf"
    if suffix in TEXT_SUFFIXES:
        return TEXT_SUFFIXES[suffix]
    return TEXT_SUFFIXES.get(TEXT_MIME_TYPES.get(mime_type.split(";")[0].strip(), ""))


def _pdf_text(data: bytes, limit: int) -> PdfText:
    """The text of the first pages (up to ``MAX_PDF_PAGES``, stopping once there are more than
    ``limit`` characters), the number of pages, and how many were read."""
    from pypdf import PdfReader  # imported when a PDF comes: it is not needed to start
    from pypdf.errors import DependencyError, PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):  # "" opens owner-only locks
            raise UnreadableDocument("That PDF is password-protected, so I can't read it. "
                                     "Send it without the password, or paste the text.")
        count = len(reader.pages)
        pages: list[str] = []
        chars = 0
        for page in reader.pages:
            if len(pages) == MAX_PDF_PAGES or chars > limit:
                break
            text = (page.extract_text() or "").strip()
            pages.append(text)
            chars += len(text) + 2 * bool(text)
    except UnreadableDocument:
        raise
    except (DependencyError, NotImplementedError):  # a scheme pypdf cannot open here
        raise UnreadableDocument("That PDF is encrypted in a way I can't open; please send "
                                 "it without the password, or paste the text.") from None
    except (PyPdfError, ValueError, KeyError, TypeError, OSError, AttributeError) as exc:
        log.info("a PDF could not be read: %s", type(exc).__name__)
        raise UnreadableDocument("I couldn't read that PDF: it seems to be damaged.") from None
    text = "\n\n".join(page for page in pages if page)
    if not text:
        raise UnreadableDocument("That PDF has no text I can read (it may be a scan of "
                                 "paper); please send the text or a photo of the page.")
    return PdfText(text, count, len(pages))


def _decode(data: bytes) -> str:
    """UTF-8 (with or without a BOM), UTF-16 with a BOM, else Latin-1 (never fails)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def html_to_text(html: str) -> str:
    """The visible text of an HTML page, one block a line (``bot.media.html_text``)."""
    from bot.media.html_text import visible_text  # here: the parser is needed for HTML only

    return visible_text(html)
