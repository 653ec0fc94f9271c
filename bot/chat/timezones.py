"""A person's time zone in the chat: ``/timezone ZONE`` (anyone), "I'm in Tokyo", and the
answer to the meeting offer's one question ("Which time zone are you in?").

``PersonZones`` keeps the zones in the people's store (``bot.access.people``'s
``person_zones``) and reads them back as zones for the meetings (``GuestZones``). The
``TimeZones`` handler runs before a typed pick is read, so "UTC+2" is a zone, not option 2.
The owner's own zone is ``FRONTDESK_TIMEZONE``, set in the settings.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo

from bot.access.people import People
from bot.chat.commands import parse
from bot.chat.handlers import Turn
from bot.meetings.zones import ASK, EXAMPLES, parse_zone, zone_in_words, zone_key
from bot.messages import Reply

ROUTE = "command"


class PersonZones:
    """Each person's time zone, by scope, over the people's store (``GuestZones``)."""

    def __init__(self, people: People) -> None:
        self.people = people

    def zone_of(self, scope: str) -> tzinfo | None:
        stored = self.people.zone(scope)
        return parse_zone(stored) if stored else None

    def ask_once(self, scope: str) -> bool:
        return self.people.ask_zone_once(scope)


class TimeZones:
    """/timezone [ZONE], a zone named in words, or a bare zone answering the question."""

    def __init__(self, people: People, owner_zone: str | None) -> None:
        self.people = people
        self.owner_zone = owner_zone or "UTC"

    async def answer(self, turn: Turn) -> Reply | None:
        text = turn.message.text or ""
        command = parse(text)
        if command is not None:
            return self.command(turn, command.argument) if command.name == "timezone" else None
        if turn.is_owner:
            return None
        zone = zone_in_words(text)
        if zone is None and self.people.zone_asked(turn.scope):
            zone = parse_zone(text)  # the bare answer to "Which time zone are you in?"
        return None if zone is None else self.keep(turn.scope, zone)

    def command(self, turn: Turn, argument: str) -> Reply:
        if turn.is_owner:
            return Reply(f"Your own time zone is {self.owner_zone} (FRONTDESK_TIMEZONE in the "
                         "settings).", ROUTE)
        if not argument.strip():
            known = self.people.zone(turn.scope)
            now = f"Your time zone is {known}." if known else "I don't know your time zone yet."
            return Reply(f"{now} Set it with /timezone ZONE: {EXAMPLES}.", ROUTE)
        zone = parse_zone(argument)
        if zone is None:
            return Reply(f"I don't know the time zone “{argument.strip()[:60]}”. Give "
                         f"{EXAMPLES}.", ROUTE)
        return self.keep(turn.scope, zone)

    def keep(self, scope: str, zone: tzinfo) -> Reply:
        self.people.set_zone(scope, zone_key(zone))
        now = datetime.now(UTC).astimezone(zone)
        return Reply(f"Noted: your time zone is {zone_key(zone)} (it is {now:%H:%M} there "
                     "now). I'll show meeting times in it; change it with /timezone ZONE.",
                     ROUTE)


__all__ = ["ASK", "PersonZones", "TimeZones"]
