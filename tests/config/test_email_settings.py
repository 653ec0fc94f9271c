"""The FRONTDESK_EMAIL_* settings: the defaults, the security rule (``none`` only on this
machine, else exit 2 naming the variable), bad ports and the password never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config.email_settings import email_settings
from bot.config.settings import Settings
from tests.config.test_bad_settings import frontdesk

BASE = {"FRONTDESK_EMAIL_ADDRESS": "Desk@Example.com",
        "FRONTDESK_EMAIL_IMAP_HOST": "imap.example.com",
        "FRONTDESK_EMAIL_SMTP_HOST": "smtp.example.com",
        "FRONTDESK_EMAIL_PASSWORD": "mail-secret-77"}


def test_unset_address_means_no_email() -> None:
    assert email_settings({}.get) is None
    assert Settings.from_env({"FRONTDESK_HOME": "/tmp/x"}).email is None


def test_the_defaults() -> None:
    email = email_settings(BASE.get)
    assert email is not None
    assert email.address == "desk@example.com"
    assert (email.imap_port, email.smtp_port, email.security) == (993, 465, "tls")
    assert email.username == "Desk@Example.com"  # the address, as given
    assert (email.folder, email.poll, email.replies_per_day) == ("INBOX", 60.0, 5)
    assert email.allowed == frozenset()
    assert "mail-secret-77" not in repr(email)


def test_given_values_are_read() -> None:
    email = email_settings({**BASE, "FRONTDESK_EMAIL_IMAP_PORT": "143",
                            "FRONTDESK_EMAIL_SMTP_PORT": "587",
                            "FRONTDESK_EMAIL_SECURITY": "STARTTLS",
                            "FRONTDESK_EMAIL_USERNAME": "me@fastmail.com",
                            "FRONTDESK_EMAIL_FOLDER": "Desk", "FRONTDESK_EMAIL_POLL": "30",
                            "FRONTDESK_EMAIL_ALLOWED": "Ana@Example.org, @partner.example",
                            "FRONTDESK_EMAIL_REPLIES_PER_DAY": "0"}.get)
    assert email is not None
    assert (email.imap_port, email.smtp_port, email.security) == (143, 587, "starttls")
    assert (email.username, email.folder, email.poll) == ("me@fastmail.com", "Desk", 30.0)
    assert email.allows("ana@example.org") and email.allows("bo@partner.example")
    assert not email.allows("eve@example.org")
    assert email.replies_per_day == 0


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "mail.localhost"])
def test_security_none_is_allowed_on_this_machine(host: str) -> None:
    email = email_settings({**BASE, "FRONTDESK_EMAIL_IMAP_HOST": host,
                            "FRONTDESK_EMAIL_SMTP_HOST": host,
                            "FRONTDESK_EMAIL_SECURITY": "none"}.get)
    assert email is not None and email.security == "none"


@pytest.mark.parametrize("which", ["FRONTDESK_EMAIL_IMAP_HOST", "FRONTDESK_EMAIL_SMTP_HOST"])
def test_security_none_is_refused_for_a_host_elsewhere(tmp_path: Path, which: str) -> None:
    env = {**BASE, "FRONTDESK_EMAIL_IMAP_HOST": "127.0.0.1",
           "FRONTDESK_EMAIL_SMTP_HOST": "127.0.0.1", "FRONTDESK_EMAIL_SECURITY": "none",
           which: "mail.example.com"}
    done = frontdesk(tmp_path, "people", **env)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert "FRONTDESK_EMAIL_SECURITY" in line and "tls" in line
    assert "mail-secret-77" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(("name", "value"), [
    ("FRONTDESK_EMAIL_IMAP_PORT", "99999"), ("FRONTDESK_EMAIL_SMTP_PORT", "0"),
    ("FRONTDESK_EMAIL_SMTP_PORT", "smtp"), ("FRONTDESK_EMAIL_IMAP_PORT", "-1")])
def test_a_bad_port_names_the_variable(tmp_path: Path, name: str, value: str) -> None:
    with pytest.raises(ValueError, match=name):
        email_settings({**BASE, name: value}.get)
    done = frontdesk(tmp_path, "people", **{**BASE, name: value})
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert name in line and repr(value) in line and "65535" in line


@pytest.mark.parametrize(("name", "value", "words"), [
    ("FRONTDESK_EMAIL_SECURITY", "ssl", "tls, starttls, none"),
    ("FRONTDESK_EMAIL_ADDRESS", "desk-at-example", "not an email address"),
    ("FRONTDESK_EMAIL_IMAP_HOST", "imap example.com", "not a host name"),
    ("FRONTDESK_EMAIL_POLL", "often", "seconds"),
    ("FRONTDESK_EMAIL_ALLOWED", "ana, @example.org", "neither an address nor an @domain"),
    ("FRONTDESK_EMAIL_REPLIES_PER_DAY", "many", "whole number")])
def test_other_bad_values_name_the_variable(name: str, value: str, words: str) -> None:
    with pytest.raises(ValueError, match=name) as raised:
        email_settings({**BASE, name: value}.get)
    assert words in str(raised.value)


def test_a_missing_host_or_password_is_named() -> None:
    for name in ("FRONTDESK_EMAIL_IMAP_HOST", "FRONTDESK_EMAIL_SMTP_HOST",
                 "FRONTDESK_EMAIL_PASSWORD"):
        trimmed = {key: value for key, value in BASE.items() if key != name}
        with pytest.raises(ValueError, match=f"{name} is not set"):
            email_settings(trimmed.get)


def test_settings_without_the_address_are_refused() -> None:
    with pytest.raises(ValueError, match="FRONTDESK_EMAIL_ADDRESS is not"):
        email_settings({"FRONTDESK_EMAIL_PASSWORD": "x"}.get)


def test_the_password_is_a_secret() -> None:
    settings = Settings.from_env({"FRONTDESK_HOME": "/tmp/x", **BASE})
    assert "mail-secret-77" in settings.secrets()
