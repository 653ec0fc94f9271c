"""The reference calendars and their expected windows (tests/data/ics, see SOURCES.md there).
The real CalDAV server (``radicale``) is a fixture of tests/conftest.py, shared with the
meetings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ICS = Path(__file__).resolve().parent.parent / "data" / "ics"
WINDOWS: list[dict[str, Any]] = json.loads((ICS / "expected.json").read_text())
UNPARSEABLE = "test_with_multiple_tzids_in_vtimezone.ics"

