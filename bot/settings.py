"""Frontdesk's settings, read from a mapping (``os.environ`` in production, a dict in tests).

Nothing here reads the process environment by itself: ``Settings.from_env(os.environ)`` is
called once at start (after ``load_dotenv``), and the result is passed to whatever needs it.
Secrets are kept out of ``repr`` so a settings object can be logged safely.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


def _ids(raw: str | None) -> frozenset[str]:
    """Parse a comma-separated list of user ids, ignoring blanks."""
    return frozenset(part.strip() for part in (raw or "").split(",") if part.strip())


def _flag(raw: str | None, default: bool) -> bool:
    if raw is None or raw.strip() == "":
        return default
    return raw.strip().lower() not in {"0", "false", "no", "off"}


def _float(raw: str | None) -> float | None:
    if raw is None or raw.strip() == "":
        return None
    return float(raw)


def _seconds(name: str, raw: str | None, default: float, unit: str = "seconds",
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


@dataclass(frozen=True)
class Settings:
    """Every setting of design §5, with the embedded defaults."""

    home: Path
    graph_workflows: bool = True
    calendar: str | None = None
    timezone: str | None = None
    model_provider: str = "offline"
    small_model: str | None = None
    big_model: str | None = None
    daily_budget_usd: float | None = None
    model_timeout: float = 60.0  # seconds one model request may take
    answer_deadline: float = 180.0  # seconds one message may take before it is stopped
    trace_days: float = 30.0  # days of JSONL traces kept
    notify: str | None = None
    dashboard_port: int | None = None
    brief_at: str | None = None
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
    # MCP tools (bot.mcp_client): the servers file, and the time one call may take
    mcp_config: str | None = None  # None: mcp.json in FRONTDESK_HOME when it exists
    mcp_timeout: float = 30.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Read the settings from an environment-like mapping."""

        def get(name: str) -> str | None:
            value = env.get(name)
            return value.strip() if value and value.strip() else None

        home = Path(get("FRONTDESK_HOME") or Path.home() / ".frontdesk").expanduser()
        port = get("FRONTDESK_DASHBOARD_PORT")
        return cls(
            home=home,
            graph_workflows=_flag(get("FRONTDESK_GRAPH_WORKFLOWS"), True),
            calendar=get("FRONTDESK_CALENDAR"),
            timezone=get("FRONTDESK_TIMEZONE"),
            model_provider=choose_provider(env),
            small_model=get("FRONTDESK_SMALL_MODEL"),
            big_model=get("FRONTDESK_BIG_MODEL"),
            daily_budget_usd=_float(get("FRONTDESK_DAILY_BUDGET_USD")),
            model_timeout=_seconds("FRONTDESK_MODEL_TIMEOUT", get("FRONTDESK_MODEL_TIMEOUT"),
                                   60.0),
            answer_deadline=_seconds("FRONTDESK_ANSWER_DEADLINE",
                                     get("FRONTDESK_ANSWER_DEADLINE"), 180.0),
            trace_days=_seconds("FRONTDESK_TRACE_DAYS", get("FRONTDESK_TRACE_DAYS"), 30.0,
                                "days", "30"),
            notify=get("FRONTDESK_NOTIFY"),
            dashboard_port=int(port) if port else None,
            brief_at=get("FRONTDESK_BRIEF_AT"),
            remind_before=(_seconds("FRONTDESK_REMIND_BEFORE", get("FRONTDESK_REMIND_BEFORE"),
                                    0.0, "minutes", "15")
                           if get("FRONTDESK_REMIND_BEFORE") else None),
            draft_max_words=int(get("FRONTDESK_DRAFT_MAX_WORDS") or 300),
            anthropic_api_key=get("ANTHROPIC_API_KEY"),
            anthropic_base_url=get("ANTHROPIC_BASE_URL"),
            openai_api_key=get("OPENAI_API_KEY"),
            openai_base_url=get("OPENAI_BASE_URL"),
            telegram_bot_token=get("TELEGRAM_BOT_TOKEN"),
            telegram_base_url=get("TELEGRAM_BASE_URL"),
            telegram_owner_id=get("TELEGRAM_OWNER_ID"),
            telegram_allowed_users=_ids(get("TELEGRAM_ALLOWED_USERS")),
            discord_bot_token=get("DISCORD_BOT_TOKEN"),
            discord_base_url=get("DISCORD_BASE_URL"),
            discord_owner_id=get("DISCORD_OWNER_ID"),
            discord_allowed_users=_ids(get("DISCORD_ALLOWED_USERS")),
            mcp_config=get("FRONTDESK_MCP_CONFIG"),
            mcp_timeout=_seconds("FRONTDESK_MCP_TIMEOUT", get("FRONTDESK_MCP_TIMEOUT"), 30.0),
        )

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
                  self.discord_bot_token]
        return [v for v in values if v]


def choose_provider(env: Mapping[str, str]) -> str:
    """Design §3: explicit choice, else anthropic with a key, else openai, else offline."""
    explicit = (env.get("FRONTDESK_MODEL_PROVIDER") or "").strip().lower()
    if explicit:
        if explicit not in {"anthropic", "openai", "offline"}:
            raise ValueError(
                f"FRONTDESK_MODEL_PROVIDER={explicit!r} is not one of anthropic, openai, offline."
            )
        return explicit
    if (env.get("ANTHROPIC_API_KEY") or "").strip():
        return "anthropic"
    if (env.get("OPENAI_API_KEY") or "").strip() or (env.get("OPENAI_BASE_URL") or "").strip():
        return "openai"
    return "offline"
