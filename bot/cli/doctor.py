"""`frontdesk doctor [--json]`: one line per check (``bot.setup.doctor``); 0 when all are ok."""

from __future__ import annotations

import argparse
import asyncio
import json
import os

from bot.config.logs import SecretFilter
from bot.config.settings import Settings
from bot.setup.doctor import CHECKS, report_json, run_checks
from bot.setup.email_doctor import check_email


def main(args: argparse.Namespace, settings: Settings | None) -> int:
    """Run every check against the real environment (settings are re-read: bad ones are a
    finding here, not a reason to stop)."""
    results = asyncio.run(run_checks(os.environ, [*CHECKS, check_email]))
    secrets = SecretFilter(settings.secrets() if settings else [])
    if args.json:
        print(secrets.scrub(json.dumps(report_json(results), ensure_ascii=False)))
    else:
        for result in results:
            print(secrets.scrub(result.line()))
        failed = sum(not r.ok for r in results)
        print("All checks passed." if not failed else
              f"{failed} check(s) need attention; see FAIL above.")
    return 0 if all(r.ok for r in results) else 1
