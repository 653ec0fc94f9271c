"""Bench the triage's latency tax: graph mode against the plain loop through `frontdesk run`.

Usage:
    .venv/bin/python bench/triage_tax.py              # 8 messages of each kind per mode
    .venv/bin/python bench/triage_tax.py --rounds 4

Two `frontdesk run` processes, one in graph mode and one with FRONTDESK_GRAPH_WORKFLOWS=0, each
poll their own loopback Telegram fake (``tests/fakes/telegram_server.py``) and share one
OpenAI-compatible fake (``tests/fakes/openai_server.py``) that answers like a provider: the
small model (``gpt-4.1-mini``) in 0.3 s, the big one (``gpt-4.1``) in 1.5 s per call. Messages
alternate between the two bots, so a noisy machine slows both alike, and each round takes the
kinds in another order. Kinds:

- greeting: the owner says hello (the small model answers it in its classify JSON);
- question: the owner asks (the big model answers in one turn);
- task: the owner asks for something done (the big model calls ``remember``, then answers);
- urgent: an allowed guest reports an emergency (graph: passed on to the owner; loop: the big
  model calls ``notify_owner``, then answers);
- misread greeting: a goodbye the offline rules take for a task, so the big model's first
  turn is started and then cancelled when the small model says social: what a miss costs.

Latency is from queuing the update in the Telegram fake to the reply (the sender's) arriving
there. Model calls and tokens per message are read from each run's trace (its ``model_call``
events, cancelled ones included, counted as Frontdesk counted them). Targets: questions and
tasks at p50 ≤ 1.05× the loop's; a greeting ≤ 0.5× the loop's and never on the big model.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The repository instead of bench/, whose telegram.py would shadow python-telegram-bot.
sys.path.remove(str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from graphs.runs.store import RunStore
from tests.fakes.openai_server import FakeOpenAIServer, text_reply, tool_call_reply
from tests.fakes.scripted_server import RecordedRequest, ScriptedReply
from tests.fakes.telegram_server import FakeTelegramServer

SMALL, BIG = "gpt-4.1-mini", "gpt-4.1"
SMALL_S, BIG_S = 0.3, 1.5  # seconds per call, as the issue measures
OWNER, GUEST = 1, 9001
MESSAGES: dict[str, list[str]] = {
    "greeting": ["hi!", "hello there", "thanks a lot!", "good morning"],
    "question": ["when is the dentist?", "what time does the shop open on Saturday?",
                 "who called this morning?", "where did I put the contract?"],
    "task": ["remember that the plumber comes Tuesday", "book a table for two at 7",
             "remind Ann about the invoice on Friday", "note that the wifi password changed"],
    "urgent": ["urgent: the office alarm is going off", "emergency: the basement is flooding",
               "please call me asap, the server is down",
               "the shop window is smashed, come right now"],
    "misread greeting": ["bye for now, see you", "cheers, that was all from me"],
}
INTENT = {"greeting": "social", "question": "question", "task": "task", "urgent": "urgent",
          "misread greeting": "social"}
SENDER = {"urgent": GUEST}  # everything else comes from the owner
TARGETS = {"question": 1.05, "task": 1.05, "greeting": 0.5}
WARM_UP = "what is new?"  # each bot's first message: the SDK's import, the first connection


def clean_env() -> dict[str, str]:
    foreign = ("FRONTDESK_", "TELEGRAM_", "DISCORD_", "OPENAI_", "ANTHROPIC_")
    return {k: v for k, v in os.environ.items() if not k.startswith(foreign)}


def kind_of(text: str) -> str | None:
    return next((kind for kind, texts in MESSAGES.items() if text in texts), None)


def last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else " ".join(
                str(part.get("text", "")) for part in content or [])
    return ""


def tokens_in(messages: list[dict[str, Any]]) -> int:
    """About a token per four bytes of the request, as a provider would bill it."""
    return sum(len(str(m.get("content") or "").encode()) for m in messages) // 4 + 4


def provider(request: RecordedRequest) -> ScriptedReply:
    """The fake provider's answer: the small model classifies (or answers a greeting) in
    0.3 s; the big model answers in 1.5 s, calling one tool first for a task or an urgent
    message."""
    sent = request.json or {}
    messages = list(sent.get("messages", []))
    text, model, prompt = last_user_text(messages), str(sent.get("model")), tokens_in(messages)
    kind = kind_of(text) or "question"
    if model == SMALL:
        system = str(messages[0].get("content", "")) if messages else ""
        if system.startswith("You sort incoming messages"):
            social = INTENT[kind] == "social"
            answer = json.dumps({"intent": INTENT[kind],
                                 "urgency": 0.95 if kind == "urgent" else 0.1,
                                 "reply": "Hello! Good to hear from you." if social else ""})
            reply = text_reply(answer, model=SMALL, prompt_tokens=prompt,
                               completion_tokens=24 if social else 14)
        else:
            reply = text_reply("Hello!", model=SMALL, prompt_tokens=prompt, completion_tokens=4)
        return ScriptedReply(reply.body, stall_s=SMALL_S)
    if (messages and messages[-1].get("role") == "tool") or kind not in ("task", "urgent"):
        reply = text_reply(f"Done: {text}", model=BIG, prompt_tokens=prompt,
                           completion_tokens=30)
    else:
        tool = ("notify_owner", {"message": text}) if kind == "urgent" else (
            "remember", {"text": text})
        reply = tool_call_reply([tool], model=BIG, prompt_tokens=prompt, completion_tokens=20)
    return ScriptedReply(reply.body, stall_s=BIG_S)


def start_bot(api: FakeTelegramServer, model_url: str, home: Path,
              graph: bool) -> subprocess.Popen[bytes]:
    env = clean_env() | {
        "TELEGRAM_BOT_TOKEN": api.token, "TELEGRAM_BASE_URL": api.base_url,
        "TELEGRAM_OWNER_ID": str(OWNER), "TELEGRAM_ALLOWED_USERS": str(GUEST),
        "FRONTDESK_HOME": str(home), "FRONTDESK_MODEL_PROVIDER": "openai",
        "OPENAI_BASE_URL": model_url, "OPENAI_API_KEY": "sk-bench-not-a-secret",
        "FRONTDESK_SMALL_MODEL": SMALL, "FRONTDESK_BIG_MODEL": BIG,
        "FRONTDESK_GRAPH_WORKFLOWS": "1" if graph else "0"}
    return subprocess.Popen([sys.executable, "-m", "bot.cli.main", "run"], env=env, cwd=home,
                            stdout=subprocess.DEVNULL)


def round_trip(api: FakeTelegramServer, user: int, text: str) -> float:
    """Seconds from queuing one message to the bot's (first) reply in that chat."""
    before = len(api.messages_to(user))
    started = time.perf_counter()
    api.push_message(user, user, text)
    api.wait_for_sync(lambda: len(api.messages_to(user)) > before, timeout=60)
    return time.perf_counter() - started


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Calls:
    """What one kind's messages cost in one mode, summed from the run traces."""

    messages: int = 0
    small: int = 0
    big: int = 0
    cancelled: int = 0
    tokens: int = 0
    cancelled_tokens: int = 0
    big_by_message: list[int] = field(default_factory=list)


def read_calls(home: Path) -> dict[str, Calls]:
    """Per kind: the model calls and tokens each message's run recorded."""
    store = RunStore(home / "frontdesk.db")
    totals: dict[str, Calls] = defaultdict(Calls)
    for run in store.runs(limit=10_000):
        kind = kind_of(str(store.record(run.id).input.get("text", "")))
        if kind is None:
            continue
        calls, big = totals[kind], 0
        calls.messages += 1
        for event in store.events(run.id):
            if event["event"] != "model_call":
                continue
            used = int(event.get("input_tokens") or 0) + int(event.get("output_tokens") or 0)
            calls.tokens += used
            big += event.get("role") == "big"
            if event.get("role") == "small":
                calls.small += 1
            else:
                calls.big += 1
            if event.get("cancelled"):
                calls.cancelled += 1
                calls.cancelled_tokens += used
        calls.big_by_message.append(big)
    store.close()
    return totals


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8, help="messages of each kind per mode")
    parser.add_argument("--keep", type=Path, help="keep both bots' homes here (their runs can "
                        "then be read with `frontdesk runs` or the dashboard)")
    args = parser.parse_args()
    times: dict[str, dict[str, list[float]]] = {"graph": defaultdict(list),
                                                 "loop": defaultdict(list)}
    with (FakeOpenAIServer() as model_api, FakeTelegramServer() as graph_api,
          FakeTelegramServer() as loop_api, tempfile.TemporaryDirectory() as tmp):
        model_api.responder = provider
        where = args.keep or Path(tmp)
        homes = {"graph": where / "graph", "loop": where / "loop"}
        apis = {"graph": graph_api, "loop": loop_api}
        for home in homes.values():
            home.mkdir(parents=True)
        bots = [start_bot(apis[mode], model_api.base_url, homes[mode], mode == "graph")
                for mode in ("graph", "loop")]
        try:
            for api in apis.values():
                api.wait_for_sync(lambda api=api: api.polls > 0, timeout=60)
            for mode in ("graph", "loop"):
                round_trip(apis[mode], OWNER, WARM_UP)
            kinds = list(MESSAGES)
            for n in range(args.rounds):
                # each round in another order, so that no kind always follows the same one
                for kind in kinds[n % len(kinds):] + kinds[:n % len(kinds)]:
                    texts = MESSAGES[kind]
                    text, user = texts[n % len(texts)], SENDER.get(kind, OWNER)
                    for mode in (("graph", "loop") if n % 2 else ("loop", "graph")):
                        times[mode][kind].append(round_trip(apis[mode], user, text))
        finally:
            for bot in bots:
                bot.terminate()
                bot.wait(10)
        calls = {mode: read_calls(homes[mode]) for mode in homes}
    report(times, calls, args.rounds)
    return 0


def report(times: dict[str, dict[str, list[float]]], calls: dict[str, dict[str, Calls]],
           rounds: int) -> None:
    print(f"small model {SMALL_S} s, big model {BIG_S} s per call; {rounds} messages of each "
          "kind per mode; p50 / p90 in seconds; calls and tokens per message")
    print(f"{'kind':17} {'mode':5} {'p50':>6} {'p90':>6} {'ratio':>6}  {'small':>5} {'big':>5}"
          f" {'cancelled':>9} {'tokens':>7} {'of them cancelled':>17}")
    verdicts = []
    for kind in MESSAGES:
        loop_p50 = statistics.median(times["loop"][kind])
        for mode in ("graph", "loop"):
            values, used = times[mode][kind], calls[mode].get(kind, Calls())
            p50, n = statistics.median(values), max(1, used.messages)
            print(f"{kind:17} {mode:5} {p50:6.3f} {percentile(values, 0.9):6.3f} "
                  f"{p50 / loop_p50:5.2f}x  {used.small / n:5.2f} {used.big / n:5.2f} "
                  f"{used.cancelled / n:9.2f} {used.tokens / n:7.0f} "
                  f"{used.cancelled_tokens / n:17.0f}")
        ratio = statistics.median(times["graph"][kind]) / loop_p50
        if kind in TARGETS:
            met = ratio <= TARGETS[kind]
            verdicts.append(f"{kind}: graph p50 {ratio:.2f}x the loop's "
                            f"({'meets' if met else 'MISSES'} ≤ {TARGETS[kind]:g}x)")
    greeting_big = sum(calls["graph"].get("greeting", Calls()).big_by_message)
    verdicts.append(f"greeting: {greeting_big} big-model calls in graph mode "
                    f"({'meets' if greeting_big == 0 else 'MISSES'} never)")
    print("\n".join(verdicts))


if __name__ == "__main__":
    raise SystemExit(main())
