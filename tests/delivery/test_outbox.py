"""One outbox for every sender: the owner notifier needs no gateway, and shares its parts and
adapters with the gateway's replies; a notice is keyed by the caller's message."""

from __future__ import annotations

from pathlib import Path

from bot.app import App, assemble
from bot.messages import Button, ChatMoved, Undeliverable
from bot.models import Models
from bot.tools.registry import Caller, caller_from_sender
from tests.support.harness import (
    GUEST,
    OWNER,
    OWNER_CHAT,
    HarnessFactory,
    PurposeModel,
    RecordingAdapter,
    make_settings,
)

NOTICE = "**Urgent message from Ann (telegram:200) on telegram:**\n> the boiler is leaking"


def services_in(home: Path) -> App:
    return assemble(make_settings(home), models=Models(
        small=PurposeModel("small"), big=PurposeModel("big")))


def guest(message_id: str) -> Caller:
    return Caller(f"telegram:{GUEST}", False, "telegram", GUEST, "Ann", message_id)


async def test_a_notice_goes_through_the_outbox_with_no_gateway(home: Path) -> None:
    services = services_in(home)
    assert services.delivery.notifier.outbox is services.delivery.outbox
    adapter = RecordingAdapter()
    services.delivery.outbox.register(adapter)
    answer = await services.delivery.notifier.notify(guest("m1"), "the boiler is leaking")
    assert answer.startswith("I've passed your message on to the owner")
    assert adapter.sent == [(OWNER_CHAT, NOTICE)]
    assert services.delivery.parts.unsent("telegram") == []


async def test_a_notice_before_any_adapter_waits_and_leaves_at_attach(home: Path) -> None:
    services = services_in(home)
    await services.delivery.notifier.notify(guest("m1"), "the boiler is leaking")
    [waiting] = services.delivery.parts.unsent("telegram")
    # no adapter to ask: Telegram's private chat with the owner has the owner's id
    assert (waiting.chat_id, waiting.text) == (OWNER, NOTICE)
    gateway = services.chat.gateway
    assert gateway.outbox is services.delivery.notifier.outbox
    adapter = RecordingAdapter()
    await gateway.attach(adapter)
    assert adapter.sent == [(OWNER, NOTICE)]
    assert services.delivery.parts.unsent("telegram") == []


async def test_a_notice_is_keyed_by_the_message_it_answers(home: Path) -> None:
    services = services_in(home)
    adapter = RecordingAdapter()
    services.delivery.outbox.register(adapter)
    for message_id in ("m1", "m1", "m2"):  # a retry of m1's run, then another message
        await services.delivery.notifier.notify(guest(message_id), "the boiler is leaking")
    assert adapter.to(OWNER_CHAT) == [NOTICE, NOTICE]
    sender = {"scope": f"telegram:{GUEST}", "is_owner": False, "platform": "telegram",
              "chat_id": GUEST, "message_id": "m1", "name": "Ann"}
    assert caller_from_sender(sender) == guest("m1")


async def test_replies_and_notices_of_one_run_leave_through_one_outbox(
        make_harness: HarnessFactory) -> None:
    h = await make_harness(FRONTDESK_GRAPH_WORKFLOWS="0")
    h.big.enqueue(tool_calls=[("notify_owner", {"message": "Bob: the server is down"})])
    h.big.enqueue(text="I've told the owner.")
    await h.send("urgent: the server is down", GUEST, message_id="g1")
    assert [chat for chat, _ in h.adapter.sent] == [OWNER_CHAT, GUEST]
    keys = [part.reply_key for part in h.services.delivery.parts.parts("telegram", GUEST, "g1")]
    assert keys == ["g1"] and h.services.delivery.parts.unsent("telegram") == []


class RefusingAdapter(RecordingAdapter):
    """Refuses one chat for good and says another has moved."""

    async def send(self, chat_id: str, text: str, buttons: list[Button] | None = None, *,
                   key: str | None = None) -> str:
        if chat_id == "blocked":
            raise Undeliverable("bot was blocked by the user")
        if chat_id == "old-group":
            raise ChatMoved("supergroup")
        return await super().send(chat_id, text, buttons, key=key)


async def test_a_refused_part_is_marked_failed_and_a_moved_chat_is_followed(home: Path) -> None:
    services = services_in(home)
    for chat, key in (("blocked", "k1"), ("old-group", "k2"), (GUEST, "k3")):
        services.delivery.parts.enqueue("telegram", chat, key, [f"for {chat}"])
    adapter = RefusingAdapter()
    services.delivery.outbox.register(adapter)
    await services.delivery.outbox.flush("telegram")  # never raises for one bad chat
    assert adapter.sent == [("supergroup", "for old-group"), (GUEST, f"for {GUEST}")]
    assert services.delivery.parts.unsent("telegram") == []
    [failure] = services.delivery.parts.failures()
    assert (failure.kind, failure.chat_id) == ("part", "blocked")
    await services.delivery.outbox.deliver("telegram", "old-group", "k4", "later")  # remembered
    assert adapter.sent[-1] == ("supergroup", "later")


def test_a_part_is_told_to_the_platform_by_a_key_no_other_part_has() -> None:
    """The row id can come back once old rows are pruned (no AUTOINCREMENT); a mail's
    Message-ID and Discord's nonce are made from the key, so it carries the part itself."""
    from bot.delivery.parts import OutboxPart

    def part(row_id: int, reply_key: str) -> OutboxPart:
        return OutboxPart(id=row_id, platform="email", chat_id="ann@example.org",
                          reply_key=reply_key, part_no=0, parts=1, text="hi", buttons=None,
                          sent=False)

    first, again, reused = part(7, "<a@x>"), part(7, "<a@x>"), part(7, "<b@x>")
    assert first.send_key == again.send_key  # a resend of the same part: the same id
    assert first.send_key != reused.send_key  # the same row id for another reply: another
    assert len(first.send_key) <= 25 and first.send_key.startswith("fd7.")
