"""`frontdesk setup`: from nothing to a working ``.env`` in a few questions, in a terminal.

Usage::

    frontdesk setup        # then: frontdesk doctor, frontdesk run

Pick Telegram and/or Discord, paste the token (checked with the platform at once), write any
message to the bot (Telegram) or DM it (Discord) so the wizard reads your numeric id, then an
optional mailbox (both logins tried at once, docs/email.md), an optional model provider and
key (checked with one call), the time zone and a calendar. Every
answer is checked with the same rules as the settings (``bot.config.values``) and asked
again when wrong. ``.env`` in the working directory is updated (``bot.config.env_file``): mode 0600,
other values kept. Secrets are read without echo and never printed.
"""

from __future__ import annotations

import asyncio
import getpass
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from bot.config import values
from bot.config.env_file import update_env_file
from bot.setup.probes import (
    ProbeError,
    Who,
    discord_bot,
    discord_first_dm,
    telegram_bot,
    telegram_first_sender,
)

T = TypeVar("T")
WAIT_FOR_MESSAGE_S = 300.0
PROVIDERS = {"": "offline", "o": "offline", "offline": "offline", "a": "anthropic",
             "anthropic": "anthropic", "p": "openai", "openai": "openai"}


@dataclass(frozen=True)
class Platform:
    """What differs between setting up Telegram and Discord."""

    prefix: str  # of the variables: TELEGRAM_BOT_TOKEN, …
    intro: str
    shape: Callable[[str, str | None], str | None]  # the token's shape (bot.config.values)
    sign_in: Callable[[str, str | None], Awaitable[Who]]
    first_message: Callable[[str, str | None, float], Awaitable[Who]]
    write_now: Callable[[Who], str]  # what to do so the wizard learns the owner's id


def or_default(check: Callable[[str], str], default: str) -> Callable[[str], str]:
    """``check`` of the answer, or of ``default`` when the answer is empty."""
    return lambda raw: check(raw or default)


class Wizard:
    """The questions, in order; ``answers`` collects what goes into ``.env``."""

    def __init__(self, env: Mapping[str, str], ask: Callable[[str], str] = input,
                 ask_secret: Callable[[str], str] = getpass.getpass,
                 say: Callable[[str], None] = print) -> None:
        self.env = env
        self.ask = ask
        self.ask_secret = ask_secret
        self.say = say
        self.answers: dict[str, str] = {}

    def run(self, env_path: Path) -> int:
        self.say("Frontdesk setup: a few questions, then a .env file. Ctrl-C stops at any time.")
        self.say(f"Answers go into {env_path} (other values there are kept).\n")
        platforms = self.choose("Which chat platform? [t]elegram, [d]iscord, [b]oth",
                                {"": "t", "t": "t", "telegram": "t", "d": "d", "discord": "d",
                                 "b": "b", "both": "b"})
        if platforms in {"t", "b"}:
            self.telegram()
        if platforms in {"d", "b"}:
            self.discord()
        self.email()
        self.models()
        self.zone_and_calendar()
        if self.choose("Let strangers ask you for access with Allow / Block buttons? [y/N]",
                       {"": "n", "n": "n", "no": "n", "y": "y", "yes": "y"}) == "y":
            self.answers["FRONTDESK_PAIRING"] = "ask"
        update_env_file(env_path, self.answers)
        self.say(f"\nWrote {len(self.answers)} settings to {env_path} (readable by you only).")
        self.say("Next: `frontdesk doctor` checks everything, then `frontdesk run` starts the "
                 "bot.")
        return 0

    # -- the questions ---------------------------------------------------------------
    def telegram(self) -> None:
        self.platform(Platform(
            "TELEGRAM", "Telegram: in @BotFather send /newbot (or /mybots for an existing bot) "
            "and copy the token.", values.telegram_token, telegram_bot, telegram_first_sender,
            lambda me: f"send any message to {me.name} from your own Telegram account "
                       f"(t.me/{me.name.lstrip('@')})"))

    def discord(self) -> None:
        self.platform(Platform(
            "DISCORD", "Discord: Developer Portal → your application → Bot → Reset Token; also "
            "switch on Message Content Intent on that page.", values.discord_token,
            discord_bot, discord_first_dm,
            lambda me: f"send {me.name} a direct message from your own account (invite it to "
                       "a server you share first if Discord does not offer a DM)"))

    def platform(self, steps: Platform) -> None:
        """Token (shape, then the platform), then the owner's id from their first message."""
        base = self.env.get(f"{steps.prefix}_BASE_URL") or None
        self.say(f"\n{steps.intro}")

        def check(token: str) -> Who:
            steps.shape(f"{steps.prefix}_BOT_TOKEN", token)
            return self.probe(steps.sign_in(token, base))

        name = steps.prefix.capitalize()
        token, me = self.secret_until_valid(f"Paste the {name} bot token: ", check)
        self.say(f"Signed in as {me.name} (id {me.id}).")
        self.say(f"Now {steps.write_now(me)} …")
        owner = self.probe(steps.first_message(token, base, WAIT_FOR_MESSAGE_S))
        self.say(f"Got it: {owner.name}, id {owner.id}. You are the owner.")
        self.answers.update({f"{steps.prefix}_BOT_TOKEN": token,
                             f"{steps.prefix}_OWNER_ID": owner.id})
        if base:
            self.answers[f"{steps.prefix}_BASE_URL"] = base

    def email(self) -> None:
        """Optional: the desk's own mailbox, both logins tried before anything is kept."""
        from bot.config.email_settings import allowed_senders, email_settings, is_loopback

        self.say("")
        if self.choose("Answer mail too, from the desk's own mailbox (docs/email.md)? [y/N]",
                       {"": "n", "n": "n", "no": "n", "y": "y", "yes": "y"}) == "n":
            return
        trial = {"FRONTDESK_EMAIL_IMAP_HOST": "imap.example.com",
                 "FRONTDESK_EMAIL_SMTP_HOST": "smtp.example.com", "FRONTDESK_EMAIL_PASSWORD": "-"}

        def check(name: str) -> Callable[[str], str]:
            def checked(raw: str) -> str:
                email_settings({**trial, name: raw}.get)
                trial[name] = raw
                return raw
            return checked

        address = self.until_valid("The desk's address (e.g. desk@example.com): ",
                                   check("FRONTDESK_EMAIL_ADDRESS"))
        domain = address.rpartition("@")[2]
        for kind in ("IMAP", "SMTP"):
            guess = f"{kind.lower()}.{domain}"
            self.until_valid(f"{kind} server [{guess}]: ",
                             or_default(check(f"FRONTDESK_EMAIL_{kind}_HOST"), guess),
                             allow_empty=True)
        local = is_loopback(trial["FRONTDESK_EMAIL_IMAP_HOST"]) and is_loopback(
            trial["FRONTDESK_EMAIL_SMTP_HOST"])
        options = {"": "tls", "t": "tls", "tls": "tls", "s": "starttls", "starttls": "starttls"}
        if local:  # in the clear only to this machine (FRONTDESK_EMAIL_SECURITY's rule)
            options.update({"n": "none", "none": "none"})
        security = self.choose("Security? [t]ls (default), [s]tarttls"
                               + (", [n]one (this machine only)" if local else ""), options)
        trial["FRONTDESK_EMAIL_SECURITY"] = security
        ports = {"tls": ("993", "465"), "starttls": ("143", "587"), "none": ("143", "25")}
        for kind, port in zip(("IMAP", "SMTP"), ports[security], strict=True):
            self.until_valid(f"{kind} port [{port}]: ",
                             or_default(check(f"FRONTDESK_EMAIL_{kind}_PORT"), port),
                             allow_empty=True)
        self.until_valid(f"Login name [{address}]: ",
                         or_default(check("FRONTDESK_EMAIL_USERNAME"), address),
                         allow_empty=True)

        def log_in(password: str) -> str:
            from bot.adapters.email.check import logins

            if not password:
                return ""
            email = email_settings({**trial, "FRONTDESK_EMAIL_PASSWORD": password}.get)
            assert email is not None
            for ok, detail, fix in self.probe(logins(email)):
                if not ok:
                    raise ValueError(f"{detail}: {fix}")
            return "logged in to both servers"

        password, said = self.secret_until_valid(
            "The mailbox's password (an app password for Gmail and Fastmail; empty to leave "
            "email off): ", log_in, allow_empty=True)
        if not password:
            self.say("Email left off.")
            return
        self.say(f"Mailbox accepted: {said}.")
        allowed = self.until_valid(
            "Addresses and @domains answered without your approval (e.g. ana@example.com,"
            "@example.org; empty: every answer is a draft you approve): ",
            lambda raw: ",".join(sorted(allowed_senders("FRONTDESK_EMAIL_ALLOWED", raw))),
            allow_empty=True)
        self.answers.update({**trial, "FRONTDESK_EMAIL_PASSWORD": password})
        if allowed:
            self.answers["FRONTDESK_EMAIL_ALLOWED"] = allowed

    def models(self) -> None:
        from bot.config.settings import Settings
        from bot.models.check import list_models

        self.say("")
        provider = self.choose("Model provider? [o]ffline (no key, built-in rules), "
                               "[a]nthropic, o[p]enai or a compatible local server", PROVIDERS)
        self.answers["FRONTDESK_MODEL_PROVIDER"] = provider
        if provider == "offline":
            return
        prefix = "ANTHROPIC" if provider == "anthropic" else "OPENAI"
        base = self.env.get(f"{prefix}_BASE_URL") or ""
        if provider == "openai" and not base:
            base = self.until_valid("OpenAI-compatible server URL (empty for OpenAI itself, "
                                    "e.g. http://127.0.0.1:11434/v1 for Ollama): ",
                                    lambda raw: values.base_url("OPENAI_BASE_URL", raw) or "",
                                    allow_empty=True)

        def check(key: str) -> str:
            trial = {"FRONTDESK_HOME": "/nonexistent", "FRONTDESK_MODEL_PROVIDER": provider,
                     f"{prefix}_API_KEY": key, f"{prefix}_BASE_URL": base}
            found = asyncio.run(list_models(Settings.from_env(trial)))
            if found.problem:
                raise ValueError(f"{found.problem}: {found.fix}")
            return f"{len(found.names)} models offered"

        optional = provider == "openai" and bool(base)
        key, said = self.secret_until_valid(
            f"Paste the {prefix} API key{' (empty for none)' if optional else ''}: ", check,
            allow_empty=optional)
        self.say(f"Key accepted: {said}.")
        if key:
            self.answers[f"{prefix}_API_KEY"] = key
        if base:
            self.answers[f"{prefix}_BASE_URL"] = base

    def zone_and_calendar(self) -> None:
        from bot.calendar.ics import machine_zone

        here = str(machine_zone())
        self.say("")
        zone = self.until_valid(f"Your time zone [{here}]: ",
                                lambda raw: values.time_zone("FRONTDESK_TIMEZONE", raw or here)
                                or here, allow_empty=True)
        self.answers["FRONTDESK_TIMEZONE"] = zone

        def calendar(raw: str) -> str:
            if raw:
                values.readable_calendar("FRONTDESK_CALENDAR", os.path.expanduser(raw))
            return raw

        if found := self.until_valid("Calendar: an .ics file or an http(s) link (empty for "
                                     "none): ", calendar, allow_empty=True):
            self.answers["FRONTDESK_CALENDAR"] = found

    # -- asking ----------------------------------------------------------------------
    def choose(self, question: str, options: Mapping[str, str]) -> str:
        while True:
            picked = options.get(self.ask(f"{question}: ").strip().lower())
            if picked is not None:
                return picked
            self.say("Please answer with one of the letters shown.")

    def until_valid(self, question: str, check: Callable[[str], str], *,
                    allow_empty: bool = False) -> str:
        while True:
            raw = self.ask(question).strip()
            if raw or allow_empty:
                try:
                    return check(raw)
                except ValueError as problem:
                    self.say(str(problem))

    def secret_until_valid(self, question: str, check: Callable[[str], T], *,
                           allow_empty: bool = False) -> tuple[str, T]:
        while True:
            raw = self.ask_secret(question).strip()
            if raw or allow_empty:
                try:
                    return raw, check(raw)
                except (ValueError, ProbeError) as problem:
                    self.say(str(problem))

    @staticmethod
    def probe(job: Awaitable[T]) -> T:
        """Run one platform probe to its end (each has its own loop: the wizard is sync)."""
        async def run() -> T:
            return await job

        return asyncio.run(run())
