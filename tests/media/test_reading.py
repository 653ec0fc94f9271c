"""Reading files: documents to text (pypdf, text-like files), photos downscaled with Pillow,
inbox records with attachments, and the transcription upload's file name."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from bot.config.settings import Settings
from bot.media.documents import MAX_DOCUMENT_CHARS, UnreadableDocument, extract_text, html_to_text
from bot.media.images import MAX_EDGE_PX, UnreadableImage, prepare_image
from bot.media.transcription import check_transcription, upload_name
from bot.messages import Attachment, IncomingMessage
from tests.fakes.openai_server import FakeOpenAIServer
from tests.support.files import encrypted, pdf_with_text, photo, scanned_pdf


def test_pdf_pages_become_text_with_their_count() -> None:
    found = extract_text(pdf_with_text(["Lease (signed)", "Rent: 900 EUR"]), "lease.pdf", "")
    assert (found.text, found.pages, found.kind, found.cut) == (
        "Lease (signed)\n\nRent: 900 EUR", 2, "pdf", False)


@pytest.mark.parametrize(("data", "sentence"), [
    (encrypted(pdf_with_text(["x"])), "That PDF is password-protected"),
    (b"%PDF-1.4\n garbage", "I couldn't read that PDF"),
    (scanned_pdf(), "That PDF has no text I can read (it may be a scan"),
])
def test_locked_broken_and_scanned_pdfs_say_so(data: bytes, sentence: str) -> None:
    with pytest.raises(UnreadableDocument, match=r"^" + sentence.replace("(", r"\(")):
        extract_text(data, "x.pdf", "application/pdf")


@pytest.mark.parametrize(("name", "mime", "data", "text"), [
    ("notes.md", "", b"# Title\n\n- one", "# Title\n\n- one"),
    ("people.csv", "text/csv", b"name,age\r\nAnn,40\r\n", "name,age\nAnn,40"),
    ("data", "application/json", b'{"a": 1}', '{"a": 1}'),
    ("cal.ics", "", b"BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", "BEGIN:VCALENDAR\nEND:VCALENDAR"),
    ("bom.txt", "", "\ufeffcafé".encode(), "café"),
    ("utf16.txt", "", "zoë".encode("utf-16"), "zoë"),
    ("latin1.txt", "", "Grüße".encode("latin-1"), "Grüße"),
])
def test_text_like_files_are_decoded(name: str, mime: str, data: bytes, text: str) -> None:
    assert extract_text(data, name, mime).text == text


def test_html_is_reduced_to_its_visible_text() -> None:
    page = ("<html><head><title>t</title><style>p{}</style></head><body><h1>Menu</h1>"
            "<p>Soup &amp; bread</p><script>alert(1)</script><ul><li>Tea</li></ul></body>")
    assert html_to_text(page) == "Menu\nSoup & bread\nTea"
    assert extract_text(page.encode(), "menu.html", "").text == "Menu\nSoup & bread\nTea"


def test_a_long_document_is_cut_and_says_how_long_it_was() -> None:
    found = extract_text(b"word " * 10_000, "long.txt", "text/plain")
    assert len(found.text) == MAX_DOCUMENT_CHARS and found.total_chars == 49_999
    assert found.cut


def test_a_file_kind_we_do_not_read_is_named() -> None:
    with pytest.raises(UnreadableDocument, match=r"^I can't read \.docx files; I can read PDFs"):
        extract_text(b"PK", "letter.docx", "application/vnd.openxmlformats")


def test_a_big_photo_is_downscaled_to_the_recommended_long_edge() -> None:
    prepared = prepare_image(photo(4032, 3024))
    assert prepared.media_type == "image/jpeg"
    assert (prepared.width, prepared.height) == (MAX_EDGE_PX, 1176)
    assert Image.open(io.BytesIO(prepared.data)).size == (MAX_EDGE_PX, 1176)


def test_a_small_sendable_photo_is_kept_as_it_is_and_transparency_stays_png() -> None:
    small = photo(640, 480, "WEBP")
    assert prepare_image(small).data == small
    big_alpha = prepare_image(photo(2000, 1000, "PNG", mode="RGBA"))
    assert (big_alpha.media_type, big_alpha.width) == ("image/png", MAX_EDGE_PX)
    bitmap = prepare_image(photo(100, 50, "BMP"))  # not sendable as it is: re-encoded
    assert bitmap.media_type == "image/jpeg"


def test_a_sideways_phone_photo_is_turned_upright() -> None:
    out = io.BytesIO()
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90° clockwise to view"
    Image.new("RGB", (400, 300)).save(out, "JPEG", exif=exif)
    prepared = prepare_image(out.getvalue())
    assert (prepared.width, prepared.height) == (300, 400)


def test_what_is_not_an_image_gets_a_sentence() -> None:
    with pytest.raises(UnreadableImage, match="I couldn't open that image"):
        prepare_image(b"not an image at all")


def test_a_message_with_attachments_survives_the_inbox_and_old_records_still_load() -> None:
    message = IncomingMessage("telegram", "1", "2", "3", "look", "Ann", True, (
        Attachment("photo", "image/jpeg", 1234, "photo.jpg", "AgAD1"),
        Attachment("sticker")))
    assert IncomingMessage.from_record(json.dumps(message.to_json())) == message
    old = {"platform": "telegram", "chat_id": "1", "message_id": "2", "user_id": "3",
           "text": "hi"}
    assert IncomingMessage.from_record(json.dumps(old)).attachments == ()
    for bad in ([{"kind": 3}], "photo", [{"kind": "photo", "size": "big"}]):
        with pytest.raises(ValueError):
            IncomingMessage.from_json({**old, "attachments": bad})


@pytest.mark.parametrize(("name", "mime", "sent_as"), [
    ("voice.oga", "audio/ogg", "voice.ogg"),
    ("memo.m4a", "audio/mp4", "memo.m4a"),
    ("../../x y.opus", "audio/opus", "xy.ogg"),
    ("", "audio/mpeg", "audio.mp3"),
    ("track.weird", "audio/wav", "track.wav"),
])
def test_the_upload_name_carries_an_extension_the_api_accepts(name: str, mime: str,
                                                             sent_as: str) -> None:
    assert upload_name(name, mime) == sent_as


async def test_the_doctor_check_says_off_or_whether_the_server_transcribes(
        tmp_path: Path) -> None:
    off = Settings.from_env({"FRONTDESK_HOME": str(tmp_path)})
    ok, line = await check_transcription(off)
    assert not ok and "OPENAI_API_KEY or FRONTDESK_TRANSCRIBE_BASE_URL" in line
    async with FakeOpenAIServer() as whisper:
        on = Settings.from_env({"FRONTDESK_HOME": str(tmp_path),
                                "FRONTDESK_TRANSCRIBE_BASE_URL": whisper.base_url})
        ok, line = await check_transcription(on)
        assert ok and line == f"transcription works (whisper-1 at {whisper.base_url})"
        assert whisper.transcriptions[0].file_name == "check.wav"
        whisper.transcript_replies.extend([(401, "no"), (401, "no")])
        ok, line = await check_transcription(on)
        assert not ok and "refused this recording (HTTP 401)" in line


def test_a_bad_size_limit_names_the_variable() -> None:
    with pytest.raises(ValueError, match="FRONTDESK_MAX_FILE_MB='lots'"):
        Settings.from_env({"FRONTDESK_MAX_FILE_MB": "lots"})
