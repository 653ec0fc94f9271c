"""Strangers: what happens when someone not on the allowlist writes (the gateway's one hook).

With ``FRONTDESK_PAIRING=off`` (the default) a stranger gets one refusal per chat, as before.
With ``ask`` their first message gets one short "I've asked the owner", and the owner gets one
message naming them (name, username, numeric id, platform, first words) with **Allow** /
**Block** buttons; later messages from them get nothing until the owner decides. The person,
their waiting message and the decision live in the ``people`` table (``bot.access.people``), and the
buttons are the ledger's own opaque press tokens, so a press after a restart still works.
Allow hands the waiting message back for the gateway to answer (recorded in the inbox
first: a crash after the press still answers it at the next start); Block keeps them
refused. No model is called for a stranger. Either way the terminal says once per person who
wrote and how to allow them.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from bot.access.people import People
from bot.adapters.base import Accepted, Button, IncomingMessage, PressResult, Reply, escape_markdown
from bot.config.settings import Settings
from bot.config.text import one_line
from bot.delivery.ledger import ButtonTarget, Ledger
from bot.delivery.outbox import Outbox

log = logging.getLogger("frontdesk.access")

REFUSAL = "Sorry, I only work for the people I've been set up for."
ASKED = "I've asked the owner whether I may talk with you; you'll hear from me if they agree."
PAIRING_RUN = "pairing:"  # the prefix of a pairing button's run id in the ledger's tokens
WAIT_KEY = "pairing"
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


def is_pairing(target: ButtonTarget) -> bool:
    """Whether a pressed token is one of pairing's Allow / Block buttons."""
    return target.run_id.startswith(PAIRING_RUN)


class Strangers:
    """Refuse, or ask the owner about, someone not on the allowlist; take the owner's press."""

    def __init__(self, settings: Settings, ledger: Ledger, outbox: Outbox, people: People,
                 owner_chat: Callable[[str], Awaitable[str]]) -> None:
        self.settings = settings
        self.ledger, self.outbox, self.people = ledger, outbox, people
        self.owner_chat = owner_chat
        self._told: set[tuple[str, str]] = set()  # whom the terminal was told about

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
        """The owner's one prompt about a person still asking (nothing once it is queued)."""
        waiting = self.people.waiting_message(platform, user_id)
        if waiting is None:
            return
        chat = await self.owner_chat(owner_platform)
        key = prompt_key(platform, user_id, str(waiting.get("message_id")))
        if self.ledger.parts(owner_platform, chat, key):
            return
        await self.outbox.deliver(owner_platform, chat, key,
                                  self.prompt(IncomingMessage.from_json(waiting)),
                                  self.buttons(platform, user_id))

    async def _refuse(self, msg: IncomingMessage) -> Reply | None:
        if not self.ledger.refuse_once(msg.platform, msg.chat_id):
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
        """The owner's message about a stranger; their words shown as typed, never as markup."""
        name = escape_markdown(msg.user_name or "(no name)")
        handle = f" (@{escape_markdown(msg.user_handle)})" if msg.user_handle else ""
        words = escape_markdown(first_words(msg.text))
        return (f"Someone new wants to talk to me on {msg.platform}: {name}{handle}, "
                f"id {msg.user_id}."
                f"\nThey wrote: {words}\nAllow them to write to me?")

    def buttons(self, platform: str, user_id: str) -> list[Button]:
        run = f"{PAIRING_RUN}{platform}:{user_id}"
        return [Button(label, self.ledger.button_token(run, WAIT_KEY, answer, label))
                for answer, label in LABELS.items()]

    def tell_terminal(self, msg: IncomingMessage) -> None:
        """Once per person and process: who wrote, their numeric id, and how to allow them."""
        who = (msg.platform, msg.user_id)
        if who in self._told or msg.platform not in OWNER_VARS:
            return
        self._told.add(who)
        handle = f", @{msg.user_handle}" if msg.user_handle else ""
        name = f" ({msg.user_name}{handle})" if msg.user_name else ""
        if msg.platform not in self.settings.owner_ids():
            log.warning("%s is not set, so %s user %s%s was refused. If that is you, set "
                        "%s=%s in .env and restart.", OWNER_VARS[msg.platform], msg.platform,
                        msg.user_id, name, OWNER_VARS[msg.platform], msg.user_id)
            return
        allow = f"add {msg.user_id} to {ALLOWLIST_VARS[msg.platform]} in .env and restart"
        if self.settings.pairing == "ask":
            log.warning("%s user %s%s is not allowed; the owner was asked to Allow or Block "
                        "them (or %s).", msg.platform, msg.user_id, name, allow)
        else:
            log.warning("%s user %s%s is not allowed and was refused. To allow them, %s, or "
                        "set FRONTDESK_PAIRING=ask to be asked next time.", msg.platform,
                        msg.user_id, name, allow)

    # -- the owner presses Allow or Block ----------------------------------------------
    def press(self, target: ButtonTarget) -> tuple[PressResult, Accepted | None]:
        """Decide once; on Allow, the waiting message to answer now (it is recorded in the
        inbox first, so a crash before its answer still answers it at the next start)."""
        platform, _, user_id = target.run_id[len(PAIRING_RUN):].partition(":")
        if self.people.status(platform, user_id) != "asked":
            return PressResult("This was already decided.", False), None
        waiting = self.people.waiting_message(platform, user_id)
        msg = IncomingMessage.from_json(waiting) if waiting else None
        allow = target.answer == "allow"
        # Recorded in the inbox before the decision: a crash after it answers it at start.
        recorded = allow and msg is not None and self.ledger.record(
            msg.platform, msg.chat_id, msg.message_id, msg.user_id, msg.to_json())
        self.people.decide(platform, user_id, "allowed" if allow else "blocked")
        self.people.take_message(platform, user_id)
        log.warning("the owner %s %s user %s", "allowed" if allow else "blocked", platform,
                    user_id)
        edit = (f"Allowed: {platform} user {user_id} may write to me now." if allow
                else f"Blocked: {platform} user {user_id} stays refused.")
        admitted = Accepted(msg, "allowed") if recorded and msg is not None else None
        return PressResult(f"{target.label} ✓", True, edit_text=edit), admitted
