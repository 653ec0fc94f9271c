"""Bench the gateway: messages per second and latency on the quick-reply path, nothing lost.

Usage: ``.venv/bin/python bench/gateway.py [--messages N]``. A zero-latency model (classify
says "social", the quick reply is a fixed line), an in-memory adapter and a real SQLite
database in a temporary directory. Three measurements in this process:

- reference: the triage graph alone (``run_graph``, no store), one message after another;
- 1 chat: the same message through ``Gateway.handle`` (allowlist, inbox, history, durable
  run, trace, outbox, send), one after another;
- 200 chats at once: every chat sends a burst at the same moment; per-chat order is kept.

Prints messages/s, p50 and p99 latency, and the gateway's cost over the bare graph. Then checks
what matters more than speed: every message answered exactly once (adapter, outbox and inbox
agree), each chat's replies in order, and a replay of every message answered zero more times.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.app import assemble
from bot.config.settings import Settings
from bot.messages import Button, IncomingMessage
from bot.models import Models
from bot.models.base import Message, Observer, Reply, ToolSpec, Usage, emit
from graphs import run_graph

OWNER = "1"
CHATS = 200
SOCIAL = '{"intent": "social", "urgency": 0.1}'
ANSWER = "Hello! Nice to hear from you."


class ZeroLatencyModel:
    """The Model interface answering at once: classify → social, anything else → a greeting."""

    provider = "bench"

    def __init__(self, role: str) -> None:
        self.role = role
        self.name = f"zero-{role}"
        self.calls = 0

    async def complete(self, messages: Sequence[Message | Mapping[str, Any]], *,
                       tools: Sequence[ToolSpec] | None = None, max_tokens: int = 1024,
                       purpose: str | None = None, observer: Observer | None = None,
                       on_text: Any = None) -> Reply:
        """No work: the reply for the purpose, and the model_call event real models emit
        (nothing streamed: the quick-reply path answers from the classify call)."""
        self.calls += 1
        text = SOCIAL if purpose == "classify" else ANSWER
        emit(observer, {
            "event": "model_call", "role": self.role, "provider": self.provider,
            "model": self.name, "purpose": purpose, "input_tokens": 1, "output_tokens": 1,
            "cost_usd": 0.0, "duration_s": 0.0})
        return Reply(text, [], Usage(1, 1), self.name, self.provider)


class MemoryAdapter:
    """A Telegram-like platform that accepts every part at once and keeps it."""

    platform = "telegram"

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def split(self, text: str) -> list[str]:
        return [text]

    async def send(self, chat_id: str, text: str, buttons: list[Button] | None = None, *,
                   key: str | None = None) -> str:
        self.sent.append((chat_id, text))
        return str(len(self.sent))

    async def owner_chat(self) -> str:
        return OWNER


def message(chat: str, n: int) -> IncomingMessage:
    """Message ``n`` of a chat, from the chat's own user."""
    return IncomingMessage("telegram", chat, f"{chat}-{n}", chat, "hi there!", f"user{chat}")


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of the values, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(name: str, latencies: list[float], wall: float) -> float:
    """Print one line of figures; returns p50 in ms."""
    p50, p99 = percentile(latencies, 0.5) * 1e3, percentile(latencies, 0.99) * 1e3
    print(f"{name:<26} {len(latencies):>6} msgs {len(latencies) / wall:>9.0f} msgs/s "
          f"p50 {p50:>8.2f} ms  p99 {p99:>8.2f} ms")
    return p50


async def timed(call: Callable[[], Awaitable[Any]], out: list[float]) -> Any:
    """Await ``call()`` and append how long it took."""
    start = time.perf_counter()
    result = await call()
    out.append(time.perf_counter() - start)
    return result


async def bench(home: Path, sequential: int, burst: int) -> None:
    allowed = ",".join(str(n) for n in range(2, CHATS + 2))
    # each message its own turn: a chat's messages sent at once would otherwise be one burst
    settings = Settings.from_env({"FRONTDESK_HOME": str(home), "TELEGRAM_OWNER_ID": OWNER,
                                  "TELEGRAM_ALLOWED_USERS": allowed,
                                  "FRONTDESK_MERGE_WINDOW": "0",
                                  # the path is measured, not the pace of writes to a platform
                                  "FRONTDESK_WRITES_PER_SECOND": "100000"})
    small, big = ZeroLatencyModel("small"), ZeroLatencyModel("big")
    services = assemble(settings, models=Models(small=small, big=big))
    gateway = services.chat.gateway
    await gateway.start()
    adapter = MemoryAdapter()
    await gateway.attach(adapter)

    state = {"text": "hi there!", "history": [], "sender": {
        "scope": "owner", "is_owner": True, "platform": "telegram", "chat_id": OWNER,
        "message_id": "0", "name": "owner"}}
    reference: list[float] = []
    start = time.perf_counter()
    for _ in range(sequential):
        await timed(partial(run_graph, services.flows.triage, state), reference)
    graph_p50 = report("reference: triage graph", reference, time.perf_counter() - start)

    one_chat: list[float] = []
    start = time.perf_counter()
    for n in range(sequential):
        await timed(partial(gateway.handle, message(OWNER, n)), one_chat)
    gateway_p50 = report("gateway, 1 chat", one_chat, time.perf_counter() - start)

    chats = [str(n) for n in range(2, CHATS + 2)]
    burst_msgs = [message(chat, n) for n in range(burst) for chat in chats]
    many: list[float] = []
    start = time.perf_counter()
    replies = await asyncio.gather(*(timed(partial(gateway.handle, m), many)
                                     for m in burst_msgs))
    report(f"gateway, {CHATS} chats at once", many, time.perf_counter() - start)
    print(f"gateway over the bare graph, p50: +{gateway_p50 - graph_p50:.2f} ms "
          f"({gateway_p50 / graph_p50:.1f}x)")

    # Correctness: each message answered once, in order per chat, and never again on replay.
    total = sequential + len(burst_msgs)
    assert all(reply is not None and reply.route == "quick_reply" for reply in replies)
    assert len(adapter.sent) == total, (len(adapter.sent), total)
    per_chat = Counter(chat for chat, _ in adapter.sent)
    assert per_chat[OWNER] == sequential and all(per_chat[c] == burst for c in chats)
    conn = services.delivery.inbox.conn
    inbox = dict(conn.execute("SELECT status, COUNT(*) FROM inbox GROUP BY status").fetchall())
    assert inbox == {"answered": total}, inbox
    rows = conn.execute("SELECT COUNT(*), COUNT(DISTINCT platform || chat_id || reply_key),"
                        " COUNT(sent_at) FROM outbox").fetchone()
    assert rows == (total, total, total), rows
    for chat in chats[:5]:  # the order of one chat's answers follows its message ids
        ids = [r[0] for r in conn.execute("SELECT reply_key FROM outbox WHERE chat_id = ?"
                                          " ORDER BY id", (chat,))]
        assert ids == [f"{chat}-{n}" for n in range(burst)], ids
    replayed = await asyncio.gather(*(gateway.handle(m) for m in burst_msgs))
    assert all(reply is None for reply in replayed) and len(adapter.sent) == total
    assert big.calls == 0 and small.calls == 2 * total + 2 * sequential  # + the reference
    print(f"checked: {total} answered, 0 lost, 0 twice (adapter, outbox and inbox agree); "
          f"{len(burst_msgs)} replays answered 0 times; 0 big-model calls")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=500, help="sequential messages")
    parser.add_argument("--burst", type=int, default=5, help="messages per chat at once")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        asyncio.run(bench(Path(home), args.messages, args.burst))


if __name__ == "__main__":
    main()
