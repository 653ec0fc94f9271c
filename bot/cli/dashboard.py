"""`frontdesk dashboard [--port N] [--host H]`: serve the web page of runs until interrupted.

It prints the link to open, which carries the access token (``bot.dashboard.server``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from bot.config.settings import Settings
from bot.dashboard.server import (
    DEFAULT_PORT,
    TOKEN_ENV,
    DashboardRefused,
    check_bind,
    serve_dashboard,
)


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Serve; exit 2 when the address is refused (another host without a token, port taken)."""
    host = args.host or "127.0.0.1"
    try:
        check_bind(host, os.environ.get(TOKEN_ENV) or None)
    except DashboardRefused as exc:
        print(f"frontdesk dashboard: {exc}", file=sys.stderr)
        return 2
    port = next(p for p in (args.port, settings.dashboard_port, DEFAULT_PORT) if p is not None)
    from bot.app import assemble
    from bot.models import Models, OfflineModel  # imported once the address is accepted

    # The pages only read runs: no model is ever called, so no provider needs to be set up.
    offline = Models(small=OfflineModel(role="small", name="offline-small"),
                     big=OfflineModel(role="big", name="offline-big"))
    app = assemble(settings, models=offline)

    def ready(link: str) -> None:
        print(f"Frontdesk dashboard: {link}  (Ctrl-C stops it)", flush=True)

    try:
        asyncio.run(serve_dashboard(app.flows.runs.registry, settings, app.db, host=host,
                                    port=port, on_ready=ready))
    except DashboardRefused as exc:
        print(f"frontdesk dashboard: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    finally:
        app.db.close()
    return 0
