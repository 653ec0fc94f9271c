"""Bench the triage's latency tax: graph mode against the plain loop through `frontdesk run`.

Usage:
    .venv/bin/python bench/triage_tax.py              # 20 messages of each kind per mode
    .venv/bin/python bench/triage_tax.py --rounds 10
    .venv/bin/python bench/triage_tax.py --keep-alive  # connections kept, as in a busy chat

Two `frontdesk run` processes (``bench/frontdesk_run.py``: the defaults, merging on, as a
person meets them), one in graph mode and one with FRONTDESK_GRAPH_WORKFLOWS=0, each poll their own
loopback Telegram fake (``tests/fakes/telegram_server.py``) and share one OpenAI-compatible
fake (``tests/fakes/openai_server.py``) that answers like a provider: the small model
(``gpt-4.1-mini``) in 0.3 s, the big one (``gpt-4.1``) in 1.5 s per call. Each call opens its
own connection (the fake answers ``Connection: close``), as after the minutes of quiet between
a front desk's messages: kept-alive connections would favour the loop, whose every message
warms its big model's connection. Messages alternate between the two bots, so a noisy machine
slows both alike, and each round takes the kinds in another order. Kinds:

- greeting: the owner says hello (the small model answers it in its classify JSON);
- question: the owner asks (the big model answers in one turn);
- task: the owner asks for something done (the big model calls ``remember``, then answers);
- urgent: an allowed guest reports an emergency (graph: passed on to the owner; loop: the big
  model calls ``notify_owner``, then answers);
- misread greeting: small talk the offline rules take for a question, so the big model's
  first turn is started and then cancelled when the small model says social: what a miss
  costs.

Latency is from queuing the update in the Telegram fake to the reply (the sender's) arriving
there. The ratio is graph p50 over loop p50, with a 90 % interval from resampling the rounds
(1,000 draws): how far luck could move it. Model calls and tokens per message are read from
each run's trace (its ``model_call`` events, cancelled ones included, counted as Frontdesk
counted them), and its ``speculation`` events: first turns started early, adopted, cancelled.
Then each bot gets a burst: ``BURST`` lines from the owner, ``BURST_GAP_S`` apart (someone
typing a thought line by line), answered with 1 reply, as 1 turn (at most one cancelled turn
more: the first line's, started at once and cancelled by the second).

Targets: questions and tasks at p50 ≤ 1.05× the loop's; a greeting and an urgent message
≤ 0.5× the loop's, a greeting never on the big model; the burst: 1 reply.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

# The repository instead of bench/, whose telegram.py would shadow python-telegram-bot.
sys.path.remove(str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.frontdesk_run import percentile, round_trip, start_frontdesk, stop
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
    "misread greeting": ["what's up?", "how is it going?", "did you sleep well?",
                         "can you believe this weather?"],
}
INTENT = {"greeting": "social", "question": "question", "task": "task", "urgent": "urgent",
          "misread greeting": "social"}
SENDER = {"urgent": GUEST}  # everything else comes from the owner
TARGETS = {"question": 1.05, "task": 1.05, "greeting": 0.5, "urgent": 0.5}
BURST = [f"burst line {n + 1} of a thought typed line by line" for n in range(10)]
BURST_GAP_S = 0.2
BURST_QUIET_S = 8.0  # after the first reply to a burst: time enough for a second turn's reply
WARM_UP = "what is new?"  # each bot's first message: the SDK's import, the first connection
COLD = {"Connection": "close"}  # every model call on a connection of its own
DRAWS = 1000  # resamples of the rounds for the ratio's interval


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
        return ScriptedReply(reply.body, stall_s=SMALL_S, headers=COLD)
    if (messages and messages[-1].get("role") == "tool") or kind not in ("task", "urgent"):
        reply = text_reply(f"Done: {text}", model=BIG, prompt_tokens=prompt,
                           completion_tokens=30)
    else:
        tool = ("notify_owner", {"message": text}) if kind == "urgent" else (
            "remember", {"text": text})
        reply = tool_call_reply([tool], model=BIG, prompt_tokens=prompt, completion_tokens=20)
    return ScriptedReply(reply.body, stall_s=BIG_S, headers=COLD)


def start_bot(api: FakeTelegramServer, model_url: str, home: Path,
              graph: bool) -> subprocess.Popen[bytes]:
    return start_frontdesk(api, home, {
        "TELEGRAM_OWNER_ID": str(OWNER), "TELEGRAM_ALLOWED_USERS": str(GUEST),
        "FRONTDESK_MODEL_PROVIDER": "openai",
        "OPENAI_BASE_URL": model_url, "OPENAI_API_KEY": "sk-bench-not-a-secret",
        "FRONTDESK_SMALL_MODEL": SMALL, "FRONTDESK_BIG_MODEL": BIG,
        "FRONTDESK_GRAPH_WORKFLOWS": "1" if graph else "0"})


@dataclass
class Calls:
    """What one kind's messages cost in one mode, summed from the run traces."""

    messages: int = 0
    small: int = 0
    big: int = 0
    cancelled: int = 0
    tokens: int = 0
    cancelled_tokens: int = 0
    speculated: int = 0  # first turns started early ...
    adopted: int = 0  # ... taken by full_agent
    big_by_message: list[int] = field(default_factory=list)


def read_calls(home: Path) -> dict[str, Calls]:
    """Per kind: the model calls, tokens and speculations each message's run recorded."""
    store = RunStore.open(home / "frontdesk.db")
    totals: dict[str, Calls] = defaultdict(Calls)
    for run in store.runs(limit=10_000):
        kind = kind_of(str(store.record(run.id).input.get("text", "")))
        if kind is None:
            continue
        calls, big = totals[kind], 0
        calls.messages += 1
        for event in store.events(run.id):
            if event["event"] == "speculation":
                calls.speculated += event.get("outcome") == "started"
                calls.adopted += event.get("outcome") == "adopted"
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
    store.db.close()
    return totals


Times = dict[str, dict[str, list[float]]]  # mode -> kind -> seconds, one per round


@dataclass
class Burst:
    """What one burst got: replies, the seconds from its last line to the first reply, and
    its runs by status (a cancelled one is the first line's turn that gave way)."""

    replies: int
    last_line_to_reply_s: float
    runs: Counter[str]


def send_burst(api: FakeTelegramServer) -> tuple[int, float]:
    """``BURST`` from the owner, ``BURST_GAP_S`` apart: the replies, and the seconds from the
    last line to the first reply (waiting ``BURST_QUIET_S`` more for a second one)."""
    before = len(api.messages_to(OWNER))
    for number, line in enumerate(BURST):
        if number:
            time.sleep(BURST_GAP_S)  # the person's pace
        api.push_message(OWNER, OWNER, line)
    sent = time.perf_counter()
    api.wait_for_sync(lambda: len(api.messages_to(OWNER)) > before, timeout=60)
    first = time.perf_counter() - sent
    time.sleep(BURST_QUIET_S)  # no second reply may come
    return len(api.messages_to(OWNER)) - before, first


def burst_runs(home: Path) -> Counter[str]:
    """The statuses of the runs that answered the burst's lines (by its first line)."""
    store = RunStore.open(home / "frontdesk.db")
    statuses = Counter(run.status for run in store.runs(limit=10_000)
                       if str(store.record(run.id).input.get("text", "")).startswith(BURST[0]))
    store.db.close()
    return statuses


def measure(rounds: int, keep: Path | None, keep_alive: bool
            ) -> tuple[Times, dict[str, dict[str, Calls]], dict[str, Burst]]:
    """Both bots, ``rounds`` messages of each kind each, then a burst each; their latencies,
    their traces and the bursts."""
    times: Times = {"graph": defaultdict(list), "loop": defaultdict(list)}
    with (FakeOpenAIServer() as model_api, FakeTelegramServer() as graph_api,
          FakeTelegramServer() as loop_api, tempfile.TemporaryDirectory() as tmp):
        model_api.responder = provider if not keep_alive else (
            lambda request: replace(provider(request), headers={}))
        where = keep or Path(tmp)
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
            for n in range(rounds):
                # each round in another order, so that no kind always follows the same one
                for kind in kinds[n % len(kinds):] + kinds[:n % len(kinds)]:
                    texts = MESSAGES[kind]
                    text, user = texts[n % len(texts)], SENDER.get(kind, OWNER)
                    for mode in (("graph", "loop") if n % 2 else ("loop", "graph")):
                        times[mode][kind].append(round_trip(apis[mode], user, text))
            sent = {mode: send_burst(apis[mode]) for mode in ("graph", "loop")}
        finally:
            stop(*bots)
        bursts = {mode: Burst(*sent[mode], burst_runs(homes[mode])) for mode in homes}
        return times, {mode: read_calls(homes[mode]) for mode in homes}, bursts


def ratio_interval(graph: list[float], loop: list[float]) -> tuple[float, float]:
    """The 5th and 95th percentiles of the p50 ratio over rounds drawn again with replacement
    (a round's two latencies stay together: they ran back to back)."""
    draw, pairs, ratios = random.Random(27), list(zip(graph, loop, strict=True)), []
    for _ in range(DRAWS):
        sample = [draw.choice(pairs) for _ in pairs]
        ratios.append(statistics.median(g for g, _ in sample) /
                      statistics.median(lo for _, lo in sample))
    return percentile(ratios, 0.05), percentile(ratios, 0.95)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="messages of each kind per mode")
    parser.add_argument("--keep", type=Path, help="keep both bots' homes here (their runs can "
                        "then be read with `frontdesk runs` or the dashboard)")
    parser.add_argument("--keep-alive", action="store_true", help="let the model calls reuse "
                        "their connections (favours the loop: see above)")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    times, calls, bursts = measure(args.rounds, args.keep, args.keep_alive)
    print(f"machine load (1-minute average) {load_before:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after, on {os.cpu_count()} cores; model calls "
          f"{'reuse their connections' if args.keep_alive else 'on a connection each'}")
    report(times, calls, args.rounds)
    report_bursts(bursts)
    return 0


def report_bursts(bursts: dict[str, Burst]) -> None:
    """One line per mode: what a burst of ``BURST`` lines got."""
    for mode, burst in bursts.items():
        runs = ", ".join(f"{count} {status}" for status, count in sorted(burst.runs.items()))
        met = burst.replies == 1 and burst.runs["completed"] == 1 \
            and burst.runs["cancelled"] <= 1
        print(f"burst ({mode}): {len(BURST)} lines {BURST_GAP_S:g} s apart -> "
              f"{burst.replies} repl(y/ies), runs {runs}; last line to reply "
              f"{burst.last_line_to_reply_s:.2f} s ({'meets' if met else 'MISSES'} 1 reply, "
              "1 turn + at most 1 cancelled)")


def report(times: Times, calls: dict[str, dict[str, Calls]], rounds: int) -> None:
    print(f"small model {SMALL_S} s, big model {BIG_S} s per call; {rounds} messages of each "
          "kind per mode; p50 / p90 in seconds; calls and tokens per message (cancelled ones "
          "included); speculative first turns started / adopted per message")
    print(f"{'kind':17} {'mode':5} {'p50':>6} {'p90':>6} {'ratio':>6} {'90% interval':>13}  "
          f"{'small':>5} {'big':>5} {'cancelled':>9} {'tokens':>7} {'cancelled':>9}  "
          f"{'early':>5} {'adopted':>7}")
    verdicts = []
    for kind in MESSAGES:
        loop_p50 = statistics.median(times["loop"][kind])
        low, high = ratio_interval(times["graph"][kind], times["loop"][kind])
        for mode in ("graph", "loop"):
            values, used = times[mode][kind], calls[mode].get(kind, Calls())
            p50, n = statistics.median(values), max(1, used.messages)
            spread = f"{low:.2f}-{high:.2f}x" if mode == "graph" else ""
            print(f"{kind:17} {mode:5} {p50:6.3f} {percentile(values, 0.9):6.3f} "
                  f"{p50 / loop_p50:5.2f}x {spread:>13}  {used.small / n:5.2f} "
                  f"{used.big / n:5.2f} {used.cancelled / n:9.2f} {used.tokens / n:7.0f} "
                  f"{used.cancelled_tokens / n:9.0f}  {used.speculated / n:5.2f} "
                  f"{used.adopted / n:7.2f}")
        ratio = statistics.median(times["graph"][kind]) / loop_p50
        if kind in TARGETS:
            met = ratio <= TARGETS[kind]
            verdicts.append(f"{kind}: graph p50 {ratio:.2f}x the loop's, 90 % interval "
                            f"{low:.2f}-{high:.2f}x ({'meets' if met else 'MISSES'} "
                            f"≤ {TARGETS[kind]:g}x)")
    greeting_big = sum(calls["graph"].get("greeting", Calls()).big_by_message)
    verdicts.append(f"greeting: {greeting_big} big-model calls in graph mode "
                    f"({'meets' if greeting_big == 0 else 'MISSES'} never)")
    print("\n".join(verdicts))


if __name__ == "__main__":
    raise SystemExit(main())
