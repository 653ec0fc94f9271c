"""One outbox part, one mail: a slow SMTP server's late "250 OK" is waited for, so the part is
marked sent and no later flush sends it again. Counted per Message-ID at a real aiosmtpd."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from pathlib import Path

from bot.adapters.email.adapter import EmailAdapter
from bot.adapters.email.threads import Thread, Threads
from bot.config.email_settings import EmailSettings
from bot.delivery.ledger import ledger_stores
from bot.delivery.outbox import Outbox
from bot.schema import open_database
from tests.support.mail_servers import DESK, PASSWORD, Smtp

ANA = "ana@example.com"


def test_a_late_answer_to_the_mail_sends_it_once(tmp_path: Path, smtp: Smtp) -> None:
    settings = EmailSettings(address=DESK, imap_host="127.0.0.1", smtp_host="127.0.0.1",
                             smtp_port=smtp.port, security="none", username=DESK,
                             password=PASSWORD)
    db = open_database(tmp_path / "frontdesk.db")
    ledger = ledger_stores(db)
    threads = Threads(ledger.cursors)
    with ledger.cursors.together():
        threads.opened(Thread(message_id="<q-1@example.com>", address=ANA, subject="Hours"))
    outbox = Outbox(ledger.parts)
    # every command but the mail's end answers at once; only that answer is late (1.5 s)
    outbox.register(EmailAdapter(settings, threads, timeout=1.0))
    smtp.keeper.answer_after = 1.5

    async def answer_then_flush_again() -> None:
        # before the fix the send gave up here, its part left unsent though the server had it
        with contextlib.suppress(Exception):
            await outbox.deliver("email", ANA, "<q-1@example.com>", "We open at nine.")
        smtp.keeper.answer_after = 0.0
        await outbox.flush("email")  # what the next reply to Ana, or a start, does

    asyncio.run(answer_then_flush_again())
    per_id = Counter(str(mail["Message-ID"]) for mail in smtp.received)
    assert list(per_id.values()) == [1], per_id
    [part] = ledger.parts.parts("email", ANA, "<q-1@example.com>")
    assert part.sent
    db.close()
