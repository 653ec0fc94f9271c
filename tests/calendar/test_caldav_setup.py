"""Setting CalDAV up: the variables checked at start, the doctor's line for each mistake, the
password never shown, and a message answered from the copy, without a request to the server.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import pytest

from bot.adapters.console import ConsoleAdapter, console_message
from bot.app import assemble
from bot.calendar.caldav import CalDavConfig, CalDavServer
from bot.calendar.writer import CalendarUnavailable
from bot.config.settings import Settings
from bot.setup.doctor import Result, check_caldav, check_settings, run_checks
from tests.fakes.radicale_server import RadicaleServer


def caldav_env(home: Path, url: str, server: RadicaleServer, **extra: str) -> dict[str, str]:
    return {"FRONTDESK_HOME": str(home), "FRONTDESK_TIMEZONE": "Europe/Berlin",
            "FRONTDESK_MODEL_PROVIDER": "offline", "FRONTDESK_CALDAV_URL": url,
            "FRONTDESK_CALDAV_USERNAME": server.username,
            "FRONTDESK_CALDAV_PASSWORD": server.password, **extra}


async def doctor_line(env: dict[str, str]) -> Result:
    results = await run_checks(env, [check_settings, check_caldav])
    assert results[0].ok, results[0]
    [line] = results[1:]
    return line


@pytest.mark.parametrize(("env", "names"), [
    ({"FRONTDESK_CALDAV_URL": "https://owner:hunter2-secret@dav.example.com/cal/"},
     "FRONTDESK_CALDAV_USERNAME"),
    ({"FRONTDESK_CALDAV_URL": "dav.example.com"}, "FRONTDESK_CALDAV_URL"),
    ({"FRONTDESK_CALDAV_USERNAME": "me", "FRONTDESK_CALDAV_PASSWORD": "hunter2-secret"},
     "FRONTDESK_CALDAV_URL is not"),
    ({"FRONTDESK_CALDAV_URL": "https://dav.example.com/", "FRONTDESK_CALDAV_USERNAME": "me"},
     "FRONTDESK_CALDAV_PASSWORD is not set"),
])
def test_a_bad_caldav_setting_names_the_variable(env: dict[str, str], names: str,
                                                 tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=names) as refused:
        Settings.from_env({"FRONTDESK_HOME": str(tmp_path), **env})
    assert "hunter2-secret" not in str(refused.value)


def test_the_password_is_a_secret_of_the_settings(tmp_path: Path) -> None:
    settings = Settings.from_env({"FRONTDESK_HOME": str(tmp_path),
                                  "FRONTDESK_CALDAV_URL": "https://dav.example.com/",
                                  "FRONTDESK_CALDAV_USERNAME": "me",
                                  "FRONTDESK_CALDAV_PASSWORD": "hunter2-secret"})
    assert "hunter2-secret" not in repr(settings)
    assert "hunter2-secret" in settings.secrets()  # scrubbed from every log line
    assert "hunter2-secret" not in repr(CalDavConfig.from_settings(settings))


async def test_doctor_says_ok_when_the_calendar_is_writable(
        radicale: RadicaleServer, tmp_path: Path) -> None:
    url = radicale.calendar_url("work", "Work")
    line = await doctor_line(caldav_env(tmp_path, url, radicale))
    assert line.ok and line.name == "caldav"
    assert "Work" in line.detail and "may write" in line.detail


async def test_doctor_finds_the_calendar_by_name_under_the_server_url(
        radicale: RadicaleServer, tmp_path: Path) -> None:
    radicale.calendar_url("work", "Work")
    line = await doctor_line(caldav_env(tmp_path, radicale.url, radicale,
                                        FRONTDESK_CALDAV_CALENDAR="Work"))
    assert line.ok, line


async def test_doctor_lines_for_each_mistake(radicale: RadicaleServer, tmp_path: Path,
                                            caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # every library's lines, the client's requests included
    url = radicale.calendar_url("work", "Work")

    wrong_password = await doctor_line(caldav_env(
        tmp_path, url, radicale, FRONTDESK_CALDAV_PASSWORD="not-the-pw-991"))
    wrong_name = await doctor_line(caldav_env(tmp_path, radicale.url, radicale,
                                              FRONTDESK_CALDAV_CALENDAR="Holidays"))
    not_a_calendar = await doctor_line(caldav_env(tmp_path, radicale.url, radicale))
    unreachable = await doctor_line(caldav_env(tmp_path, "http://127.0.0.1:9/dav/", radicale))

    assert not wrong_password.ok and "refused the login" in wrong_password.detail
    assert "FRONTDESK_CALDAV_PASSWORD" in wrong_password.fix
    assert not wrong_name.ok and "no calendar named 'Holidays'" in wrong_name.detail
    assert "FRONTDESK_CALDAV_CALENDAR" in wrong_name.fix and "'Work'" in wrong_name.fix
    assert not not_a_calendar.ok and "FRONTDESK_CALDAV_CALENDAR" in not_a_calendar.fix
    assert not unreachable.ok and "cannot reach" in unreachable.detail
    assert "FRONTDESK_CALDAV_URL" in unreachable.fix
    said = [r.getMessage() for r in caplog.records] + [
        f"{line.detail} {line.fix}" for line in (wrong_password, wrong_name, unreachable)]
    assert not [text for text in said if radicale.password in text or "not-the-pw-991" in text]


def test_a_refused_login_never_shows_the_password(radicale: RadicaleServer,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    url = radicale.calendar_url("work", "Work")
    server = CalDavServer(CalDavConfig(url, None, radicale.username, "wrong-pw-4471"))
    with pytest.raises(CalendarUnavailable) as refused:
        server.fetch()
    assert "FRONTDESK_CALDAV_PASSWORD" in str(refused.value)
    assert refused.value.__cause__ is None and refused.value.__suppress_context__
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "wrong-pw-4471" not in str(refused.value) + logged


async def test_a_message_reads_the_copy_and_is_answered_with_the_server_down(
        radicale: RadicaleServer, tmp_path: Path) -> None:
    url = radicale.new_calendar()
    app = assemble(Settings.from_env(caldav_env(tmp_path, url, radicale)))
    assert app.owner.caldav is not None and app.owner.writer is not None
    app.owner.caldav.refresh_now()
    await app.chat.gateway.start()
    await app.chat.gateway.attach(ConsoleAdapter(echo=False), recover=False)
    try:
        asked = radicale.requests
        reply = await app.chat.gateway.handle(console_message("what's on my calendar today?"))
        assert reply is not None and reply.text
        assert radicale.requests == asked  # the triage read the local copy, not the server

        down = assemble(Settings.from_env(caldav_env(tmp_path / "other", "http://127.0.0.1:9/",
                                                     radicale)))
        await down.chat.gateway.start()
        await down.chat.gateway.attach(ConsoleAdapter(echo=False), recover=False)
        try:
            reply = await down.chat.gateway.handle(console_message("what's on my calendar today?"))
            assert reply is not None and reply.text  # answered all the same
            assert down.owner.context({"is_owner": True}) == "Calendar unavailable."
        finally:
            await down.close()
    finally:
        await app.close()


def test_frontdesk_agenda_reads_the_caldav_calendar_with_the_ics_merged(
        radicale: RadicaleServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bot.cli.agenda import main as agenda
    from tests.calendar.test_caldav import vcalendar

    url = radicale.new_calendar()
    radicale.put_event(url, vcalendar("UID:on-caldav\nSUMMARY:From CalDAV\n"
                                      "DTSTART:20240402T080000Z\nDTEND:20240402T090000Z"))
    ics = tmp_path / "also.ics"
    ics.write_bytes(vcalendar("UID:in-ics\nSUMMARY:From the file\n"
                              "DTSTART:20240402T100000Z\nDTEND:20240402T110000Z"))
    settings = Settings.from_env(caldav_env(tmp_path, url, radicale,
                                            FRONTDESK_CALENDAR=str(ics)))
    args = argparse.Namespace(calendar=None, tz=None, start="2024-04-02", end=None, json=True)
    assert agenda(args, settings) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(e["summary"], e["start"]) for e in listed] == [
        ("From CalDAV", "2024-04-02T10:00:00+02:00"),
        ("From the file", "2024-04-02T12:00:00+02:00")]

    down = Settings.from_env(caldav_env(tmp_path, "http://127.0.0.1:9/", radicale))
    assert agenda(args, down) == 1  # never read, unreachable: one line, no traceback
    assert "calendar unavailable" in capsys.readouterr().err
