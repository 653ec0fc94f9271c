"""Live replies inside the process: the outbox delivering into messages shown live, and the
live reply's pace, floods and take-backs, against an adapter that records every write."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from bot.config.settings import Settings
from bot.delivery.live import LiveReplies, partial, pieces
from bot.messages import Button, Flooded, LiveRefused
from tests.support.harness import Harness, RecordingAdapter, until

CHAT = "-500"


class LiveRecordingAdapter(RecordingAdapter):
    """The recording adapter with the live operations: each write kept as (op, id, text)."""

    live_limit = 60

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[tuple[str, str, str]] = []
        self.floods = 0  # answer this many live writes with a flood
        self.gone: set[str] = set()  # messages that cannot be edited any more
        self._ids = itertools.count(1000)

    def live_mode(self, chat_id: str, private: bool) -> str | None:
        return "draft" if private else "edit"

    def _flood(self) -> None:
        if self.floods:
            self.floods -= 1
            raise Flooded(0.2)

    async def draft(self, chat_id: str, draft_id: int, text: str) -> None:
        self._flood()
        self.writes.append(("draft", str(draft_id), text))

    async def post(self, chat_id: str, text: str) -> str:
        self._flood()
        message_id = str(next(self._ids))
        self.writes.append(("post", message_id, text))
        return message_id

    async def edit(self, chat_id: str, message_id: str, text: str,
                   buttons: list[Button] | None = None, *, final: bool = False) -> None:
        if message_id in self.gone:
            raise LiveRefused("message to edit not found")
        if not final:
            self._flood()
        self.writes.append(("final" if final else "edit", message_id, text))

    async def delete(self, chat_id: str, message_id: str) -> None:
        self.writes.append(("delete", message_id, ""))


async def attached(harness: Harness) -> LiveRecordingAdapter:
    adapter = LiveRecordingAdapter()
    await harness.gateway.attach(adapter)
    return adapter


async def test_the_final_parts_are_edits_of_the_live_messages_and_extras_go(
        harness: Harness) -> None:
    adapter = await attached(harness)
    shown = harness.services.delivery.outbox.shown
    assert shown is not None
    for number, message_id in ((1, "11"), (2, "12"), (3, "13")):
        shown.add("telegram", CHAT, "m-1", number, message_id)
    await harness.services.delivery.outbox.deliver("telegram", CHAT, "m-1", "short final answer")
    assert adapter.writes == [("final", "11", "short final answer"), ("delete", "12", ""),
                              ("delete", "13", "")]
    assert adapter.sent == []  # no new message: the edit was the delivery
    [part] = harness.services.delivery.parts.parts("telegram", CHAT, "m-1")
    assert part.sent and shown.of("telegram", CHAT, "m-1") == {}
    await harness.services.delivery.outbox.flush("telegram")  # after a restart: nothing again
    assert len(adapter.writes) == 3


async def test_a_live_message_that_cannot_be_edited_is_deleted_and_the_answer_sent(
        harness: Harness) -> None:
    adapter = await attached(harness)
    shown = harness.services.delivery.outbox.shown
    assert shown is not None
    shown.add("telegram", CHAT, "m-2", 1, "21")
    adapter.gone.add("21")
    await harness.services.delivery.outbox.deliver("telegram", CHAT, "m-2", "the answer")
    assert adapter.writes == [("delete", "21", "")] and adapter.to(CHAT) == ["the answer"]


async def test_a_reply_grows_paced_takes_back_tool_turns_and_stops_after_three_floods(
        harness: Harness) -> None:
    adapter = await attached(harness)
    shown = harness.services.delivery.outbox.shown
    assert shown is not None
    live = LiveReplies(harness.services.delivery.outbox.adapter, shown, interval=0.05)
    reply = live.open("telegram", CHAT, "m-3", private=False)
    assert reply is not None
    reply("Short")  # not yet a sentence: nothing sent
    reply("Let me check the calendar. ")
    await until(lambda: adapter.writes)
    reply("")  # a tool turn: taken back
    text = "Your day: standup at nine, lunch with Ana at one, and the review at four."
    reply(text)
    await until(lambda: adapter.writes[-1][2] == partial(pieces(text, 60)[-1]))
    adapter.floods = 3
    reply(text + " More later.")
    await until(lambda: not reply.live)
    reply(text + " More later. And more.")
    await reply.close()
    ops = [op for op, _, _ in adapter.writes]
    assert ops[0] == "post" and ops.count("post") == 2  # past 60 characters: a second one
    assert all(t.endswith("\u2026") for _, _, t in adapter.writes)
    assert all("And more" not in t for _, _, t in adapter.writes)  # nothing after 3 floods
    assert set(live.shown.of("telegram", CHAT, "m-3")) == {1, 2}


def test_the_stream_settings_are_read_and_a_bad_one_names_its_variable(tmp_path: Path) -> None:
    read = Settings.from_env({"FRONTDESK_HOME": str(tmp_path), "FRONTDESK_STREAM": "off",
                              "FRONTDESK_STREAM_INTERVAL": "2.5"})
    assert (read.stream, read.stream_interval) == (False, 2.5)
    default = Settings.from_env({"FRONTDESK_HOME": str(tmp_path)})
    assert (default.stream, default.stream_interval) == (True, 1.0)
    with pytest.raises(ValueError, match="FRONTDESK_STREAM='sometimes' is not on or off"):
        Settings.from_env({"FRONTDESK_STREAM": "sometimes"})
    with pytest.raises(ValueError, match="FRONTDESK_STREAM_INTERVAL='0': expected a number"):
        Settings.from_env({"FRONTDESK_STREAM_INTERVAL": "0"})


def test_the_pace_of_chats_past_their_wait_is_forgotten(harness: Harness) -> None:
    now = [1000.0]
    shown = harness.services.delivery.outbox.shown
    assert shown is not None
    live = LiveReplies(harness.services.delivery.outbox.adapter, shown, interval=1.0,
                       clock=lambda: now[0])
    for chat in range(10_000):  # live writes in 10,000 chats, 100 a second
        now[0] += 0.01
        live.last_write[("telegram", str(chat))] = now[0]
        live.forget_past()
    live.not_before[("telegram", "flooded")] = now[0] + 30  # a flood wait still running
    now[0] += 0.5
    live.last_write[("telegram", "late")] = now[0]
    live.forget_past()
    assert len(live.last_write) + len(live.not_before) <= 256 + 2
    assert live.wait_before_write(("telegram", "flooded")) > 29  # kept: its wait is not over
    assert live.wait_before_write(("telegram", "late")) == pytest.approx(1.0)
    assert live.wait_before_write(("telegram", "0")) == 0.0  # forgotten: may write at once
