"""Frontdesk's settings, read from a mapping (``os.environ`` in production, a dict in tests).

Nothing here reads the process environment by itself: ``Settings.from_env(os.environ)`` is
called once at start (after ``load_dotenv``), and the result is passed to whatever needs it.
Secrets are kept out of ``repr`` so a settings object can be logged safely.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import time
from pathlib import Path
from typing import Any

from bot.config import values
from bot.config.email_settings import EmailSettings, email_settings
from bot.config.meeting_extras import invitation_settings
from bot.config.meeting_hours import WeeklyHours, parse_hours


@dataclass(frozen=True)
class Settings:
    """Every setting, with the embedded defaults."""

    home: Path
    graph_workflows: bool = True
    calendar: str | None = None
    # CalDAV (bot.calendar.caldav): a calendar collection URL, or the server's with the
    # calendar's name; read and written, the .ics above merged in as read-only busy time
    caldav_url: str | None = None
    caldav_calendar: str | None = None
    caldav_username: str | None = None
    caldav_password: str | None = field(default=None, repr=False)
    timezone: str | None = None
    model_provider: str = "offline"
    small_model: str | None = None
    big_model: str | None = None
    daily_budget_usd: float | None = None
    model_timeout: float = 60.0  # seconds one model request may take
    answer_deadline: float = 180.0  # seconds one message may take before it is stopped
    trace_days: float = 30.0  # days of JSONL traces kept
    backup_days: int = 7  # daily backups kept under FRONTDESK_HOME/backups (0: none taken)
    notify: str | None = None
    dashboard_port: int | None = None
    brief_at: time | None = None  # FRONTDESK_BRIEF_AT, parsed here once
    remind_before: float | None = None  # minutes before an event its notice is sent
    draft_max_words: int = 300
    anthropic_api_key: str | None = field(default=None, repr=False)
    anthropic_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    openai_base_url: str | None = None
    telegram_bot_token: str | None = field(default=None, repr=False)
    telegram_base_url: str | None = None
    telegram_owner_id: str | None = None
    telegram_allowed_users: frozenset[str] = frozenset()
    discord_bot_token: str | None = field(default=None, repr=False)
    discord_base_url: str | None = None
    discord_owner_id: str | None = None
    discord_allowed_users: frozenset[str] = frozenset()
    # Voice, photos and files
    max_file_mb: float = 20.0  # FRONTDESK_MAX_FILE_MB: the largest attachment fetched
    telegram_base_file_url: str | None = None  # TELEGRAM_BASE_FILE_URL (PTB's base_file_url)
    transcribe_model: str = "whisper-1"  # FRONTDESK_TRANSCRIBE_MODEL
    transcribe_base_url: str | None = None  # FRONTDESK_TRANSCRIBE_BASE_URL

    # pairing, log level
    pairing: str = "off"  # FRONTDESK_PAIRING: "ask" (a stranger's message asks the owner)
    log_level: str = "WARNING"

    # MCP tools (bot.tools.mcp_client): the servers file, and the time one call may take
    mcp_config: str | None = None  # None: mcp.json in FRONTDESK_HOME when it exists
    mcp_timeout: float = 30.0

    # Meetings (bot.meetings): the owner's rules for the times a guest may book
    meeting_hours: WeeklyHours = field(default_factory=lambda: parse_hours("", None))
    meeting_minutes: int = 30  # FRONTDESK_MEETING_MINUTES: a meeting's length
    meeting_buffer: int = 10  # minutes kept free before and after every event
    meeting_notice: float = 4.0  # hours: the earliest start, counted from the offer
    meeting_days: int = 14  # calendar days ahead, today the first
    meetings_per_day: int = 4  # Frontdesk's bookings on one day at most
    meeting_hold: float = 24.0  # hours a picked slot is held for the owner's answer
    owner_email: str | None = None  # FRONTDESK_OWNER_EMAIL (else _EMAIL_ADDRESS): ORGANIZER
    meeting_link: str = "off"  # FRONTDESK_MEETING_LINK: off, jitsi or a URL with {uid}
    meeting_remind: tuple[int, ...] = (24 * 60, 15)  # FRONTDESK_MEETING_REMIND, minutes
    # Turns (bot.chat.bursts, bot.models.choices): one turn for a burst of messages; the
    # big models the owner may pick per chat with /model, as (name, model) pairs
    merge_window: float = 1.5  # FRONTDESK_MERGE_WINDOW, seconds; 0: every message its own turn
    model_presets: tuple[tuple[str, str], ...] = ()  # FRONTDESK_MODEL_PRESETS
    # live replies (bot.delivery.live): answers shown as they are written, and how often
    stream: bool = True  # FRONTDESK_STREAM
    stream_interval: float = 1.0  # FRONTDESK_STREAM_INTERVAL: seconds between updates a chat
    # One guest's share (bot.chat.guest_limits), and all of one bot's writes together
    # (bot.delivery.pace): a platform's overall limit is about 30 a second
    guest_daily_usd: float | None = None  # FRONTDESK_GUEST_DAILY_USD: None, no cap
    guest_messages_per_hour: int = 30  # FRONTDESK_GUEST_MESSAGES_PER_HOUR: 0, no cap
    writes_per_second: float = 25.0  # FRONTDESK_WRITES_PER_SECOND
    # Retention (bot.retention): days finished runs, answered messages, sent replies, cost
    # rows, attachments and traces are kept; fractional allowed (0.5: twelve hours)
    keep_days: float = 90.0  # FRONTDESK_KEEP_DAYS
    email: EmailSettings | None = None  # FRONTDESK_EMAIL_*: None unless an address is set

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Read the settings from an environment-like mapping; every variable is parsed here,
        once, and a bad value raises a ValueError naming the variable, the value (never a
        secret's) and what is expected (``bot.config.values``)."""

        def get(name: str) -> str | None:
            value = env.get(name)
            return value.strip() if value and value.strip() else None

        home = Path(get("FRONTDESK_HOME") or Path.home() / ".frontdesk").expanduser()
        check_read_elsewhere(get)
        check_caldav(get)
        return cls(
            home=home,
            graph_workflows=values.switch("FRONTDESK_GRAPH_WORKFLOWS",
                                          get("FRONTDESK_GRAPH_WORKFLOWS"), True),
            calendar=get("FRONTDESK_CALENDAR"),
            caldav_url=values.caldav_url("FRONTDESK_CALDAV_URL", get("FRONTDESK_CALDAV_URL")),
            caldav_calendar=get("FRONTDESK_CALDAV_CALENDAR"),
            caldav_username=get("FRONTDESK_CALDAV_USERNAME"),
            caldav_password=get("FRONTDESK_CALDAV_PASSWORD"),
            timezone=values.time_zone("FRONTDESK_TIMEZONE", get("FRONTDESK_TIMEZONE")),
            model_provider=choose_provider(env),
            small_model=get("FRONTDESK_SMALL_MODEL"),
            big_model=get("FRONTDESK_BIG_MODEL"),
            daily_budget_usd=values.number("FRONTDESK_DAILY_BUDGET_USD",
                                           get("FRONTDESK_DAILY_BUDGET_USD"), unit="US dollars"),
            model_timeout=values.positive("FRONTDESK_MODEL_TIMEOUT",
                                          get("FRONTDESK_MODEL_TIMEOUT"), 60.0),
            answer_deadline=values.positive("FRONTDESK_ANSWER_DEADLINE",
                                            get("FRONTDESK_ANSWER_DEADLINE"), 180.0),
            trace_days=values.positive("FRONTDESK_TRACE_DAYS", get("FRONTDESK_TRACE_DAYS"), 30.0,
                                       "days", "30"),
            backup_days=values.whole("FRONTDESK_BACKUP_DAYS", get("FRONTDESK_BACKUP_DAYS"), 7,
                                     low=0, high=3650, example="7"),
            notify=values.choice("FRONTDESK_NOTIFY", get("FRONTDESK_NOTIFY"),
                                 ("telegram", "discord", "all"), None),
            dashboard_port=values.port("FRONTDESK_DASHBOARD_PORT",
                                       get("FRONTDESK_DASHBOARD_PORT")),
            brief_at=values.clock_time("FRONTDESK_BRIEF_AT", get("FRONTDESK_BRIEF_AT")),
            remind_before=(values.positive("FRONTDESK_REMIND_BEFORE",
                                           get("FRONTDESK_REMIND_BEFORE"), 0.0, "minutes", "15")
                           if get("FRONTDESK_REMIND_BEFORE") else None),
            draft_max_words=values.whole("FRONTDESK_DRAFT_MAX_WORDS",
                                         get("FRONTDESK_DRAFT_MAX_WORDS"), 300),
            anthropic_api_key=get("ANTHROPIC_API_KEY"),
            anthropic_base_url=values.base_url("ANTHROPIC_BASE_URL", get("ANTHROPIC_BASE_URL")),
            openai_api_key=get("OPENAI_API_KEY"),
            openai_base_url=values.base_url("OPENAI_BASE_URL", get("OPENAI_BASE_URL")),
            telegram_bot_token=values.telegram_token("TELEGRAM_BOT_TOKEN",
                                                     get("TELEGRAM_BOT_TOKEN")),
            telegram_base_url=values.base_url("TELEGRAM_BASE_URL", get("TELEGRAM_BASE_URL")),
            telegram_owner_id=values.user_id("TELEGRAM_OWNER_ID", get("TELEGRAM_OWNER_ID")),
            telegram_allowed_users=values.user_ids("TELEGRAM_ALLOWED_USERS",
                                                   get("TELEGRAM_ALLOWED_USERS")),
            discord_bot_token=values.discord_token("DISCORD_BOT_TOKEN", get("DISCORD_BOT_TOKEN")),
            discord_base_url=values.base_url("DISCORD_BASE_URL", get("DISCORD_BASE_URL")),
            discord_owner_id=values.user_id("DISCORD_OWNER_ID", get("DISCORD_OWNER_ID")),
            discord_allowed_users=values.user_ids("DISCORD_ALLOWED_USERS",
                                                  get("DISCORD_ALLOWED_USERS")),
            pairing=values.choice("FRONTDESK_PAIRING", get("FRONTDESK_PAIRING"),
                                  ("ask", "off"), "off") or "off",
            log_level=(values.choice("FRONTDESK_LOG_LEVEL", get("FRONTDESK_LOG_LEVEL"),
                                     ("debug", "info", "warning", "error"), "warning")
                       or "warning").upper(),
            max_file_mb=values.positive("FRONTDESK_MAX_FILE_MB", get("FRONTDESK_MAX_FILE_MB"),
                                        20.0, "megabytes", "20"),
            telegram_base_file_url=values.base_url("TELEGRAM_BASE_FILE_URL",
                                                    get("TELEGRAM_BASE_FILE_URL")),
            transcribe_model=get("FRONTDESK_TRANSCRIBE_MODEL") or "whisper-1",
            transcribe_base_url=values.base_url("FRONTDESK_TRANSCRIBE_BASE_URL",
                                                 get("FRONTDESK_TRANSCRIBE_BASE_URL")),
            mcp_config=get("FRONTDESK_MCP_CONFIG"),
            mcp_timeout=values.positive("FRONTDESK_MCP_TIMEOUT", get("FRONTDESK_MCP_TIMEOUT"),
                                        30.0),
            **meeting_settings(get),
            **invitation_settings(get),
            **guest_settings(get),
            merge_window=values.seconds_up_to("FRONTDESK_MERGE_WINDOW",
                                              get("FRONTDESK_MERGE_WINDOW"), 1.5, 5.0, "1.5"),
            model_presets=values.presets("FRONTDESK_MODEL_PRESETS",
                                         get("FRONTDESK_MODEL_PRESETS")),
            stream=values.switch("FRONTDESK_STREAM", get("FRONTDESK_STREAM"), True),
            stream_interval=values.positive("FRONTDESK_STREAM_INTERVAL",
                                            get("FRONTDESK_STREAM_INTERVAL"), 1.0, "seconds",
                                            "1.0"),
            keep_days=values.positive("FRONTDESK_KEEP_DAYS", get("FRONTDESK_KEEP_DAYS"), 90.0,
                                      "days", "90"),
            email=email_settings(get),
        )

    def check_files(self) -> None:
        """What the settings name on disk: FRONTDESK_HOME writable (made if missing), a local
        FRONTDESK_CALENDAR readable. A ValueError of the same shape as ``from_env``'s."""
        values.writable_dir("FRONTDESK_HOME", self.home)
        if self.calendar:
            values.readable_calendar("FRONTDESK_CALENDAR", self.calendar)

    @property
    def database(self) -> Path:
        """The one SQLite file under ``FRONTDESK_HOME``."""
        return self.home / "frontdesk.db"

    @property
    def traces_dir(self) -> Path:
        """Where JSONL trace exports go."""
        return self.home / "traces"

    def owner_ids(self) -> dict[str, str]:
        """The owner's user id on each chat platform that has one configured."""
        ids = {"telegram": self.telegram_owner_id, "discord": self.discord_owner_id}
        return {platform: owner for platform, owner in ids.items() if owner}

    def secrets(self) -> list[str]:
        """Every configured secret, for scrubbing logs and error messages."""
        values = [self.anthropic_api_key, self.openai_api_key, self.telegram_bot_token,
                  self.discord_bot_token, self.caldav_password,
                  self.email.password if self.email else None]
        return [v for v in values if v]


def meeting_settings(get: Callable[[str], str | None]) -> dict[str, Any]:
    """The FRONTDESK_MEETING_* rules, each checked like the others."""
    return {
        "meeting_hours": parse_hours("FRONTDESK_MEETING_HOURS", get("FRONTDESK_MEETING_HOURS")),
        "meeting_minutes": values.whole("FRONTDESK_MEETING_MINUTES",
                                        get("FRONTDESK_MEETING_MINUTES"), 30, low=5, high=720,
                                        example="30"),
        "meeting_buffer": values.whole("FRONTDESK_MEETING_BUFFER",
                                       get("FRONTDESK_MEETING_BUFFER"), 10, low=0, high=240,
                                       example="10"),
        "meeting_notice": values.number("FRONTDESK_MEETING_NOTICE",
                                        get("FRONTDESK_MEETING_NOTICE"), unit="hours",
                                        example="4") if get("FRONTDESK_MEETING_NOTICE") else 4.0,
        "meeting_days": values.whole("FRONTDESK_MEETING_DAYS", get("FRONTDESK_MEETING_DAYS"), 14,
                                     low=1, high=366, example="14"),
        "meetings_per_day": values.whole("FRONTDESK_MEETINGS_PER_DAY",
                                         get("FRONTDESK_MEETINGS_PER_DAY"), 4, low=1, high=48,
                                         example="4"),
        "meeting_hold": values.positive("FRONTDESK_MEETING_HOLD", get("FRONTDESK_MEETING_HOLD"),
                                        24.0, "hours", "24"),
    }


def guest_settings(get: Callable[[str], str | None]) -> dict[str, Any]:
    """One guest's caps (the day's spend by default a quarter of the daily budget, none
    without one) and the pace of all of one bot's writes."""
    budget = values.number("FRONTDESK_DAILY_BUDGET_USD", get("FRONTDESK_DAILY_BUDGET_USD"),
                           unit="US dollars")
    daily = values.number("FRONTDESK_GUEST_DAILY_USD", get("FRONTDESK_GUEST_DAILY_USD"),
                          unit="US dollars", example="0.50")
    return {
        "guest_daily_usd": daily if daily is not None else
        (budget / 4 if budget is not None else None),
        "guest_messages_per_hour": values.whole(
            "FRONTDESK_GUEST_MESSAGES_PER_HOUR", get("FRONTDESK_GUEST_MESSAGES_PER_HOUR"), 30,
            low=0, high=100_000, example="30"),
        "writes_per_second": values.positive("FRONTDESK_WRITES_PER_SECOND",
                                             get("FRONTDESK_WRITES_PER_SECOND"), 25.0,
                                             "writes a second", "25"),
    }


def check_read_elsewhere(get: Callable[[str], str | None]) -> None:
    """The variables their own modules read (webhook, Discord tuning): checked here too, so
    a bad one stops every command at start like the rest."""
    values.base_url("FRONTDESK_TELEGRAM_WEBHOOK_URL", get("FRONTDESK_TELEGRAM_WEBHOOK_URL"))
    values.host_port("FRONTDESK_TELEGRAM_WEBHOOK_LISTEN",
                     get("FRONTDESK_TELEGRAM_WEBHOOK_LISTEN"))
    for name in ("FRONTDESK_DISCORD_READY_TIMEOUT", "FRONTDESK_DISCORD_IDENTIFY_DELAY",
                 "FRONTDESK_DISCORD_RETRY_BASE"):
        values.number(name, get(name), unit="seconds", example="2")


def check_caldav(get: Callable[[str], str | None]) -> None:
    """The CalDAV variables make sense together: a user name and a password go with a URL."""
    named = [name for name in ("FRONTDESK_CALDAV_CALENDAR", "FRONTDESK_CALDAV_USERNAME",
                               "FRONTDESK_CALDAV_PASSWORD") if get(name)]
    if named and not get("FRONTDESK_CALDAV_URL"):
        raise ValueError(f"{named[0]} is set but FRONTDESK_CALDAV_URL is not: set it to your "
                         "calendar's CalDAV address (docs/calendar.md), or unset the other")
    if bool(get("FRONTDESK_CALDAV_USERNAME")) != bool(get("FRONTDESK_CALDAV_PASSWORD")):
        missing = ("FRONTDESK_CALDAV_PASSWORD" if get("FRONTDESK_CALDAV_USERNAME")
                   else "FRONTDESK_CALDAV_USERNAME")
        raise ValueError(f"{missing} is not set: the CalDAV server needs both a user name and "
                         "a password (an app password for most providers)")


def choose_provider(env: Mapping[str, str]) -> str:
    """Explicit choice, else anthropic with a key, else openai, else offline."""
    explicit = (env.get("FRONTDESK_MODEL_PROVIDER") or "").strip().lower()
    if explicit:
        if explicit not in {"anthropic", "openai", "offline"}:
            raise ValueError(
                f"FRONTDESK_MODEL_PROVIDER={explicit!r} is not one of anthropic, openai, offline"
            )
        return explicit
    if (env.get("ANTHROPIC_API_KEY") or "").strip():
        return "anthropic"
    if (env.get("OPENAI_API_KEY") or "").strip() or (env.get("OPENAI_BASE_URL") or "").strip():
        return "openai"
    return "offline"
