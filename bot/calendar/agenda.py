"""The owner's agenda as text: a window's events one a line, free/busy for anyone else.

The ``agenda`` tool and the context a message's run starts with both read it here.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from bot.calendar.events import AgendaResult, Event, EventSource


def format_agenda(result: AgendaResult, zone: tzinfo | None = None) -> str:
    """Render events one a line (the caller picks ``result.busy_only()`` for non-owners)."""
    if not result.events:
        text = "Nothing in the calendar for that time."
    else:
        text = "\n".join(_event_line(event, zone) for event in result.events)
    if result.skipped:
        text += f"\n({len(result.skipped)} broken calendar entries were skipped.)"
    return text


def _event_line(event: Event, zone: tzinfo | None) -> str:
    cancelled = " (cancelled)" if (event.status or "").upper() == "CANCELLED" else ""
    if event.all_day or not isinstance(event.start, datetime):
        return f"- {event.start.isoformat()} all day: {event.summary}{cancelled}"
    start = event.start.astimezone(zone) if zone else event.start
    end = event.end.astimezone(zone) if zone and isinstance(event.end, datetime) else event.end
    until = f"{end:%H:%M}" if isinstance(end, datetime) else str(end)
    return f"- {start:%a %d %b %H:%M}–{until}: {event.summary}{cancelled}"


def read_agenda(calendar: EventSource, hours: float, is_owner: bool) -> str:
    """Today's events (hours <= 0) or the next hours, as text; free/busy unless the owner.
    A copy that could not be refreshed says so on a last line."""
    if hours and hours > 0:
        result = calendar.next_hours(min(float(hours), 24.0 * 31))
    else:
        result = calendar.events(*calendar.today())
    text = format_agenda(result if is_owner else result.busy_only(), calendar.zone)
    note = calendar.unavailable()
    return f"{text}\n({note}.)" if note else text
