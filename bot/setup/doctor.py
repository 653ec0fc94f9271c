"""`frontdesk doctor`'s checks: each asks one part of the set-up whether it works, and says how
to fix it when not.

A check is ``async (Context) -> list[Result]`` (most give one line; the platform checks give
one per platform configured, none when it is not). ``CHECKS`` is the ordered list the command
runs; a part that arrives later adds its check function to it (one line in ``CHECKS``). A
check that needs valid settings gets ``skipped`` when they are not. Network checks use the
libraries the bot itself uses (python-telegram-bot, the model SDKs) and plain httpx for the two
Discord REST reads (discord.py can only read them after a full login). No secret is printed.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx

from bot.config.logs import write_details
from bot.config.settings import Settings
from bot.schema import foreign_objects, read_state
from sqlitedb import open_read_only

TIMEOUT_S = 10.0
CONTENT_INTENT_FLAGS = (1 << 18) | (1 << 19)  # GATEWAY_MESSAGE_CONTENT (+ _LIMITED)


@dataclass(frozen=True)
class Result:
    """One line of the report: ``ok`` with what was found, or the problem and its fix."""

    name: str
    ok: bool
    detail: str  # what was found (ok), or what is wrong
    fix: str = ""  # what to do about it (empty when ok)

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        fix = f" Fix: {self.fix}" if self.fix else ""
        return f"{mark}  {self.name:<12} {self.detail}{fix}"


@dataclass
class Context:
    """What the checks read: the environment, and the settings when they are valid."""

    env: Mapping[str, str]
    settings: Settings | None = None


Check = Callable[[Context], Awaitable[list[Result]]]


def needs_settings(name: str, ctx: Context) -> list[Result] | None:
    """The 'skipped' line for a check that cannot run on bad settings, else None."""
    if ctx.settings is None:
        return [Result(name, False, "skipped: the settings are not valid",
                       "fix the settings line above first")]
    return None


async def check_settings(ctx: Context) -> list[Result]:
    """Every variable parses (the same rules as every command's start)."""
    try:
        ctx.settings = Settings.from_env(ctx.env)
    except ValueError as exc:
        return [Result("settings", False, str(exc), "correct that variable in .env")]
    return [Result("settings", True, "every variable is valid")]


async def check_data_dir(ctx: Context) -> list[Result]:
    """FRONTDESK_HOME can be written, and a local calendar read."""
    if (skipped := needs_settings("data", ctx)) is not None:
        return skipped
    assert ctx.settings is not None
    try:
        ctx.settings.check_files()
    except ValueError as exc:
        ctx.settings = None  # the checks after this one would fail the same way
        return [Result("data", False, str(exc), "point FRONTDESK_HOME at a folder you own")]
    return [Result("data", True, f"{ctx.settings.home} is writable")]


async def check_database(ctx: Context) -> list[Result]:
    """The database file: SQLite's integrity check, where its schema stands, and no table,
    index, trigger or view its migrations do not make."""
    if (skipped := needs_settings("database", ctx)) is not None:
        return skipped
    assert ctx.settings is not None
    path = ctx.settings.database
    state = read_state(path)
    if not state.exists:
        return [Result("database", True, f"{path} does not exist yet; made at the first start")]
    if state.problem:
        return [Result("database", False, f"{path} cannot be read ({state.problem})",
                       "restore it from a backup, or move it away to start afresh")]
    try:
        conn = open_read_only(path)
        try:
            verdict = conn.execute("PRAGMA integrity_check").fetchone()[0]
            known = verdict == "ok" and not state.unknown  # else no migrations to compare
            foreign = foreign_objects(conn) if known else []
        finally:
            conn.close()
    except sqlite3.Error as exc:
        verdict, foreign = str(exc), []
    if verdict != "ok":
        return [Result("database", False, f"{path} is damaged ({verdict})",
                       "restore it from a backup (sqlite3 .recover can save what is left)")]
    if state.unknown:
        return [Result("database", False, f"written by Frontdesk {state.newer_version} "
                       f"(migration {state.unknown[0]}), newer than this one",
                       "upgrade Frontdesk to the version that wrote it, or restore a backup")]
    if foreign:
        return [Result("database", False, f"{path} is not as its migrations make it: "
                       + "; ".join(foreign), "restore a backup taken before it changed, or "
                       "remove what was added with sqlite3 (e.g. DROP TRIGGER name)")]
    later = " at the next start, after a backup" if state.pending else ""
    return [Result("database", True, f"intact, {state.summary()}{later}")]


async def check_telegram(ctx: Context) -> list[Result]:
    """The token (getMe), privacy mode, no webhook stealing the updates, the owner's chat."""
    settings = ctx.settings
    if settings is None or not settings.telegram_bot_token:
        return []
    from telegram.error import InvalidToken, NetworkError, TelegramError

    from bot.adapters.telegram.start import make_bot

    bot = make_bot(settings)  # the bot's own client: the same URL and token rules
    try:
        async with bot:
            me = bot.bot
            privacy = ("privacy mode on: in groups it sees only commands, mentions and replies"
                       if not me.can_read_all_group_messages else "privacy mode off")
            results = [Result("telegram", True, f"@{me.username} (id {me.id}), {privacy}")]
            hook = await bot.get_webhook_info()
            if hook.url and not ctx.env.get("FRONTDESK_TELEGRAM_WEBHOOK_URL"):
                results.append(Result("telegram", False, "a webhook is set, so polling gets "
                                      "nothing", "it is removed at the next `frontdesk run`"))
            results.append(await _telegram_owner(bot, settings.telegram_owner_id, me.username))
            return results
    except InvalidToken:
        return [Result("telegram", False, "Telegram refused TELEGRAM_BOT_TOKEN",
                       "copy the token again from @BotFather (/mybots → API Token)")]
    except NetworkError as exc:
        return [Result("telegram", False, f"Telegram is unreachable ({exc})",
                       "check the network, or TELEGRAM_BASE_URL")]
    except TelegramError as exc:
        return [Result("telegram", False, f"Telegram said: {exc}", "see the message")]


async def _telegram_owner(bot: Any, owner: str | None, username: str | None) -> Result:
    from telegram.error import BadRequest, Forbidden

    if not owner:
        return Result("telegram", False, "TELEGRAM_OWNER_ID is not set",
                      "run `frontdesk setup`, or write to the bot: `frontdesk run` prints your id")
    try:
        await bot.get_chat(int(owner))
    except (BadRequest, Forbidden):
        return Result("telegram", False, f"owner {owner} has no chat with @{username}",
                      f"open t.me/{username} and press Start (or check the id)")
    return Result("telegram", True, f"owner {owner} has a chat with the bot")


async def check_discord(ctx: Context) -> list[Result]:
    """The token, the Message Content Intent, the owner known to Discord."""
    settings = ctx.settings
    if settings is None or not settings.discord_bot_token:
        return []
    from bot.adapters.discord.base_url import endpoints_for

    base = endpoints_for(settings.discord_base_url).rest_base
    headers = {"Authorization": f"Bot {settings.discord_bot_token}"}
    try:
        async with httpx.AsyncClient(base_url=base, headers=headers, timeout=TIMEOUT_S) as http:
            me = await http.get("/users/@me")
            if me.status_code == 401:
                return [Result("discord", False, "Discord refused DISCORD_BOT_TOKEN",
                               "Developer Portal → your app → Bot → Reset Token, into .env")]
            me.raise_for_status()
            user = me.json()
            app = (await http.get("/oauth2/applications/@me")).json()
            results = [Result("discord", True, f"{user.get('username')} (id {user.get('id')})")]
            if not int(app.get("flags") or 0) & CONTENT_INTENT_FLAGS:
                results.append(Result("discord", False, "the Message Content Intent is off",
                                      "Developer Portal → Bot → Privileged Gateway Intents → "
                                      "Message Content Intent"))
            owner = settings.discord_owner_id
            if not owner:
                results.append(Result("discord", False, "DISCORD_OWNER_ID is not set",
                                      "run `frontdesk setup`, or DM the bot: `frontdesk run` "
                                      "prints your id"))
            elif (await http.get(f"/users/{owner}")).status_code != 200:
                results.append(Result("discord", False, f"owner {owner} is not a Discord user",
                                      "copy your id again (Developer Mode → Copy User ID)"))
            else:
                results.append(Result("discord", True, f"owner {owner} is known to Discord"))
            return results
    except (httpx.HTTPError, ValueError) as exc:
        return [Result("discord", False, f"Discord is unreachable ({type(exc).__name__})",
                       "check the network, or DISCORD_BASE_URL")]


async def check_models(ctx: Context) -> list[Result]:
    """The provider answers, takes the key, and offers both configured models."""
    if (skipped := needs_settings("models", ctx)) is not None:
        return skipped
    assert ctx.settings is not None
    from bot.models import DEFAULT_MODELS
    from bot.models.check import list_models

    settings = ctx.settings
    provider = settings.model_provider
    if provider == "offline":
        return [Result("models", True, "offline (built-in rules; set a provider's key for a "
                                       "real model)")]
    small_default, big_default = DEFAULT_MODELS[provider]
    wanted = [settings.small_model or small_default, settings.big_model or big_default]
    found = await list_models(settings)
    if found.problem:
        return [Result("models", False, found.problem, found.fix)]
    missing = [name for name in wanted if name not in found.names]
    if missing:
        offered = ", ".join(sorted(found.names)[:8]) or "none"
        return [Result("models", False, f"{provider} does not offer {', '.join(missing)}",
                       f"set FRONTDESK_SMALL_MODEL / FRONTDESK_BIG_MODEL to one of: {offered}")]
    return [Result("models", True, f"{provider}: key accepted, {wanted[0]} and {wanted[1]} "
                                   "available")]


async def check_calendar(ctx: Context) -> list[Result]:
    """The calendar reads, this week's events parse, and what was skipped."""
    settings = ctx.settings
    if settings is None or not settings.calendar:
        return []
    from bot.calendar.ics import Calendar, CalendarError

    calendar = Calendar(settings.calendar, tz=settings.timezone,
                        cache_dir=settings.home / "cache")
    start = datetime.now(calendar.zone).replace(hour=0, minute=0, second=0, microsecond=0)
    try:
        found = calendar.events(start, start + timedelta(days=7))
    except CalendarError as exc:
        return [Result("calendar", False, str(exc), "check FRONTDESK_CALENDAR")]
    results = [Result("calendar", True, f"{len(found.events)} events in the next 7 days")]
    results += [Result("calendar", False, skipped, "fix or delete that event in your calendar")
                for skipped in found.skipped]
    return results


async def check_caldav(ctx: Context) -> list[Result]:
    """With FRONTDESK_CALDAV_URL: the server answers, the login works, the calendar is there and
    the bot may write to it (each failure names the variable to fix)."""
    settings = ctx.settings
    if settings is None or not settings.caldav_url:
        return []
    from bot.calendar.caldav import CalDavConfig, CalDavServer
    from bot.calendar.writer import CalendarUnavailable

    config = CalDavConfig.from_settings(settings)
    assert config is not None
    try:
        found, writable = await asyncio.to_thread(CalDavServer(config, int(TIMEOUT_S)).probe)
    except CalendarUnavailable as exc:
        problem, *fix = re.split(r": (?=check |set )", str(exc), maxsplit=1)
        return [Result("caldav", False, problem, fix[0] if fix else
                       "check FRONTDESK_CALDAV_URL and FRONTDESK_CALDAV_CALENDAR")]
    if not writable:
        return [Result("caldav", False, f"{found}, but read-only for "
                                        f"{settings.caldav_username or 'this user'}",
                       "give FRONTDESK_CALDAV_USERNAME write access to it, or point "
                       "FRONTDESK_CALDAV_URL at a calendar it may write to")]
    return [Result("caldav", True, f"{found}: logged in, may write")]


async def check_transcription(ctx: Context) -> list[Result]:
    """When on (a key or FRONTDESK_TRANSCRIBE_BASE_URL): the server transcribes a short clip."""
    if ctx.settings is None:
        return []
    from bot.media.transcription import TranscriptionConfig
    from bot.media.transcription import check_transcription as transcribes

    if TranscriptionConfig.from_settings(ctx.settings) is None:
        return []
    ok, detail = await transcribes(ctx.settings)
    return [Result("transcribe", ok, detail,
                   "" if ok else "check FRONTDESK_TRANSCRIBE_BASE_URL, FRONTDESK_TRANSCRIBE_MODEL "
                                 "and OPENAI_API_KEY")]


async def check_mcp(ctx: Context) -> list[Result]:
    """When a servers file is configured: each server starts and lists its tools."""
    settings = ctx.settings
    if settings is None:
        return []
    from bot.tools.mcp_client import check_servers, server_log_path
    from bot.tools.mcp_config import config_path

    if config_path(settings.mcp_config, settings.home) is None:
        return []
    statuses, problems = await check_servers(settings.mcp_config, settings.home,
                                             settings.mcp_timeout)
    results = [Result("mcp", False, problem, "fix that entry of the servers file")
               for problem in problems]
    for status in statuses:
        if status.ok:
            results.append(Result(f"mcp {status.name}", True,
                                  f"{len(status.tools)} tools: " + ", ".join(status.tools)))
        else:
            log_file = server_log_path(settings.home / "logs", status.name)
            results.append(Result(f"mcp {status.name}", False, status.problem,
                                  f"see {log_file} and the server's command in the servers "
                                  "file"))
    return results


# The checks, in order; a part that arrives later adds its check here.
CHECKS: list[Check] = [check_settings, check_data_dir, check_database, check_telegram,
                       check_discord, check_models, check_transcription, check_mcp,
                       check_calendar, check_caldav]


async def run_checks(env: Mapping[str, str], checks: list[Check] | None = None) -> list[Result]:
    """Every check, in order; a check that fails by itself is one failed line, not a crash."""
    ctx = Context(env)
    results: list[Result] = []
    for check in checks or CHECKS:
        try:
            results += await check(ctx)
        except Exception as exc:  # a doctor never dies of the illness it looks for
            name = check.__name__.removeprefix("check_")
            details = write_details(ctx.settings or Settings.from_env({}), exc)
            results.append(Result(name, False, f"the check itself failed ({type(exc).__name__})",
                                  f"details are in {details}"))
    return results


def report_json(results: list[Result]) -> dict[str, Any]:
    """``--json``: ``{"ok": bool, "checks": [{"name", "ok", "detail", "fix"}]}``."""
    return {"ok": all(r.ok for r in results), "checks": [asdict(r) for r in results]}
