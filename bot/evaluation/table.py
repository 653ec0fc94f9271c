"""The figures as the terminal shows them: a few lines and three small tables.

Other people's text (a wrong message) is cleaned for the terminal (``bot.config.text.shown``:
no control or bidi character gets through) and cut to one line.
"""

from __future__ import annotations

from bot.config.text import shown
from bot.evaluation.figures import Figures, percent
from bot.evaluation.labelled import ROUTES
from bot.models.guarded import usd

TEXT_WIDTH = 60  # characters of a wrong message shown in its table row


def as_text(figures: Figures) -> str:
    """The whole printout: headline, per route, confusion, calls and cost, time, wrong ones."""
    lines = [f"{figures.model}: {figures.n} messages"
             + ("" if figures.complete else f" of {figures.of} (stopped early)"),
             f"accuracy {percent(figures.accuracy)} ({figures.correct}/{figures.n})", ""]
    lines += [*per_route_table(figures), "", *confusion_table(figures), ""]
    lines.append(f"model calls {figures.calls}, tokens {figures.input_tokens:,} in / "
                 f"{figures.output_tokens:,} out, cost {usd(figures.cost_usd)}"
                 + (f"; {figures.by_rules} routed by the offline rules instead (the model's "
                    "reply unreadable, the budget spent or the provider down)"
                    if figures.by_rules else ""))
    lines.append(f"time per message: p50 {figures.percentile_ms(50):,.1f} ms, "
                 f"p99 {figures.percentile_ms(99):,.1f} ms")
    lines += ["", *wrong_table(figures)]
    return "\n".join(lines)


def per_route_table(figures: Figures) -> list[str]:
    rows = [f"{'route':<12} {'n':>4} {'correct':>8} {'precision':>10} {'recall':>8}"]
    for route, f in figures.per_route.items():
        rows.append(f"{route:<12} {f.n:>4} {f.correct:>8} {percent(f.precision):>10} "
                    f"{percent(f.recall):>8}")
    return rows


def confusion_table(figures: Figures) -> list[str]:
    rows = ["confusion (rows: expected, columns: got)",
            " " * 12 + "".join(f"{route:>13}" for route in ROUTES)]
    for expected, row in figures.confusion.items():
        rows.append(f"{expected:<12}" + "".join(f"{row[got]:>13}" for got in ROUTES))
    return rows


def wrong_table(figures: Figures) -> list[str]:
    wrong = figures.wrong
    if not wrong:
        return ["no message routed wrong"]
    rows = [f"routed wrong ({len(wrong)}):",
            f"{'line':>5}  {'expected':<12} {'got':<12} {'sender':<6} text"]
    for outcome in wrong:
        rows.append(f"{outcome.item.line:>5}  {outcome.item.route:<12} {outcome.got:<12} "
                    f"{outcome.item.sender:<6} {one_line(outcome.item.text)}")
    return rows


def one_line(text: str, width: int = TEXT_WIDTH) -> str:
    """Someone's message, safe for a terminal, on one line of at most ``width`` characters."""
    flat = " ".join(shown(text, "terminal").split())
    return flat if len(flat) <= width else flat[:width - 1] + "…"
