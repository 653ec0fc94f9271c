"""`frontdesk people [--limit N] [--before T] [remove ID]`: the people pairing allowed or blocked,
a page at a time, newest first (the page ends with the command for the next); or forget one."""

from __future__ import annotations

import argparse
import datetime as dt

from bot.access.people import People, Person
from bot.config.settings import Settings
from bot.config.text import one_line, one_name
from bot.delivery.inbox import Inbox, Sender
from bot.schema import open_database


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Print one person a line; ``remove ID`` deletes them (exit 1 when there is no such id)."""
    if args.action == "remove" and not (args.id or "").strip():
        print("frontdesk people remove ID: the numeric id the list shows.")
        return 1
    if not settings.database.exists():
        if args.action == "remove":
            print(f"No one with id {args.id} is stored.")
            return 1
        print(NOBODY)
        return 0
    with open_database(settings.database) as db:  # the people alone
        people = People(db)
        if args.action == "remove":
            removed = people.remove(args.id.strip())
            if not removed:
                print(f"No one with id {args.id} is stored.")
                return 1
            print(f"Removed {args.id}: they are a stranger again (the settings' allowlists "
                  "still count).")
            return 0
        limit = getattr(args, "limit", PAGE)
        before = getattr(args, "before", None)
        if limit < 1:
            print(f"frontdesk people --limit {limit}: give a number of people, 1 or more.")
            return 2
        everyone = people.page(limit, before)
        zones = people.zones_of([f"{p.platform}:{p.user_id}" for p in everyone])
        first = before is None  # the rest comes with the first page only
        unpaired = people.zones_unpaired() if first else {}
        mailers = Inbox(db).senders("email") if first else []
        if first and not everyone and not unpaired and not mailers:
            print(NOBODY)
        for person in everyone:
            zone = zones.get(f"{person.platform}:{person.user_id}")
            print(list_line(person) + (f"  [time zone {one_name(zone)}]" if zone else ""))
        if len(everyone) == limit:  # there may be more: the next page's command
            print(f"more: frontdesk people --limit {limit} --before {everyone[-1].asked_at!r}")
        mail_zones = {sender.chat_id: unpaired.pop(f"email:{sender.chat_id}", None)
                      for sender in mailers}
        for scope, zone in sorted(unpaired.items()):  # allowed by the settings: no pairing row
            print(f"{one_name(scope):<30} time zone {one_name(zone)}")
        if mailers:
            print("\nEmail correspondents (each their own chat and memory, by address):")
        for sender in mailers:
            zone = mail_zones[sender.chat_id]
            print(mail_line(sender) + (f"  [time zone {one_name(zone)}]" if zone else ""))
        return 0


PAGE = 50  # people a page, unless --limit


NOBODY = ("No one has asked yet. With FRONTDESK_PAIRING=ask, a stranger who writes to the bot "
          "is shown to you with Allow / Block buttons.")


def list_line(person: Person) -> str:
    """platform, id, status, since, name (@username), their first words; what they chose
    (name, username, words) is cleaned of control characters and bidi overrides, so no
    escape sequence of theirs reaches the owner's terminal."""
    since = dt.datetime.fromtimestamp(person.decided_at or person.asked_at)
    handle = f" (@{one_name(person.username)})" if person.username else ""
    return (f"{one_name(person.platform):<9} {one_name(person.user_id):<20} "
            f"{person.status:<8} {since:%Y-%m-%d %H:%M}"
            f"  {one_name(person.name)}{handle}: {one_line(person.first_words)}")


def mail_line(sender: Sender) -> str:
    """address, mails, the last one's time, the name they gave (cleaned like the others)."""
    last = dt.datetime.fromtimestamp(sender.last_at)
    count = f"{sender.messages} mail{'s' if sender.messages != 1 else ''}"
    return (f"email     {one_name(sender.chat_id):<30} {count:<9} last {last:%Y-%m-%d %H:%M}"
            f"  {one_name(sender.name)}")
