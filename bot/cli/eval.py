"""`frontdesk eval FILE | --sample [--offline] [--json] [--report PATH] [--max-usd X]`: how well
triage routes a labelled set of messages, with the configured small model or the offline router.

Each message goes through triage's classify step and route, and nothing else
(``bot.evaluation``). A paid run (a provider configured, no ``--offline``) is estimated first
and refused, in one line with exit status 2, when the estimate is past ``--max-usd`` (default:
what is left of today's budget); its calls go through the same guarded models as a chat's, so
each is counted against the daily budget. A progress bar shows on stderr when it is a
terminal; Ctrl-C prints the figures of what was measured so far (exit status 130).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TextIO

from bot.config.prompt_files import load_prompts
from bot.config.settings import Settings
from bot.evaluation.figures import Figures
from bot.evaluation.html import report_html
from bot.evaluation.labelled import LabelError, Labelled, read_labelled, sample
from bot.evaluation.running import Classifier, Outcome, estimate_usd, run_all
from bot.evaluation.table import as_text
from bot.models import OfflineModel, build_models, classify_offline
from bot.models.base import Model
from bot.models.costs import SpendLog, load_prices
from bot.models.guarded import usd
from bot.schema import open_database

PAID_PROVIDERS = ("anthropic", "openai")
BAR_WIDTH = 30


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Read the set, check the report's folder and the cost, measure, print."""
    try:
        items = labelled_set(args)
        check_report_path(args.report)
    except (LabelError, ValueError) as exc:
        return refuse(str(exc))
    prompt = load_prompts(settings.home / "prompts")["classify"]
    if args.offline or settings.model_provider not in PAID_PROVIDERS:
        label = "the offline router" if args.offline else \
            "the offline router (no model provider is configured)"
        return measure(items, Classifier(OfflineModel(role="small"), prompt, classify_offline,
                                         label), args)
    with open_database(settings.database) as db:  # for the spend log only: no run, no note
        spend_log = SpendLog.open(settings, db)
        models = build_models(settings, spend_log=spend_log)
        small = models.small
        estimate = estimate_usd(items, prompt, small.name, load_prices(settings))
        label = f"{small.provider}/{small.name}"
        refusal = over_the_limit(estimate, args.max_usd, settings, spend_log, len(items), label)
        if refusal is not None:
            return refuse(refusal)
        print(f"frontdesk eval: {len(items)} classify calls to {label}, estimated at most "
              f"{usd(estimate)}", file=sys.stderr)
        return measure(items, Classifier(small, prompt, classify_offline, label), args,
                       (models.small, models.big))


def labelled_set(args: argparse.Namespace) -> list[Labelled]:
    """FILE's messages, or the shipped sample's (exactly one of the two)."""
    if args.max_usd is not None and not args.max_usd >= 0:  # NaN is not >= 0 either
        raise ValueError(f"--max-usd must be a number of dollars, 0 or more (got {args.max_usd})")
    if args.sample and args.file:
        raise ValueError("give a FILE or --sample, not both")
    if args.sample:
        return sample()
    if not args.file:
        raise ValueError("give a FILE of labelled messages (JSON Lines), or --sample")
    return read_labelled(Path(args.file))


def check_report_path(report: str | None) -> None:
    """Before any call: the report's folder must exist, so a paid run is not wasted."""
    if report is not None and not Path(report).expanduser().resolve().parent.is_dir():
        raise ValueError(f"--report {report}: its folder does not exist")


def over_the_limit(estimate: float, max_usd: float | None, settings: Settings,
                   spend_log: SpendLog, count: int, label: str) -> str | None:
    """Why the run is refused (one line), or None when its estimate fits the limit."""
    if max_usd is not None:
        limit, what = max_usd, f"--max-usd {usd(max_usd)}"
    elif settings.daily_budget_usd is not None:
        left = max(0.0, settings.daily_budget_usd - spend_log.spent() - spend_log.held())
        limit = left
        what = (f"what is left of today's budget ({usd(left)} of "
                f"{usd(settings.daily_budget_usd)}; FRONTDESK_DAILY_BUDGET_USD)")
    else:
        return None
    if estimate <= limit:
        return None
    return (f"{count} classify calls to {label} are estimated at up to {usd(estimate)}, past "
            f"{what}; raise --max-usd, use a smaller set, or --offline")


def refuse(reason: str) -> int:
    print(f"frontdesk eval: {reason}", file=sys.stderr)
    return 2


def measure(items: list[Labelled], classifier: Classifier, args: argparse.Namespace,
            models: tuple[Model, ...] = ()) -> int:
    """Run the set, then print (and write) the figures of what was measured, all or part."""
    outcomes: list[Outcome] = []
    progress = Progress(sys.stderr, len(items))
    stopped = False
    try:
        asyncio.run(run_and_close(items, classifier, outcomes, progress, models))
    except KeyboardInterrupt:  # Ctrl-C: what was measured so far is still worth showing
        stopped = True
    progress.finish()
    figures = Figures.of_outcomes(outcomes, model=classifier.label, of=len(items))
    if args.json:
        print(json.dumps(figures.as_json(), ensure_ascii=False))
    else:
        print(as_text(figures))
    if args.report:
        path = Path(args.report).expanduser()
        path.write_text(report_html(figures), encoding="utf-8")
        print(f"frontdesk eval: report written to {path}", file=sys.stderr)
    if stopped:
        print(f"frontdesk eval: stopped; the figures are of the {figures.n} of {len(items)} "
              "messages measured", file=sys.stderr)
        return 130
    return 0


async def run_and_close(items: list[Labelled], classifier: Classifier,
                        outcomes: list[Outcome], progress: Progress,
                        models: tuple[Model, ...]) -> None:
    try:
        await run_all(items, classifier, outcomes, on_done=progress.step)
    finally:  # a provider's connections are closed, on Ctrl-C too
        for model in models:
            close = getattr(model, "aclose", None)  # a provider's model has connections
            if close is not None:
                await close()


class Progress:
    """``[#####.....] 12/150`` on ``stream``, redrawn in place; only on a terminal."""

    def __init__(self, stream: TextIO, total: int) -> None:
        self.stream = stream
        self.total = total
        self.done = 0
        self.on = stream.isatty()

    def step(self, _outcome: Outcome) -> None:
        self.done += 1
        if self.on:
            filled = BAR_WIDTH * self.done // max(1, self.total)
            self.stream.write(f"\r[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] "
                              f"{self.done}/{self.total}")
            self.stream.flush()

    def finish(self) -> None:
        if self.on and self.done:
            self.stream.write("\r\x1b[K")  # the bar is gone; the figures follow
            self.stream.flush()
