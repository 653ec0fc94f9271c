"""Strangers: what happens when someone not on the allowlist writes (the gateway's one hook).

With ``FRONTDESK_PAIRING=off`` (the default) a stranger gets one refusal per chat, as before.
With ``ask`` their first message gets one short "I've asked the owner", and the owner gets one
message naming them (name, username, numeric id, platform, first words) with **Allow** /
**Block** buttons; later messages from them get nothing until the owner decides. The person,
their waiting message and the decision live in the ``people`` table (``bot.access.people``),
and the buttons are opaque press tokens of their own kind (``bot.delivery.buttons``), so a
press after a restart still works.
Allow hands the waiting message back for the gateway to answer (recorded in the inbox
first: a crash after the press still answers it at the next start); Block keeps them
refused. No model is called for a stranger. Either way the terminal says once per person who
wrote and how to allow them.

Prompts are limited like urgent notices: at most ``LIMIT`` messages about strangers reach the
owner in any ``WINDOW_S``. Someone who asks beyond that is kept (row and waiting message) and
held; when the next slot opens, everyone held leaves as one summary naming them with a
**Review them** button, whose press sends each one's own Allow / Block prompt (``REVIEW_BATCH``
at a time; the owner asked for those, so they are not counted). A timer wakes then; after a
restart the held ones leave at ``resume()`` or with the next stranger's message. Their names
and words are shown cleaned (``bot.config.text``: no controls, no bidi overrides) and escaped.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from bot.access.people import People, Person
from bot.config.bounded import RecentSet
from bot.config.settings import Settings
from bot.config.text import escape_markdown, one_line, one_name, shown
from bot.delivery.buttons import Buttons, ButtonTarget
from bot.delivery.hourly import HourlyQueue
from bot.delivery.inbox import Inbox
from bot.delivery.outbox import Outbox
from bot.messages import Accepted, Button, IncomingMessage, PressResult, Reply

log = logging.getLogger("frontdesk.access")

REFUSAL = "Sorry, I only work for the people I've been set up for."
ASKED = "I've asked the owner whether I may talk with you; you'll hear from me if they agree."
KIND = "pairing"  # the kind of pairing's buttons (``bot.delivery.buttons``)
PAIRING_RUN = "pairing:"  # the prefix of a pairing button's run id (one per stranger)
REVIEW_RUN = PAIRING_RUN + "review"  # a summary's button: send the held people's prompts
SUMMARY = "pairing-summary:"  # the prefix of a summary's outbox key
LIMIT = 5  # messages about strangers ...
WINDOW_S = 3600.0  # ... in any hour
TOLD_KEPT = 10_000  # strangers the terminal remembers having been told about
SUMMARY_NAMES = 20  # a summary names at most this many
REVIEW_BATCH = 10  # prompts sent per press of Review
WAIT_KEY = "pairing"
STRANGERS = "strangers"  # the one scope of the hourly limit: all strangers share it
LABELS = {"allow": "Allow", "block": "Block"}
FIRST_WORDS = 120
ALLOWLIST_VARS = {"telegram": "TELEGRAM_ALLOWED_USERS", "discord": "DISCORD_ALLOWED_USERS"}
OWNER_VARS = {"telegram": "TELEGRAM_OWNER_ID", "discord": "DISCORD_OWNER_ID"}


def first_words(text: str, limit: int = FIRST_WORDS) -> str:
    """The start of a message on one line."""
    return one_line(text, limit)


def prompt_key(platform: str, user_id: str, message_id: str) -> str:
    """The outbox key of the owner's prompt about one ask (a new ask after
    ``frontdesk people remove`` is a new prompt)."""
    return f"pairing:{platform}:{user_id}:{message_id}"


class Strangers:
    """Refuse, or ask the owner about, someone not on the allowlist; take the owner's press."""

    def __init__(self, settings: Settings, inbox: Inbox, buttons: Buttons, outbox: Outbox,
                 people: People,
                 owner_chat: Callable[[str], Awaitable[str]], *,
                 clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.settings = settings
        self.inbox = inbox
        self.button_tokens = buttons
        self.outbox = outbox
        self.people = people
        self.owner_chat = owner_chat
        self.clock = clock
        self.sleep = sleep
        # whom the terminal was told about: the most recent strangers only (anyone may write;
        # one forgotten is told about again, one log line)
        self._told: RecentSet[tuple[str, str]] = RecentSet(limit=TOLD_KEPT)
        self.hourly = HourlyQueue(
            limit=LIMIT, window_s=WINDOW_S,
            sent_times=lambda _scope, since: self.people.shown_times(since),
            held_scopes=lambda: [STRANGERS] if self.people.held() else [],
            send_held=lambda _scope, now: self._send_summaries(now),
            failure="could not send the summary of the people held back",
            clock=lambda: self.clock(), sleep=lambda s: self.sleep(s))
        self.reviewing: set[asyncio.Task[None]] = set()  # prompts a Review press is sending

    # -- a stranger writes -------------------------------------------------------------
    async def arrived(self, msg: IncomingMessage) -> Reply | None:
        """The answer to a stranger's message (None: nothing is said)."""
        self.tell_terminal(msg)
        owner_platform = self._owner_platform(msg.platform)
        if self.settings.pairing != "ask" or owner_platform is None:
            return await self._refuse(msg)
        status = self.people.status(msg.platform, msg.user_id)
        if status == "blocked":
            return await self._refuse(msg)
        name = msg.user_name or msg.user_id
        first = status is None and self.people.ask(msg.platform, msg.user_id, name,
                                                   msg.user_handle, first_words(msg.text),
                                                   msg.to_json())
        # Every message while asked re-offers the prompt; its outbox key makes it one, and a
        # crash between the row and the prompt is mended by their next message.
        await self._ask_owner(owner_platform, msg.platform, msg.user_id)
        if not first:
            return None
        await self.outbox.deliver(msg.platform, msg.chat_id, f"refusal:{msg.message_id}", ASKED)
        return Reply(ASKED, "refused")

    async def _ask_owner(self, owner_platform: str, platform: str, user_id: str) -> None:
        """Put a person still asking before the owner: their own prompt while the hourly
        limit has room (again under the same key: a crash in between is mended), else held
        for the next summary; nothing once a summary has shown them."""
        async with self.hourly.lock:
            now = self.clock()
            if self.hourly.has_room(STRANGERS, now):  # those held before them first
                await self._send_summaries(now, but=(platform, user_id))
            shown = self.people.shown_in(platform, user_id)
            if shown is None and self.hourly.has_room(STRANGERS, now):
                key = await self._prompt(owner_platform, platform, user_id)
                if key is not None:  # recorded after the send: a crash re-sends, same key
                    self.people.shown([(platform, user_id)], key, now)
            elif shown is not None and not shown.startswith(SUMMARY):
                await self._prompt(owner_platform, platform, user_id)
            self.hourly.schedule()

    async def _prompt(self, owner_platform: str, platform: str, user_id: str) -> str | None:
        """Queue the owner's own prompt about one person (once per key); its key, or None
        when they have no waiting message."""
        waiting = self.people.waiting_message(platform, user_id)
        if waiting is None:
            return None
        chat = await self.owner_chat(owner_platform)
        key = prompt_key(platform, user_id, str(waiting.get("message_id")))
        if not self.outbox.queued(owner_platform, chat, key):
            await self.outbox.deliver(owner_platform, chat, key,
                                      self.prompt(IncomingMessage.from_json(waiting)),
                                      self.buttons(platform, user_id))
        return key

    async def _refuse(self, msg: IncomingMessage) -> Reply | None:
        if not self.inbox.refuse_once(msg.platform, msg.chat_id):
            return None
        await self.outbox.deliver(msg.platform, msg.chat_id, f"refusal:{msg.message_id}",
                                  REFUSAL)
        return Reply(REFUSAL, "refused")

    def _owner_platform(self, platform: str) -> str | None:
        """Where the owner is asked: on the stranger's platform, else where they have an id."""
        owners = self.settings.owner_ids()
        if platform in owners:
            return platform
        return next(iter(owners), None)

    def prompt(self, msg: IncomingMessage) -> str:
        """The owner's message about a stranger (an approval card: Allow / Block); their name
        and words shown as code, which no platform makes a link or markup of, without
        controls or bidi overrides (which could reorder the id shown after them)."""
        name = shown(one_name(msg.user_name), "markdown-code") or "(no name)"
        handle = f" (@{shown(one_name(msg.user_handle), 'markdown-code')})" \
            if msg.user_handle else ""
        words = shown(first_words(msg.text), "markdown-code")
        return (f"Someone new wants to talk to me on {msg.platform}: {name}{handle}, "
                f"id {escape_markdown(one_name(msg.user_id))}."
                f"\nThey wrote: {words}\nAllow them to write to me?")

    def buttons(self, platform: str, user_id: str) -> list[Button]:
        run = f"{PAIRING_RUN}{platform}:{user_id}"
        return self.button_tokens.for_options(KIND, run, WAIT_KEY, list(LABELS.items()))

    def tell_terminal(self, msg: IncomingMessage) -> None:
        """Once per person and process: who wrote, their numeric id, and how to allow them."""
        who = (msg.platform, msg.user_id)
        if who in self._told or msg.platform not in OWNER_VARS:
            return
        self._told.add(who)
        handle = f", @{one_name(msg.user_handle)}" if msg.user_handle else ""
        name = f" ({one_name(msg.user_name)}{handle})" if msg.user_name else ""
        who_id = one_name(msg.user_id)
        if msg.platform not in self.settings.owner_ids():
            log.warning("%s is not set, so %s user %s%s was refused. If that is you, set "
                        "%s=%s in .env and restart.", OWNER_VARS[msg.platform], msg.platform,
                        who_id, name, OWNER_VARS[msg.platform], who_id)
            return
        allow = f"add {who_id} to {ALLOWLIST_VARS[msg.platform]} in .env and restart"
        if self.settings.pairing == "ask":
            log.warning("%s user %s%s is not allowed; the owner was asked to Allow or Block "
                        "them (or %s).", msg.platform, who_id, name, allow)
        else:
            log.warning("%s user %s%s is not allowed and was refused. To allow them, %s, or "
                        "set FRONTDESK_PAIRING=ask to be asked next time.", msg.platform,
                        who_id, name, allow)

    # -- the owner presses Allow or Block ----------------------------------------------
    def press(self, target: ButtonTarget) -> tuple[PressResult, Accepted | None]:
        """Decide once; on Allow, the waiting message to answer now (it is recorded in the
        inbox first, so a crash before its answer still answers it at the next start)."""
        if target.run_id == REVIEW_RUN:
            return self._review_pressed(target.wait_key), None
        who = target.run_id[len(PAIRING_RUN):].partition(":")  # (platform, ":", user id)
        platform = who[0]
        user_id = who[2]
        if self.people.status(platform, user_id) != "asked":
            return PressResult("This was already decided.", False), None
        waiting = self.people.waiting_message(platform, user_id)
        msg = IncomingMessage.from_json(waiting) if waiting else None
        allow = target.answer == "allow"
        # Recorded in the inbox before the decision: a crash after it answers it at start.
        recorded = allow and msg is not None and self.inbox.record(
            msg.platform, msg.chat_id, msg.message_id, msg.user_id, msg.to_json())
        self.people.decide(platform, user_id, "allowed" if allow else "blocked")
        self.people.take_message(platform, user_id)
        log.warning("the owner %s %s user %s", "allowed" if allow else "blocked", platform,
                    user_id)
        edit = (f"Allowed: {platform} user {user_id} may write to me now." if allow
                else f"Blocked: {platform} user {user_id} stays refused.")
        admitted = Accepted(msg, "allowed") if recorded and msg is not None else None
        return PressResult(f"{target.label} ✓", True, edit_text=edit), admitted

    # -- the hourly limit: held people leave as one summary -----------------------------
    async def resume(self) -> None:
        """At start: send the summary whose slot opened while down, and set the timer."""
        await self.hourly.resume()

    async def _send_summaries(self, now: float, but: tuple[str, str] | None = None) -> None:
        """One summary per owner platform of everyone held (``but`` one); the caller checked
        that a slot is open."""
        held = [p for p in self.people.held() if (p.platform, p.user_id) != but]
        by_owner: dict[str, list[Person]] = {}
        for person in held:
            if (owner := self._owner_platform(person.platform)) is not None:
                by_owner.setdefault(owner, []).append(person)
        for owner_platform, people in by_owner.items():
            names = "|".join(f"{p.platform}:{p.user_id}" for p in people)
            key = SUMMARY + hashlib.sha256(names.encode()).hexdigest()[:24]
            chat = await self.owner_chat(owner_platform)
            [button] = self.button_tokens.for_options(KIND, REVIEW_RUN, key,
                                                      [("review", "Review them")])
            await self.outbox.deliver(owner_platform, chat, key, summary_text(people), [button])
            self.people.shown([(p.platform, p.user_id) for p in people], key, now)

    # -- Review: each held person's own prompt, on the owner's request ------------------
    def _review_pressed(self, summary: str) -> PressResult:
        task = asyncio.get_running_loop().create_task(self._review(summary))
        self.reviewing.add(task)
        task.add_done_callback(self.reviewing.discard)
        return PressResult("Review ✓", True, edit_text="Their prompts follow, one each.")

    async def _review(self, summary: str) -> None:
        """The own prompts of the next ``REVIEW_BATCH`` people a summary showed who have none
        yet; then, if more are left, one more message with a Review button."""
        try:
            async with self.hourly.lock:
                left = [p for p in self.people.shown_by(summary)
                        if not await self._has_prompt(p)]
                for person in left[:REVIEW_BATCH]:
                    owner_platform = self._owner_platform(person.platform)
                    if owner_platform is not None:
                        await self._prompt(owner_platform, person.platform, person.user_id)
                rest = left[REVIEW_BATCH:]
                owner_platform = self._owner_platform(rest[0].platform) if rest else None
                if owner_platform is not None:
                    chat = await self.owner_chat(owner_platform)
                    [button] = self.button_tokens.for_options(KIND, REVIEW_RUN, summary,
                                                              [("review", "Review them")])
                    await self.outbox.deliver(
                        owner_platform, chat, f"{summary}:left:{len(rest)}",
                        f"{len(rest)} more people from that summary are still waiting.",
                        [button])
        except Exception:  # the summary's people stay asked; `frontdesk people` lists them
            log.exception("could not send the prompts of the people held back")

    async def _has_prompt(self, person: Person) -> bool:
        owner_platform = self._owner_platform(person.platform)
        waiting = self.people.waiting_message(person.platform, person.user_id)
        if owner_platform is None or waiting is None:
            return True
        key = prompt_key(person.platform, person.user_id, str(waiting.get("message_id")))
        return self.outbox.queued(owner_platform, await self.owner_chat(owner_platform), key)


def summary_text(people: Sequence[Person]) -> str:
    """The owner's message about the people held back: how many, who (cleaned, escaped),
    and how to review them."""
    count = len(people)
    noun = "person" if count == 1 else "people"
    lines = [f"**{count} more {noun} asked to talk to me** (held back by the limit of {LIMIT} "
             "prompts an hour):"]
    for person in people[:SUMMARY_NAMES]:
        handle = f" (@{escape_markdown(one_name(person.username))})" if person.username else ""
        lines.append(f"- {escape_markdown(one_name(person.name) or '(no name)')}{handle}, "
                     f"{person.platform} id {escape_markdown(one_name(person.user_id))}: "
                     f"{escape_markdown(one_line(person.first_words, 80))}")
    if count > SUMMARY_NAMES:
        lines.append(f"… and {count - SUMMARY_NAMES} more.")
    lines.append(f"Review them to get each one's Allow / Block ({REVIEW_BATCH} at a time); "
                 "`frontdesk people` lists everyone who asked.")
    return "\n".join(lines)
