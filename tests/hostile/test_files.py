"""Hostile files on Telegram: bombs are capped or refused in a worker, and nobody else waits.

Real python-telegram-bot against the fake Bot API, real worker processes. The stall tests
send a hostile file and a bystander's "ping" from another chat in the same batch and assert
the ping is answered while the file is still being read (overlap, not a speed target).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import resource
import time
from pathlib import Path

import pytest

from bot.adapters.console import file_attachment
from bot.chat.answering import TOO_SLOW
from bot.media.attachments import Attachments
from bot.media.documents import MAX_DOCUMENT_CHARS, MAX_PDF_PAGES, extract_text
from bot.media.workers import WorkerPool, shared_pool
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.files import pdf_sharing_one_stream, pdf_with_text, png_declaring
from tests.support.polling import until
from tests.support.telegram_bot import GUEST, OWNER, Starter, TelegramBot

pytestmark = pytest.mark.filterwarnings("ignore:Please use 'Bot.getUpdates'")
WAIT_S = 60.0


def pdf_taking_seconds() -> bytes:
    """A PDF whose first page alone takes pypdf about four seconds here (one second per MB of
    its stream): far past the short deadlines these tests set, even on a faster machine."""
    return pdf_sharing_one_stream(stream_bytes=4 << 20)


async def answered_at(tg: TelegramBot, chat: int, count: int = 1) -> float:
    """The moment (monotonic) the chat has ``count`` replies; polled with a deadline."""
    await until(lambda: len(tg.replies(chat)) >= count, WAIT_S)
    return time.monotonic()


async def ping_latency(tg: TelegramBot, server: FakeTelegramServer) -> float:
    """How long the bystander waits for an answer to "ping" with nothing else going on."""
    before = len(tg.replies(GUEST))
    sent = time.monotonic()
    server.push_message(GUEST, GUEST, "ping")
    pumping = asyncio.create_task(tg.pump())
    latency = await answered_at(tg, GUEST, before + 1) - sent
    await pumping
    return latency


async def test_a_pdf_whose_pages_share_one_huge_stream_is_capped_and_a_ping_overtakes_it(
        start_telegram: Starter, telegram_server: FakeTelegramServer) -> None:
    tg = await start_telegram()
    alone = await ping_latency(tg, telegram_server)
    telegram_server.push_document(OWNER, OWNER, pdf_sharing_one_stream(), "bomb.pdf",
                                  "application/pdf", caption="remember this")
    sent = time.monotonic()
    telegram_server.push_message(GUEST, GUEST, "ping")
    pumping = asyncio.create_task(tg.pump())
    ping_done = await answered_at(tg, GUEST, 2)
    pdf_done = await answered_at(tg, OWNER)
    await pumping
    print(f"ping alone {alone:.3f} s; beside the PDF {ping_done - sent:.3f} s; "
          f"the PDF {pdf_done - sent:.3f} s")
    assert ping_done < pdf_done  # answered while the PDF was still being read
    read = "\n".join(text for _, text in tg.services.memory.history(f"telegram:chat:{OWNER}", 5))
    assert "(pdf, 30 pages)" in read
    assert f"I read pages 1 to 1 of 30, and only the first {MAX_DOCUMENT_CHARS:,}" in read


def test_a_5000_page_pdf_is_read_only_up_to_the_page_cap() -> None:
    started = time.monotonic()
    found = extract_text(pdf_with_text([f"page {n}" for n in range(5000)]), "long.pdf", "")
    assert (found.pages, found.pages_read, found.cut) == (5000, MAX_PDF_PAGES, True)
    assert found.text.endswith(f"page {MAX_PDF_PAGES - 1}")
    print(f"read in {time.monotonic() - started:.2f} s")


async def test_a_png_bomb_is_refused_by_its_declared_size_without_costing_the_bot_memory(
        start_telegram: Starter, telegram_server: FakeTelegramServer) -> None:
    bomb = png_declaring(10_950, 10_950)  # 466 KB that would decode to 480 MB
    tg = await start_telegram()
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    telegram_server.push_document(OWNER, OWNER, bomb, "pixels.png", "image/png")
    await tg.pump()
    [reply] = tg.replies(OWNER)
    assert reply.startswith("That image is too large for me (10,950 × 10,950 pixels). "
                            "I take pictures up to 40 megapixels")
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024
    assert grown_mb < 100


async def test_the_deadline_stops_the_reading_worker_and_frees_the_chat(
        start_telegram: Starter, telegram_server: FakeTelegramServer) -> None:
    tg = await start_telegram(FRONTDESK_ANSWER_DEADLINE="1")
    telegram_server.push_document(OWNER, OWNER, pdf_taking_seconds(), "bomb.pdf",
                                  "application/pdf", caption="remember this")
    await tg.pump()
    assert tg.replies(OWNER) == [TOO_SLOW]
    idle = {worker.process.pid for worker in shared_pool().idle}
    assert {child.pid for child in multiprocessing.active_children()} <= idle  # killed
    telegram_server.push_message(OWNER, OWNER, "remember the bins go out on Tuesday")
    await tg.pump()
    assert tg.replies(OWNER)[-1].startswith("Saved to your notes")


async def test_a_reading_that_overruns_is_killed_and_the_next_file_gets_a_fresh_worker(
        tmp_path: Path) -> None:
    bomb, fine = tmp_path / "bomb.pdf", tmp_path / "fine.pdf"
    bomb.write_bytes(pdf_taking_seconds())
    fine.write_bytes(pdf_with_text(["Rent: 900 EUR"]))
    workers = WorkerPool(size=1)
    files = Attachments(tmp_path / "attachments", 20, None, workers=workers, read_seconds=0.5)
    from bot.adapters.console import ConsoleAdapter, console_message

    source = ConsoleAdapter(echo=False)
    stopped = await files.prepare(console_message("", attachments=(file_attachment(str(bomb)),)),
                                  source)
    assert stopped.answer is not None
    assert stopped.answer.startswith("I stopped reading bomb.pdf: it took too long.")
    assert workers.idle == []  # the overrunning worker was killed, not kept
    # The same pool, a patient reader: a fresh worker's start (spawn, imports) is not what
    # is timed here, and on a busy machine it alone can take longer than 0.5 s.
    patient = Attachments(tmp_path / "attachments", 20, None, workers=workers, read_seconds=60)
    read = await patient.prepare(console_message("", attachments=(file_attachment(str(fine)),)),
                                 source)
    assert "Rent: 900 EUR" in read.text
    workers.close()


async def test_a_worker_that_runs_out_of_memory_gives_a_sentence(tmp_path: Path) -> None:
    big = tmp_path / "big.png"
    big.write_bytes(png_declaring(6_000, 6_000))  # under the pixel cap: 144 MB to decode
    workers = WorkerPool(size=1, memory_bytes=120 * 1024 * 1024)
    files = Attachments(tmp_path / "attachments", 20, None, workers=workers)
    from bot.adapters.console import ConsoleAdapter, console_message

    done = await files.prepare(console_message("look", attachments=(file_attachment(str(big)),)),
                               ConsoleAdapter(echo=False))
    assert ("I stopped reading big.png: it needs more memory than I allow. "
            "Please send a smaller file.") in done.notes
    workers.close()
