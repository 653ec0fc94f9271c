"""What model calls cost: the editable price table and the spend log that enforces the daily budget.

Prices come from the shipped ``bot/config/prices.toml`` (USD per million tokens; transcription
models in USD per minute of audio), overridden by a ``prices.toml`` in ``FRONTDESK_HOME`` if
there is one. The budget is a hard cap: before a call,
``SpendLog.reserve`` holds its worst case (a ``costs_holds`` row) in the same SQLite
transaction that checks the day's settled costs plus every open hold against the budget, so two
calls (or two processes) can never both take the last of it; ``settle`` then swaps the hold for
the call's real cost (a ``costs_calls`` row), and ``release`` drops the hold of a call the
provider refused outright. A hold never settled (a crash, a time-out) counts at its worst case.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, tzinfo
from importlib.resources import files
from importlib.resources.abc import Traversable
from zoneinfo import ZoneInfo

from bot.config.settings import Settings
from sqlitedb import Migration, transaction
from sqlitedb.database import Database

# Shipped inside the package (package data), so a wheel installed by pip, pipx or uv has it.
DEFAULT_PRICES: Traversable = files("bot.config") / "prices.toml"

MIGRATIONS: list[Migration] = [
    ("costs_001_calls", """
        CREATE TABLE costs_calls (
            id INTEGER PRIMARY KEY,
            at REAL NOT NULL,
            day TEXT NOT NULL,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            role TEXT NOT NULL,
            purpose TEXT,
            input_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            cost_usd REAL NOT NULL
        );
        CREATE INDEX costs_calls_day ON costs_calls (day);
    """),
    ("costs_002_holds", """
        CREATE TABLE costs_holds (
            id INTEGER PRIMARY KEY,
            at REAL NOT NULL,
            day TEXT NOT NULL,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            role TEXT NOT NULL,
            purpose TEXT,
            usd REAL NOT NULL
        );
        CREATE INDEX costs_holds_day ON costs_holds (day);
    """),
    # Each day's totals per model, filled from the per-call rows before the retention
    # removes them (``SpendLog.prune``): what a day spent is the same before and after.
    ("costs_003_days", """
        CREATE TABLE costs_days (
            day TEXT NOT NULL,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            calls INTEGER NOT NULL,
            input_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            cost_usd REAL NOT NULL,
            PRIMARY KEY (day, provider, model)
        );
    """),
]
# The calls of a day: the per-call rows still kept, and the totals of those removed.
CALLS_OF_DAY = ("SELECT provider, model, 1 AS calls, input_tokens, output_tokens, cost_usd"
                " FROM costs_calls WHERE day = :day UNION ALL SELECT provider, model, calls,"
                " input_tokens, output_tokens, cost_usd FROM costs_days WHERE day = :day")


class PriceTableError(ValueError):
    """The price file cannot be read; the message names the file and the entry."""


class OverBudget(Exception):
    """A call's worst case does not fit in what is left of the day's budget."""

    def __init__(self, *, budget_usd: float, committed_usd: float, worst_usd: float) -> None:
        super().__init__(f"${worst_usd:.6f} does not fit: ${committed_usd:.6f} of "
                         f"${budget_usd:.6f} is spent or held")
        self.budget_usd = budget_usd
        self.committed_usd = committed_usd
        self.worst_usd = worst_usd


@dataclass(frozen=True)
class Price:
    """USD per million tokens, in and out."""

    input_per_mtok: float
    output_per_mtok: float


class PriceTable:
    """Model name -> Price; a name also matches a priced prefix (dated model versions).
    ``per_minute``: transcription model -> USD per minute of audio."""

    def __init__(self, prices: Mapping[str, Price],
                 per_minute: Mapping[str, float] | None = None) -> None:
        self.prices = dict(prices)
        self.per_minute = dict(per_minute or {})

    @classmethod
    def load(cls, paths: Iterable[Traversable]) -> PriceTable:
        """Read the files that exist, later ones overriding earlier ones."""
        prices: dict[str, Price] = {}
        per_minute: dict[str, float] = {}
        for path in paths:
            if path.is_file():
                models, audio = _read_prices(path)
                prices.update(models)
                per_minute.update(audio)
        return cls(prices, per_minute)

    def audio_cost(self, model: str, seconds: float) -> float:
        """USD for transcribing ``seconds`` of audio; an unpriced model (local) costs nothing."""
        if model in self.per_minute:
            return self.per_minute[model] * seconds / 60
        prefixes = [name for name in self.per_minute if model.startswith(name)]
        return self.per_minute[max(prefixes, key=len)] * seconds / 60 if prefixes else 0.0

    def price(self, model: str) -> Price | None:
        """The exact entry, else the longest priced prefix of the name, else None."""
        if model in self.prices:
            return self.prices[model]
        prefixes = [name for name in self.prices if model.startswith(name)]
        return self.prices[max(prefixes, key=len)] if prefixes else None

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float:
        """USD for one call; an unpriced model (a local server, say) costs nothing."""
        price = self.price(model)
        if price is None:
            return 0.0
        return (input_tokens * price.input_per_mtok
                + output_tokens * price.output_per_mtok) / 1_000_000


def _read_prices(path: Traversable) -> tuple[dict[str, Price], dict[str, float]]:
    import tomllib  # here: only a provider's models read prices, and the parser is not free

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PriceTableError(f"{path}: cannot read the price table ({exc}).") from None
    models = data.get("models", {})
    prices: dict[str, Price] = {}
    for name, entry in models.items():
        try:
            prices[name] = Price(float(entry["input"]), float(entry["output"]))
        except (KeyError, TypeError, ValueError):
            raise PriceTableError(
                f"{path}: [models.\"{name}\"] needs numeric `input` and `output` "
                "(USD per million tokens).") from None
    per_minute: dict[str, float] = {}
    for name, entry in data.get("transcription", {}).items():
        try:
            per_minute[name] = float(entry["per_minute"])
        except (KeyError, TypeError, ValueError):
            raise PriceTableError(
                f"{path}: [transcription.\"{name}\"] needs a numeric `per_minute` "
                "(USD per minute of audio).") from None
    return prices, per_minute


def load_prices(settings: Settings) -> PriceTable:
    """The shipped table, overridden by ``FRONTDESK_HOME/prices.toml`` when present."""
    return PriceTable.load([DEFAULT_PRICES, settings.home / "prices.toml"])


class SpendLog:
    """Records each call's tokens and cost in SQLite; answers what was spent today."""

    def __init__(self, db: Database, *, tz: tzinfo | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self._conn = db.writer
        self._tz = tz
        self._clock = clock
        self._lock = threading.Lock()

    @classmethod
    def open(cls, settings: Settings, db: Database | None = None) -> SpendLog:
        """A spend log with days in the owner's time zone, on ``db``; without one, on a
        ``Database`` of its own with the log's migrations applied (for a process that opened
        none; two more connections)."""
        tz = ZoneInfo(settings.timezone) if settings.timezone else None
        if db is None:
            db = Database(settings.database, migrations=MIGRATIONS)
        return cls(db, tz=tz)

    def today(self) -> str:
        """The log's current day, ``YYYY-MM-DD`` (owner's zone, else the machine's)."""
        return datetime.fromtimestamp(self._clock(), tz=self._tz).date().isoformat()

    def record(self, *, provider: str, model: str, role: str, purpose: str | None,
               input_tokens: int, output_tokens: int, cost_usd: float) -> None:
        """Add one call that was not reserved (settled at once)."""
        with self._lock:
            self._insert_call(provider, model, role, purpose, input_tokens, output_tokens,
                              cost_usd)

    def reserve(self, *, usd: float, budget_usd: float | None, provider: str, model: str,
                role: str, purpose: str | None) -> int:
        """Hold ``usd`` (a call's worst case) if it fits the budget; the hold's id, else OverBudget.

        The check and the hold are one ``BEGIN IMMEDIATE`` transaction: SQLite's write lock is
        the one lock, across threads and processes alike.
        """
        with self._lock, transaction(self._conn):
            day = self.today()
            committed = self._committed(day)
            if budget_usd is not None and committed + usd > budget_usd:
                raise OverBudget(budget_usd=budget_usd, committed_usd=committed, worst_usd=usd)
            cursor = self._conn.execute(
                "INSERT INTO costs_holds (at, day, provider, model, role, purpose, usd)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (self._clock(), day, provider, model, role, purpose, usd))
            return int(cursor.lastrowid or 0)

    def settle(self, hold: int, *, provider: str, model: str, role: str, purpose: str | None,
               input_tokens: int, output_tokens: int, cost_usd: float) -> None:
        """Replace the hold by the call's real cost, all or nothing."""
        with self._lock, transaction(self._conn):
            self._conn.execute("DELETE FROM costs_holds WHERE id = ?", (hold,))
            self._insert_call(provider, model, role, purpose, input_tokens, output_tokens,
                              cost_usd)

    def release(self, hold: int) -> None:
        """Drop the hold of a call that cost nothing (the provider refused it outright)."""
        with self._lock:
            self._conn.execute("DELETE FROM costs_holds WHERE id = ?", (hold,))

    def _insert_call(self, provider: str, model: str, role: str, purpose: str | None,
                     input_tokens: int, output_tokens: int, cost_usd: float) -> None:
        self._conn.execute(
            "INSERT INTO costs_calls (at, day, provider, model, role, purpose, input_tokens,"
            " output_tokens, cost_usd) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self._clock(), self.today(), provider, model, role, purpose, input_tokens,
             output_tokens, cost_usd))

    def _committed(self, day: str) -> float:
        row = self._conn.execute(
            f"SELECT (SELECT COALESCE(SUM(cost_usd), 0) FROM ({CALLS_OF_DAY}))"
            " + (SELECT COALESCE(SUM(usd), 0) FROM costs_holds WHERE day = :day)",
            {"day": day}).fetchone()
        return float(row[0])

    def spent(self, day: str | None = None) -> float:
        """USD of the calls settled on ``day`` (default today)."""
        with self._lock:
            row = self._conn.execute(f"SELECT COALESCE(SUM(cost_usd), 0) FROM ({CALLS_OF_DAY})",
                                     {"day": day or self.today()}).fetchone()
        return float(row[0])

    def held(self, day: str | None = None) -> float:
        """USD held on ``day`` by calls in flight or of unknown outcome, at their worst case."""
        with self._lock:
            row = self._conn.execute("SELECT COALESCE(SUM(usd), 0) FROM costs_holds"
                                     " WHERE day = ?", (day or self.today(),)).fetchone()
        return float(row[0])

    def by_model(self, day: str | None = None) -> list[tuple[str, str, int, int, int, float]]:
        """(provider, model, calls, input tokens, output tokens, USD) for ``day``."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT provider, model, SUM(calls), SUM(input_tokens), SUM(output_tokens),"
                f" SUM(cost_usd) FROM ({CALLS_OF_DAY}) GROUP BY provider, model"
                " ORDER BY provider, model", {"day": day or self.today()}).fetchall()
        return [(str(p), str(m), int(n), int(i), int(o), float(c)) for p, m, n, i, o, c in rows]

    def prune(self, before: datetime) -> dict[str, int]:
        """Fold the calls made before ``before`` into their days' totals, then remove them;
        holds of an earlier day go too (they count against their own day only). What any
        day spent reads the same after. The per-call rows (and holds) removed."""
        cutoff = before.timestamp()
        with self._lock, transaction(self._conn):
            self._conn.execute(
                "INSERT INTO costs_days (day, provider, model, calls, input_tokens,"
                " output_tokens, cost_usd) SELECT day, provider, model, COUNT(*),"
                " SUM(input_tokens), SUM(output_tokens), SUM(cost_usd) FROM costs_calls"
                " WHERE at < ? GROUP BY day, provider, model ON CONFLICT DO UPDATE SET"
                " calls = calls + excluded.calls, input_tokens = input_tokens +"
                " excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens,"
                " cost_usd = cost_usd + excluded.cost_usd", (cutoff,))
            calls = self._conn.execute("DELETE FROM costs_calls WHERE at < ?",
                                       (cutoff,)).rowcount
            holds = self._conn.execute("DELETE FROM costs_holds WHERE at < ? AND day < ?",
                                       (cutoff, self.today())).rowcount
        return {"costs_calls": calls, "costs_holds": holds}
