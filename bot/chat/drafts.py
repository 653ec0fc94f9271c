"""Drafts the owner approves: a reply to a message that ``needs_approval`` is not sent to its
sender; the owner gets it as a card with **Send** and **Don't send**.

``hold`` keeps the answer (``bot.delivery.drafts``, so it survives a restart) and sends the
card to the owner's chat (``OwnerNotifier.owner_place``), once per message (the outbox key):
who wrote, the beginning of what they wrote and the draft, all of it quoted as plain text,
never markup (other people's words, and an answer made from them). The card's buttons are of
the ``draft`` kind (``bot.delivery.buttons``), which ``PressKinds`` hands to ``press``: only
the owner's press counts, and it decides a draft once. Send queues the draft to the sender
(or the Reply-To the message named) under the original message's id as its outbox key, so
it is queued once even when pressed twice, replayed, or pressed again after a restart; a
crash between the decision and the queueing is made good at start (``queue_owed``).
Don't send sends nothing, and the card says so.
"""

from __future__ import annotations

import logging

from bot.access.allowlist import Access
from bot.chat.decisions import NOT_OWNER, STALE, Decided
from bot.chat.locks import ChatLocks
from bot.delivery.buttons import Buttons, ButtonTarget
from bot.delivery.drafts import DROPPED, SEND, Draft, Drafts, draft_id
from bot.delivery.notifier import Notice, OwnerNotifier, Theirs
from bot.delivery.outbox import Outbox
from bot.messages import IncomingMessage, PressResult, Reply

log = logging.getLogger(__name__)

KIND = "draft"  # the buttons' kind
SEND_LABEL = "Send"
DROP_LABEL = "Don't send"
CARD_PREFIX = "draft-card:"  # + draft id: the outbox key of the owner's card
THEIR_LINES = 8  # what the card quotes of their message at most: lines ...
THEIR_CHARS = 600  # ... and characters


def card_key(id_: str) -> str:
    return f"{CARD_PREFIX}{id_}"


def card(draft: Draft, platform: str) -> str:
    """The owner's card: who wrote, the beginning of their message, the draft."""
    lines = draft.their_text.strip().splitlines()[:THEIR_LINES]
    theirs = "\n".join(lines)[:THEIR_CHARS] or "(no text)"
    asked = Notice(("A reply waits for your approval. ", Theirs(draft.sender),
                    f" wrote on {draft.platform}:"), (theirs,))
    with_file = ("My draft, with ", Theirs(draft.file.name), ":") if draft.file else ()
    answer = Notice(with_file or ("My draft:",), (draft.text,))
    if platform == "console":  # a terminal shows text as it is
        return f"{asked.plain()}\n\n{answer.plain()}"
    return f"{asked.markdown()}\n\n{answer.markdown()}"


class OwnerDrafts:
    """Holds replies for the owner's approval, and sends those the owner approves."""

    def __init__(self, *, drafts: Drafts, buttons: Buttons, outbox: Outbox,
                 notifier: OwnerNotifier, access: Access, locks: ChatLocks) -> None:
        self.drafts = drafts
        self.buttons = buttons
        self.outbox = outbox
        self.notifier = notifier
        self.access = access
        self.locks = locks

    async def hold(self, msg: IncomingMessage, reply: Reply) -> Reply:
        """Keep the answer to ``msg`` as a draft and show the owner its card (once); the
        reply as the answerer records it (route ``draft``: nothing went to the sender)."""
        who = f"{msg.user_name} <{msg.user_id}>" if msg.user_name else msg.user_id
        draft = self.drafts.keep(Draft(
            draft_id(msg.platform, msg.chat_id, msg.message_id), msg.platform, msg.chat_id,
            msg.message_id, msg.reply_to or msg.chat_id, who, msg.text, reply.text,
            reply.file))
        platform, chat = await self.notifier.owner_place(msg.platform)
        key = card_key(draft.id)
        if not self.outbox.queued(platform, chat, key):  # a retry issues no second tokens
            buttons = self.buttons.for_options(KIND, draft.id, KIND, [
                ("send", SEND_LABEL), ("drop", DROP_LABEL)])
            await self.outbox.deliver(platform, chat, key, card(draft, platform), buttons)
        log.info("a reply to %s/%s waits for the owner's approval", msg.platform,
                 msg.message_id)
        return Reply(draft.text, "draft", run_id=reply.run_id,
                     model_calls=reply.model_calls, cost_usd=reply.cost_usd)

    async def press(self, target: ButtonTarget, platform: str, user_id: str) -> Decided:
        """The owner's Send or Don't send; anyone else's press decides nothing."""
        if self.access.level(platform, user_id) != "owner":
            return Decided(PressResult(NOT_OWNER, False))
        draft = self.drafts.get(target.run_id)
        if draft is None:
            return Decided(PressResult("This button is not valid (anymore).", False))
        send = target.answer == "send"
        async with self.locks.of(draft.platform, draft.to_chat):
            first = self.drafts.decide(draft.id, SEND if send else DROPPED, "owner")
            await self.queue(draft.id)  # also when a crash came after a first press
        if not first:
            return Decided(PressResult(STALE["answered"], False))
        edit = "Sent." if send else "Not sent."
        return Decided(PressResult(f"{target.label} ✓", True, edit_text=edit))

    async def queue(self, id_: str) -> None:
        """Queue a draft decided "send" to its sender, once (the original message's key)."""
        draft = self.drafts.get(id_)
        if draft is None or draft.status != SEND:
            return
        await self.outbox.deliver(draft.platform, draft.to_chat, draft.message_id,
                                  draft.text, file=draft.file)
        self.drafts.queued(draft.id)

    async def queue_owed(self) -> int:
        """At start: queue every approved draft a crash kept from its sender; how many."""
        owed = self.drafts.to_send()
        for draft in owed:
            async with self.locks.of(draft.platform, draft.to_chat):
                await self.queue(draft.id)
        return len(owed)
