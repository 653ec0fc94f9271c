"""Photos, voice notes and documents on Telegram: real python-telegram-bot, the fake Bot API.

Every kind of message gets an answer: a file is fetched through getFile and the file URL
(once), read, and answered with the same guarantees as text; a kind the bot does not read,
or a file over the limit, gets one sentence saying what it can take.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from bot.adapters.telegram.files import base_file_url
from bot.chat.senders import run_id_for
from bot.media.transcription import NOT_CONFIGURED
from bot.messages import IncomingMessage
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.files import encrypted, pdf_with_text, photo, voice_note
from tests.support.telegram_bot import GUEST, OWNER, Starter

CAN_TAKE = "I can take text, photos, voice notes and audio"
# The intake asks for raw updates on purpose (telegram_intake), which PTB frowns upon.
pytestmark = pytest.mark.filterwarnings("ignore:Please use 'Bot.getUpdates'")


def kept_files(home: Path) -> list[Path]:
    """Every file kept for messages not yet answered."""
    root = home / "attachments"
    return [path for path in root.rglob("*") if path.is_file()] if root.exists() else []


def openai_env(fake: FakeOpenAIServer) -> dict[str, str]:
    return {"FRONTDESK_MODEL_PROVIDER": "openai", "OPENAI_BASE_URL": fake.base_url,
            "OPENAI_API_KEY": "sk-test"}


async def test_a_photo_without_caption_is_fetched_once_and_offline_says_it_cannot_look(
        start_telegram: Starter, telegram_server: FakeTelegramServer, tmp_path: Path) -> None:
    tg = await start_telegram()
    telegram_server.push_photo(OWNER, OWNER, photo())
    await tg.pump()
    [reply] = tg.replies(OWNER)
    assert reply.startswith("I can't look at images in offline mode.")
    assert len(telegram_server.calls_of("getFile")) == 1
    assert sum(telegram_server.downloads.values()) == 1
    assert kept_files(tmp_path / "home") == []  # answered: nothing kept any more


async def test_a_captioned_photo_reaches_the_big_model_downscaled_and_triage_reads_the_caption(
        start_telegram: Starter, telegram_server: FakeTelegramServer,
        openai_fake: FakeOpenAIServer) -> None:
    tg = await start_telegram(**openai_env(openai_fake))
    caption = "What breed is this dog?"
    telegram_server.push_photo(OWNER, OWNER, photo(3000, 2000), caption=caption,
                               width=3000, height=2000)
    await tg.pump()
    [image] = openai_fake.images
    assert image["media_type"] == "image/jpeg"
    assert Image.open(io.BytesIO(image["data"])).size == (1568, 1045)
    classify = [r.json["messages"] for r in openai_fake.requests
                if "intent" in str(r.json["messages"][0]["content"])]
    assert [m[-1]["content"] for m in classify] == [caption]  # the caption, no image
    assert tg.replies(OWNER) == ["fake reply"]


async def test_a_voice_note_is_transcribed_routed_and_shown_back(
        start_telegram: Starter, telegram_server: FakeTelegramServer,
        openai_fake: FakeOpenAIServer) -> None:
    tg = await start_telegram(**openai_env(openai_fake))
    openai_fake.transcript_text = "What is on my calendar tomorrow?"
    update = telegram_server.push_voice(OWNER, OWNER, voice_note())
    await tg.pump()
    [upload] = openai_fake.transcriptions
    assert upload.model == "whisper-1"
    assert upload.file_name.endswith(".ogg")  # Telegram's .oga, renamed for the API
    assert upload.data == voice_note()
    assert upload.authorization == "Bearer sk-test"
    [reply] = tg.replies(OWNER)
    assert reply.startswith('🎤 "What is on my calendar tomorrow?"')
    history = tg.services.memory.history(f"telegram:chat:{OWNER}", 10)
    assert ("user", "What is on my calendar tomorrow?") in history
    agent = [r for r in openai_fake.requests if r.json.get("tools")][-1].json["messages"]
    assert agent[-1] == {"role": "user", "content": "What is on my calendar tomorrow?"}
    run = tg.services.flows.runs.load(run_id_for(IncomingMessage(
        "telegram", str(OWNER), str(update["message"]["message_id"]), str(OWNER), "")))
    assert run.get("text") == "What is on my calendar tomorrow?"  # the run's record has it


async def test_a_guests_urgent_voice_note_reaches_the_owner_as_text_from_a_local_server(
        start_telegram: Starter, telegram_server: FakeTelegramServer,
        openai_fake: FakeOpenAIServer) -> None:
    tg = await start_telegram(FRONTDESK_TRANSCRIBE_BASE_URL=openai_fake.base_url,
                              FRONTDESK_TRANSCRIBE_MODEL="small.en")
    openai_fake.transcript_text = "The pipe burst in the flat, this is urgent, call me now"
    telegram_server.push_voice(GUEST, GUEST, voice_note())
    await tg.pump()
    [upload] = openai_fake.transcriptions
    assert upload.model == "small.en"
    [notice] = tg.replies(OWNER)
    assert "The pipe burst in the flat" in notice
    [confirmation] = tg.replies(GUEST)
    assert confirmation.startswith('🎤 "The pipe burst in the flat')
    assert "passed your message on to the owner" in confirmation


@pytest.mark.parametrize("kind", ["sticker", "location", "contact", "poll", "video"])
async def test_a_kind_the_bot_does_not_read_gets_one_answer_saying_what_it_can_take(
        start_telegram: Starter, telegram_server: FakeTelegramServer, kind: str) -> None:
    tg = await start_telegram()
    telegram_server.push_kind(OWNER, OWNER, kind)
    await tg.pump()
    [reply] = tg.replies(OWNER)
    assert "I can't take" in reply and CAN_TAKE in reply
    assert telegram_server.calls_of("getFile") == []


async def test_a_file_over_the_limit_is_refused_from_its_declared_size_before_any_getfile(
        start_telegram: Starter, telegram_server: FakeTelegramServer) -> None:
    tg = await start_telegram(FRONTDESK_MAX_FILE_MB="1")
    telegram_server.push_document(OWNER, OWNER, b"x" * 10, "big.pdf", "application/pdf",
                                  declared_size=3 * 1024 * 1024)
    await tg.pump()
    [reply] = tg.replies(OWNER)
    assert "big.pdf is too big for me (3.0 MB; I take files up to 1 MB)." in reply
    assert CAN_TAKE in reply
    assert telegram_server.calls_of("getFile") == []


async def test_without_transcription_a_voice_note_says_how_to_turn_it_on(
        start_telegram: Starter, telegram_server: FakeTelegramServer) -> None:
    tg = await start_telegram()
    telegram_server.push_voice(OWNER, OWNER, voice_note())
    await tg.pump()
    assert tg.replies(OWNER) == [NOT_CONFIGURED]
    assert telegram_server.calls_of("getFile") == []


async def test_a_failed_transcription_is_answered_and_the_message_marked_failed(
        start_telegram: Starter, telegram_server: FakeTelegramServer,
        openai_fake: FakeOpenAIServer) -> None:
    tg = await start_telegram(FRONTDESK_TRANSCRIBE_BASE_URL=openai_fake.base_url)
    openai_fake.transcript_replies.extend([(500, "boom"), (500, "boom")])
    update = telegram_server.push_voice(OWNER, OWNER, voice_note())
    await tg.pump()
    [reply] = tg.replies(OWNER)
    assert "couldn't transcribe your recording" in reply and "send it again" in reply
    message_id = str(update["message"]["message_id"])
    assert tg.services.delivery.inbox.status("telegram", str(OWNER), message_id) == "failed"
    openai_fake.transcript_text = "second try"  # the sender sends it again: it works
    telegram_server.push_voice(OWNER, OWNER, voice_note())
    await tg.pump()
    assert tg.replies(OWNER)[-1].startswith('🎤 "second try"')


async def test_a_pdf_goes_to_the_agent_and_stays_in_the_history_for_the_next_message(
        start_telegram: Starter, telegram_server: FakeTelegramServer,
        openai_fake: FakeOpenAIServer) -> None:
    tg = await start_telegram(**openai_env(openai_fake))
    pdf = pdf_with_text(["Invoice 2291 from Acme", "Total due: 412 EUR by 3 March"])
    telegram_server.push_document(OWNER, OWNER, pdf, "invoice.pdf", "application/pdf")
    await tg.pump()
    # the agent's request (with its tools): triage's classify call may come after it
    agent = [r for r in openai_fake.requests if r.json.get("tools")]
    first = agent[-1].json["messages"][-1]["content"]
    assert first.startswith("Please summarise this document.")  # no caption
    assert "invoice.pdf (pdf, 2 pages)" in first
    assert "Total due: 412 EUR by 3 March" in first
    telegram_server.push_message(OWNER, OWNER, "save that as a note")
    await tg.pump()
    second = [r for r in openai_fake.requests if r.json.get("tools")][-1].json["messages"]
    assert second[-1] == {"role": "user", "content": "save that as a note"}
    assert any("Total due: 412 EUR" in str(m["content"]) for m in second[:-1])


@pytest.mark.parametrize(("data", "expected"), [
    (encrypted(pdf_with_text(["secret plans"])), "That PDF is password-protected"),
    (pdf_with_text(["cut short"])[:120], "I couldn't read that PDF: it seems to be damaged."),
])
async def test_a_locked_or_broken_pdf_gets_a_clear_sentence(
        start_telegram: Starter, telegram_server: FakeTelegramServer, data: bytes,
        expected: str) -> None:
    tg = await start_telegram()
    telegram_server.push_document(OWNER, OWNER, data, "plans.pdf", "application/pdf",
                                  caption="what does this say?")
    await tg.pump()
    [reply] = tg.replies(OWNER)
    assert reply.startswith(expected)


async def test_a_file_fetched_before_a_crash_is_not_fetched_again_after_the_restart(
        start_telegram: Starter, telegram_server: FakeTelegramServer, tmp_path: Path) -> None:
    crashed = await start_telegram()
    telegram_server.push_document(OWNER, OWNER, b"Door code: 4711\n", "codes.txt",
                                  "text/plain", caption="remember this")
    raws = await crashed.intake.fetch(0)
    [accepted] = crashed.intake.accept(raws, confirm=True)  # recorded, confirmed ...
    files = crashed.services.chat.answerer.files
    await files.prepare(accepted.message, crashed.adapter)  # ... and fetched
    assert sum(telegram_server.downloads.values()) == 1 and kept_files(tmp_path / "home")
    restarted = await start_telegram()  # the same home: the message is still open
    assert restarted.replies(OWNER)[-1].startswith("Saved to your notes: this")
    assert "Door code: 4711" in restarted.replies(OWNER)[-1]
    assert len(telegram_server.calls_of("getFile")) == 1
    assert sum(telegram_server.downloads.values()) == 1
    assert kept_files(tmp_path / "home") == []


async def test_a_hostile_file_name_is_shown_as_plain_text_and_never_makes_a_path(
        start_telegram: Starter, telegram_server: FakeTelegramServer, tmp_path: Path) -> None:
    tg = await start_telegram()
    telegram_server.push_document(OWNER, OWNER, b"MZ", "<b>*x*</b>_[y](http://e.example).exe",
                                  "application/octet-stream")
    telegram_server.push_document(OWNER, OWNER, b"hello", "../../../escaped.txt", "text/plain",
                                  caption="remember this")
    await tg.pump()
    first, second = tg.server.messages_to(OWNER)
    assert first.text.startswith("I can't read <b>*x*</b>_[y](http://e.example).exe:")
    assert first.entities == []  # no bold, no link: the sender's name is not markup
    assert "hello" in second.text
    assert not list(tmp_path.rglob("escaped.txt"))


def test_the_file_url_follows_the_bot_api_url_unless_set() -> None:
    assert base_file_url(None, None) == "https://api.telegram.org/file/bot"
    assert base_file_url(None, "http://127.0.0.1:8081/bot") == "http://127.0.0.1:8081/file/bot"
    assert base_file_url("http://files:9/file/bot", "http://127.0.0.1:8081/bot") == \
        "http://files:9/file/bot"
