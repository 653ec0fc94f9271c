"""Bench merging: the model calls a burst of 10 lines from one person costs, merged or not.

Usage: ``.venv/bin/python bench/burst.py [--gap SECONDS] [--window SECONDS]``.

Frontdesk in this process, graph mode on, an OpenAI-compatible fake
(``tests/fakes/openai_server.py``) that answers as a provider does, the small model in
``SMALL_S``, the big one in ``BIG_S`` (a lone line's turn starts at once: with an instant model
it would be answered before the next line came), python-telegram-bot long-polling the fake Bot
API (``tests/fakes/telegram_server.py``) through the real intake and gateway. One person types
ten lines ``--gap`` seconds apart (default 0.3: someone typing a thought line by line); every
line is answered. Two runs in this process: with ``FRONTDESK_MERGE_WINDOW`` (default 1.5) and,
as the reference, with merging off (0). Prints the turns (runs answered, and runs cancelled:
the first line's turn, started at once, gives way to the burst), the replies, the model calls
by role (cancelled ones included) and the time from the last line to the last reply (what the
window adds; a burst that reaches the 10-line cap is answered at once). Goal: 1 turn and
1 reply, at most 1 cancelled turn more.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

# The repository instead of bench/, whose telegram.py would shadow python-telegram-bot.
sys.path.remove(str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.adapters.telegram.adapter import TelegramAdapter
from bot.adapters.telegram.intake import Intake
from bot.adapters.telegram.start import make_bot
from bot.app import assemble
from bot.config.settings import Settings
from tests.fakes.openai_server import FakeOpenAIServer, text_reply
from tests.fakes.scripted_server import RecordedRequest, ScriptedReply
from tests.fakes.telegram_server import FakeTelegramServer

OWNER = 4242
LINES = ["hi!", "quick thing", "I'm meeting Dana tomorrow", "about the shelf order",
         "can you remember that", "she prefers oak", "and the budget is 800",
         "also what's on my agenda today?", "thanks", "oh and is the office open saturday?"]
GOAL_TURNS = 1
SMALL, BIG = "gpt-4.1-mini", "gpt-4.1"
SMALL_S, BIG_S = 0.3, 1.5  # seconds per call, as bench/triage_tax.py


@dataclass
class Outcome:
    """What one burst cost."""

    window: float
    turns: int
    cancelled: int
    replies: int
    calls: Counter[str]
    tail_s: float  # from the last line sent to the last reply


def provider(request: RecordedRequest) -> ScriptedReply:
    """The small model classifies every burst as a question; the big model answers it."""
    model = str((request.json or {}).get("model"))
    if model == SMALL:
        answer = json.dumps({"intent": "question", "urgency": 0.1, "reply": ""})
        return ScriptedReply(text_reply(answer, model=SMALL).body, stall_s=SMALL_S)
    return ScriptedReply(text_reply("Noted, all of it.", model=BIG).body, stall_s=BIG_S)


async def burst(window: float, gap: float, home: Path, model_url: str) -> Outcome:
    """Ten lines, ``gap`` apart, through a Frontdesk with this merge window."""
    async with FakeTelegramServer() as server:
        settings = Settings.from_env({
            "FRONTDESK_HOME": str(home), "FRONTDESK_MODEL_PROVIDER": "openai",
            "OPENAI_BASE_URL": model_url, "OPENAI_API_KEY": "sk-bench-not-a-secret",
            "FRONTDESK_SMALL_MODEL": SMALL, "FRONTDESK_BIG_MODEL": BIG,
            "TELEGRAM_BOT_TOKEN": server.token, "TELEGRAM_BASE_URL": server.base_url,
            "TELEGRAM_OWNER_ID": str(OWNER), "FRONTDESK_MERGE_WINDOW": str(window)})
        services = assemble(settings)
        await services.chat.gateway.start()
        bot = make_bot(settings)
        await bot.initialize()
        adapter = TelegramAdapter(bot, services.chat.gateway, settings.telegram_owner_id)
        intake = Intake(bot, bot.bot, services.chat.gateway, adapter, services.delivery.cursors)
        await services.chat.gateway.attach(adapter)
        server.add_chat(OWNER)
        polling = asyncio.create_task(intake.poll_forever())
        for number, line in enumerate(LINES):
            if number:
                await asyncio.sleep(gap)  # a person typing: the bench's own pace, not a wait
            server.push_message(OWNER, OWNER, line)
        sent_last = time.perf_counter()
        deadline = sent_last + 60
        conn = services.delivery.inbox.conn
        while conn.execute(
                "SELECT count(*) FROM inbox WHERE status != 'answered'").fetchone()[0] \
                or conn.execute("SELECT count(*) FROM inbox").fetchone()[0] \
                < len(LINES):
            assert time.perf_counter() < deadline, "the burst was not answered in 60 s"
            await asyncio.sleep(0.01)
        await intake.idle()
        tail = time.perf_counter() - sent_last
        polling.cancel()
        await asyncio.gather(polling, return_exceptions=True)
        await intake.drain()
        await bot.shutdown()
        runs = services.flows.store.runs(limit=1000)
        calls: Counter[str] = Counter(
            str(event["role"]) for run in runs for event in services.flows.store.events(run.id)
            if event["event"] == "model_call")
        answered = sum(run.status != "cancelled" for run in runs)
        return Outcome(window, answered, len(runs) - answered, len(server.messages_to(OWNER)),
                       calls, tail)


def line_of(outcome: Outcome) -> str:
    """One result as a line."""
    name = f"merge window {outcome.window:g} s" if outcome.window else "merging off"
    total = sum(outcome.calls.values())
    return (f"{name:<22} {outcome.turns:>2} turn(s) (+{outcome.cancelled} cancelled), "
            f"{outcome.replies:>2} repl(y/ies), "
            f"model calls small {outcome.calls['small']}, big {outcome.calls['big']} "
            f"({total} in all); last line to last reply {outcome.tail_s:.2f} s")


async def main_async(window: float, gap: float) -> int:
    os.environ.setdefault("PTB_TIMEDELTA", "true")
    warnings.filterwarnings("ignore", message="Please use 'Bot.getUpdates'")  # the intake's
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer() as model_api:
        model_api.responder = provider
        merged = await burst(window, gap, Path(tmp) / "merged", model_api.base_url)
        reference = await burst(0.0, gap, Path(tmp) / "off", model_api.base_url)
    print(f"A burst of {len(LINES)} lines from one person, {gap:g} s apart, graph mode, "
          "Telegram through the real gateway:")
    print("  " + line_of(merged))
    print("  " + line_of(reference))
    all_calls = sum(merged.calls.values())
    ratio = all_calls / max(1, sum(reference.calls.values()))
    met = merged.turns <= GOAL_TURNS and merged.replies == 1 and merged.cancelled <= 1
    print(f"  merged: {all_calls} model calls, {ratio:.2f}x the calls of merging off; "
          f"goal {GOAL_TURNS} turn: {'met' if met else 'NOT met'}")
    return 0 if met else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gap", type=float, default=0.3, help="seconds between lines")
    parser.add_argument("--window", type=float, default=1.5, help="FRONTDESK_MERGE_WINDOW")
    args = parser.parse_args()
    return asyncio.run(main_async(args.window, args.gap))


if __name__ == "__main__":
    sys.exit(main())
