"""Parse one setting's text into its value, or raise a ValueError that says what is wrong.

Every message has the same shape, so a user reads the same kind of sentence for any bad
setting: ``NAME='value' is not …, e.g. …``. A secret's value is never put in a message
(``NAME (value not shown) …``). These helpers are shared by ``bot.config.settings`` (every variable,
parsed once at start) and by anything else that reads a variable of its own.
"""

from __future__ import annotations

import os
import re
import tempfile
from datetime import time
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_DIGITS = re.compile(r"[0-9]+")
_TELEGRAM_TOKEN = re.compile(r"[0-9]+:\S+")
_HH_MM = re.compile(r"([01]?[0-9]|2[0-3]):([0-5][0-9])")
_URL = re.compile(r"https?://[^\s/]+\S*")
TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off"}


def shown(name: str, raw: str, secret: bool = False) -> str:
    """How a bad value is quoted in a message: ``NAME='raw'``, a secret never shown."""
    return f"{name} (value not shown)" if secret else f"{name}={raw!r}"


def switch(name: str, raw: str | None, default: bool) -> bool:
    """On or off: 1/0, true/false, yes/no, on/off."""
    if raw is None:
        return default
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ValueError(f"{shown(name, raw)} is not on or off: expected 1 or 0")


def number(name: str, raw: str | None, *, minimum: float = 0.0, unit: str = "",
           example: str = "2.50") -> float | None:
    """A number at or above ``minimum`` (None when unset)."""
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not minimum <= value < float("inf"):
        what = f"a number{' of ' + unit if unit else ''} of at least {minimum:g}"
        raise ValueError(f"{shown(name, raw)} is not {what}, e.g. {example}")
    return value


def whole(name: str, raw: str | None, default: int, *, low: int = 1,
          high: int = 1 << 31, example: str = "300") -> int:
    """A whole number between ``low`` and ``high``."""
    if raw is None:
        return default
    text = raw.strip()
    if not _DIGITS.fullmatch(text) or not low <= int(text) <= high:
        raise ValueError(f"{shown(name, raw)} is not a whole number from {low} to {high}, "
                         f"e.g. {example}")
    return int(text)


def port(name: str, raw: str | None) -> int | None:
    """A TCP port, 1 to 65535 (None when unset)."""
    return None if raw is None else whole(name, raw, 0, high=65535, example="8765")


def choice(name: str, raw: str | None, options: tuple[str, ...], default: str | None) -> str | None:
    """One word of ``options`` (case-insensitive)."""
    if raw is None:
        return default
    word = raw.strip().lower()
    if word not in options:
        raise ValueError(f"{shown(name, raw)} is not one of {', '.join(options)}")
    return word


def presets(name: str, raw: str | None) -> tuple[tuple[str, str], ...]:
    """``name=model,name=model``: named models, in the order given (none when unset)."""
    if raw is None:
        return ()
    found: dict[str, str] = {}
    for item in raw.split(","):
        label, model = (part.strip() for part in item.partition("=")[::2])
        if "=" not in item or not model or not label.replace("-", "").replace("_", "").isalnum() \
                or not label.isascii() or label.lower() in found or " " in model:
            raise ValueError(f"{shown(name, raw)} is not a list of name=model pairs with "
                             "different names, e.g. fast=gpt-4.1-mini,deep=o3")
        found[label.lower()] = model
    return tuple(found.items())


def seconds_up_to(name: str, raw: str | None, default: float, high: float,
                  example: str) -> float:
    """A number of seconds from 0 to ``high``."""
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 <= value <= high:
        raise ValueError(f"{shown(name, raw)} is not a number of seconds from 0 to {high:g}, "
                         f"e.g. {example}")
    return value


def _matching(name: str, raw: str | None, pattern: re.Pattern[str], what: str, *,
              secret: bool = False) -> str | None:
    """The value, stripped, when it matches ``pattern``; else a ValueError ending in ``what``."""
    if raw is None:
        return None
    if not pattern.fullmatch(raw.strip()):
        raise ValueError(f"{shown(name, raw, secret=secret)} {what}")
    return raw.strip()


def user_id(name: str, raw: str | None) -> str | None:
    """A numeric user id as the platform shows it."""
    return _matching(name, raw, _DIGITS, "is not a numeric user id, e.g. 123456789 "
                                         "(`frontdesk setup` finds yours)")


def user_ids(name: str, raw: str | None) -> frozenset[str]:
    """A comma-separated list of numeric user ids (blanks ignored)."""
    parts = [part.strip() for part in (raw or "").split(",") if part.strip()]
    bad = [part for part in parts if not _DIGITS.fullmatch(part)]
    if bad:
        raise ValueError(f"{shown(name, raw or '')}: {bad[0]!r} is not a numeric user id; "
                         "expected ids separated by commas, e.g. 123456789,987654321")
    return frozenset(parts)


def telegram_token(name: str, raw: str | None) -> str | None:
    """A Bot API token as @BotFather gives it: digits, a colon, then text."""
    return _matching(name, raw, _TELEGRAM_TOKEN, "is not a bot token: expected <digits>:<text> "
                                                 "as @BotFather gives it", secret=True)


def discord_token(name: str, raw: str | None) -> str | None:
    """A Discord bot token, without the 'Bot ' prefix and without spaces."""
    if raw is None:
        return None
    text = raw.strip()
    if text.lower().startswith("bot ") or any(ch.isspace() for ch in text):
        raise ValueError(f"{shown(name, raw, secret=True)} is not a bot token: paste the "
                         "token alone (no 'Bot ' before it, no spaces), from the Developer "
                         "Portal's Bot page")
    return text


def base_url(name: str, raw: str | None) -> str | None:
    """An http(s) URL."""
    return _matching(name, raw, _URL, "is not an http(s) URL, e.g. http://127.0.0.1:8081/bot")


def caldav_url(name: str, raw: str | None) -> str | None:
    """An http(s) URL with no user name or password in it (those have their own variables,
    and a URL is shown in messages where a password must never be)."""
    url = _matching(name, raw, _URL, "is not an http(s) URL, e.g. "
                    "https://caldav.fastmail.com/dav/calendars/user/you@example.com/")
    if url is not None and "@" in url.split("://", 1)[1].split("/", 1)[0]:
        raise ValueError(f"{name} (value not shown) has a user name or password in it: put them "
                         "in FRONTDESK_CALDAV_USERNAME and FRONTDESK_CALDAV_PASSWORD instead")
    return url


def host_port(name: str, raw: str | None) -> str | None:
    """``host:port``, e.g. 127.0.0.1:8443."""
    if raw is None:
        return None
    host, number = raw.strip().rpartition(":")[::2]
    if not host or not number.isdigit() or not 1 <= int(number) <= 65535:
        raise ValueError(f"{shown(name, raw)} is not host:port, e.g. 127.0.0.1:8443")
    return raw.strip()


def time_zone(name: str, raw: str | None) -> str | None:
    """An IANA time zone name (a Windows zone name is mapped where the calendar does it)."""
    if raw is None:
        return None
    text = raw.strip()
    try:
        ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        from icalendar.timezone.windows_to_olson import WINDOWS_TO_OLSON  # only when needed

        if text not in WINDOWS_TO_OLSON:
            raise ValueError(f"{shown(name, raw)} is not an IANA time zone, e.g. "
                             "Europe/Berlin") from None
    return text


def clock_time(name: str, raw: str | None) -> time | None:
    """A time of day written HH:MM (24-hour)."""
    text = _matching(name, raw, _HH_MM, "is not a time of day: expected HH:MM on a 24-hour "
                                        "clock, e.g. 07:30")
    if text is None:
        return None
    hours, minutes = text.split(":")
    return time(int(hours), int(minutes))


def writable_dir(name: str, path: Path) -> None:
    """The directory exists (it is made if missing) and a file can be written in it."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".probe-"):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ValueError(f"{name}={str(path)!r} is not a writable directory ({reason}): "
                         "expected a folder Frontdesk may write to, e.g. ~/.frontdesk") from None


def readable_calendar(name: str, raw: str) -> None:
    """A calendar setting: an http(s) URL (read later), or a readable local file."""
    if re.match(r"https?://", raw, re.IGNORECASE):
        return
    path = Path(raw).expanduser()
    problem = ("no such file" if not path.exists() else "not a file" if not path.is_file()
               else "not readable" if not os.access(path, os.R_OK) else "")
    if not problem:
        try:
            with path.open("rb") as handle:
                handle.read(1)
        except OSError as exc:
            problem = exc.strerror or "not readable"
    if problem:
        raise ValueError(f"{shown(name, raw)} cannot be read ({problem}): expected a "
                         "readable .ics file or an http(s) URL")


def positive(name: str, raw: str | None, default: float, unit: str = "seconds",
             example: str = "60") -> float:
    """A positive number (of seconds); a ValueError naming the variable otherwise."""
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise ValueError(f"{name}={raw!r}: expected a number of {unit} above 0, e.g. {example}")
    return value
