"""Bench live replies: when the first text is visible vs when the whole answer is there.

Usage:
    .venv/bin/python bench/stream.py                # 6 questions per setting
    .venv/bin/python bench/stream.py --questions 3

``frontdesk run`` (a subprocess: real python-telegram-bot, real openai SDK) answers questions
through the fake Bot API, from a fake OpenAI-compatible model that waits 0.3 s before its
first token and writes the answer over 1.2 s more: a big model taking 1.5 s. Each question is
asked with streaming on (a private chat: drafts; a group: a message that grows by edits) and
off, alternating, so a busy machine slows all alike. Measured from the update's arrival:

- first visible: the first draft, partial message or message in that chat;
- full answer: the message showing the whole answer;
- first visible after the first token: how long the first update took once the model began
  writing (target: within about 1 s, the stream interval);
- full answer after the last token: what the delivery adds once the model is done.

Prints the medians and the ratio first visible / full answer per setting (streaming off: 1).
Exits 1 when the streamed first update comes more than 1.5 s after the first token.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

# The repository instead of bench/, whose telegram.py would shadow python-telegram-bot.
if str(Path(__file__).resolve().parent) in sys.path:
    sys.path.remove(str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fakes.openai_server import FakeOpenAIServer, text_reply
from tests.fakes.scripted_server import RecordedRequest, ScriptedReply, words
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.telegram_process import FrontdeskProcess

ANSWER = ("Here is the plan for the trip. Pack light: two shirts, a warm jumper and the good "
          "walking shoes. The train leaves at nine from platform four, so be there by half "
          "past eight. Bring the tickets, a charger and a book for the ride; the dining car "
          "closes early, so eat before you board. Call when you arrive.")
FIRST_TOKEN_S, WRITING_S = 0.3, 1.2
LIMIT_AFTER_FIRST_TOKEN_S = 1.5  # "within about a second", with room for a busy machine
SETTINGS = {"drafts (private chat)": ("private", "on"),
            "edits (group)": ("group", "on"),
            "off (private chat)": ("private", "off")}
CLASSIFY = '{"intent": "question", "urgency": 0.2}'


class BigModel(FakeOpenAIServer):
    """A streamed call: 0.3 s to the first token, the answer over 1.2 s; others at once."""

    def __init__(self) -> None:
        super().__init__()
        self.chunk_delay_s = WRITING_S / len(words(ANSWER))
        self.responder = self.reply

    def reply(self, request: RecordedRequest) -> ScriptedReply:
        if (request.json or {}).get("stream"):
            return text_reply(ANSWER, stall_s=FIRST_TOKEN_S)
        if (request.json or {}).get("tools"):
            return text_reply(ANSWER, stall_s=FIRST_TOKEN_S + WRITING_S)  # streaming off
        return text_reply(CLASSIFY)


Row = tuple[float, float, float | None, float | None]


def measure(questions: int) -> dict[str, list[Row]]:
    """(first visible, full answer, first visible after the first token, full answer after
    the last token) per question."""
    results: dict[str, list[Row]] = {s: [] for s in SETTINGS}
    with BigModel() as model, FakeTelegramServer() as on_server, \
            FakeTelegramServer() as off_server, tempfile.TemporaryDirectory() as tmp:
        chats = tuple(range(7001, 7001 + questions * 3 + 2))
        env = {"FRONTDESK_MODEL_PROVIDER": "openai", "OPENAI_BASE_URL": model.base_url,
               "OPENAI_API_KEY": "sk-bench-not-a-real-key"}
        bots = {"on": FrontdeskProcess(on_server, Path(tmp) / "on", allowed=chats, env=env),
                "off": FrontdeskProcess(off_server, Path(tmp) / "off", allowed=chats,
                                        env={**env, "FRONTDESK_STREAM": "off"})}
        servers = {"on": on_server, "off": off_server}
        for name, bot in bots.items():
            (Path(tmp) / name).mkdir()
            bot.start(timeout=60)
        try:
            chat_ids = iter(chats)
            for stream in ("on", "off"):  # warm-up: the first answer loads the SDK
                ask(servers[stream], bots[stream], model, next(chat_ids), "private")
            for _ in range(questions):
                for setting, (kind, stream) in SETTINGS.items():
                    results[setting].append(ask(servers[stream], bots[stream], model,
                                                next(chat_ids), kind))
        finally:
            for bot in bots.values():
                bot.stop()
    return results


def ask(telegram: FakeTelegramServer, bot: FrontdeskProcess, model: BigModel, chat: int,
        kind: str) -> Row:
    """One question; the times of its first visible text and of its whole answer."""
    where = chat if kind == "private" else -chat
    streams_before = len(model.first_chunks)
    start = time.monotonic()
    if kind == "private":
        telegram.push_message(chat, chat, "what should I pack for the trip?")
    else:
        telegram.push_message(where, chat, "@frontdesk_test_bot what should I pack?",
                              chat_type="group")
    bot.wait(lambda: any(m.text == ANSWER for m in telegram.messages_to(where)), 60)
    writes = [c for c in telegram.calls if c.params.get("chat_id") == where and c.at >= start
              and c.error_code is None and c.method in ("sendMessageDraft", "sendMessage",
                                                        "editMessageText")]
    full = next(c.at for c in writes
                if c.method != "sendMessageDraft" and c.params.get("text") == ANSWER)
    first = writes[0].at
    if len(model.last_chunks) <= streams_before:
        return first - start, full - start, None, None
    token, last = model.first_chunks[streams_before], model.last_chunks[streams_before]
    return first - start, full - start, first - token, full - last


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=6)
    args = parser.parse_args()
    results = measure(args.questions)
    print(f"fake big model: first token after {FIRST_TOKEN_S} s, whole answer after "
          f"{FIRST_TOKEN_S + WRITING_S} s; stream interval 1.0 s")
    worst = 0.0
    for setting, rows in results.items():
        first = statistics.median(r[0] for r in rows)
        full = statistics.median(r[1] for r in rows)
        after = [r[2] for r in rows if r[2] is not None]
        line = (f"{setting:22} first visible {first:5.2f} s   full answer {full:5.2f} s   "
                f"ratio {first / full:4.2f}")
        if after and setting.startswith(("drafts", "edits")):
            worst = max(worst, max(after))
            line += f"   first visible after first token: median {statistics.median(after):4.2f}"
            line += f" s, max {max(after):4.2f} s"
            tail = statistics.median(r[3] for r in rows if r[3] is not None)
            line += f"   full answer after last token {tail:4.2f} s"
        print(line)
    ok = worst <= LIMIT_AFTER_FIRST_TOKEN_S
    print(f"target: the first update within ~1 s of the first token: "
          f"{'met' if ok else 'NOT met'} (max {worst:.2f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
