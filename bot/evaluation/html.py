"""The figures as one self-contained HTML page (``frontdesk eval --report PATH``).

Nothing is fetched: the style is inline, the heat map of the confusion matrix (one ``<rect
class="cell">`` per pair of routes, shaded by its share of the expected route's messages) and
the per-route bars are inline SVG, and there is no script. Every text that came from someone
else (the messages, the model's name) is escaped with ``html.escape``.
"""

from __future__ import annotations

from html import escape

from bot.evaluation.figures import Figures, percent
from bot.evaluation.labelled import ROUTES
from bot.models.guarded import usd

CELL = 96  # px: one cell of the heat map
LABEL = 110  # px: the room for the route names beside it
TOP = 30  # px: the room for the route names above it
BAR_WIDTH = 320  # px: a bar at 100 %

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 62em;
       color: #1d2430; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: .2em; } h2 { font-size: 1.15em; margin-top: 1.8em; }
.headline { display: flex; gap: 2.5em; flex-wrap: wrap; margin: 1em 0; }
.headline div { min-width: 8em; } .headline b { display: block; font-size: 1.6em; }
table { border-collapse: collapse; } td, th { padding: .3em .8em; text-align: left;
       border-bottom: 1px solid #e3e6ea; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.text { white-space: pre-wrap; word-break: break-word; max-width: 36em; }
svg text { font: 13px system-ui, sans-serif; fill: #1d2430; }
.note { color: #5b6472; }
"""


def report_html(figures: Figures) -> str:
    """The whole page."""
    title = f"Triage evaluation: {figures.model}"
    stopped = ("" if figures.complete else
               f'<p class="note">Stopped early: {figures.n} of {figures.of} messages measured.</p>')
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>{STYLE}</style>
</head>
<body>
<h1>{escape(title)}</h1>
{stopped}
{headline(figures)}
<h2>Confusion matrix</h2>
<p class="note">Rows: the expected route; columns: the route triage took. A cell's shade is
its share of the row.</p>
{heat_map(figures)}
<h2>Per route</h2>
{route_bars(figures)}
<h2>Routed wrong ({len(figures.wrong)})</h2>
{wrong_rows(figures)}
</body>
</html>
"""


def headline(figures: Figures) -> str:
    """Accuracy, calls, tokens, cost and time, side by side."""
    items = [("accuracy", f"{percent(figures.accuracy)}",
              f"{figures.correct} of {figures.n}"),
             ("model calls", str(figures.calls),
              f"{figures.input_tokens:,} tokens in, {figures.output_tokens:,} out"),
             ("cost", usd(figures.cost_usd),
              "counted against the daily budget" if figures.calls else "nothing spent"),
             ("time per message", milliseconds(figures.percentile_ms(50)),
              f"p50; p99 {milliseconds(figures.percentile_ms(99))}")]
    cells = "".join(f'<div id="{escape(name.replace(" ", "-"))}">{escape(name)}'
                    f"<b>{escape(value)}</b>"
                    f'<span class="note">{escape(note)}</span></div>'
                    for name, value, note in items)
    return f'<div class="headline">{cells}</div>'


def milliseconds(value: float) -> str:
    """``412 ms``; ``0.14 ms`` below ten (the offline router is that fast)."""
    return f"{value:,.0f} ms" if value >= 10 else f"{value:.2f} ms"


def heat_map(figures: Figures) -> str:
    """The confusion matrix as an SVG grid: a cell per (expected, got), darker the larger its
    share of the expected route's messages; the diagonal (right) blue, the rest red."""
    width = LABEL + CELL * len(ROUTES)
    height = TOP + CELL * len(ROUTES)
    parts = [f'<svg id="confusion" xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
             'aria-label="confusion matrix">']
    for index, route in enumerate(ROUTES):
        parts.append(f'<text x="{LABEL + CELL * index + CELL // 2}" y="{TOP - 10}" '
                     f'text-anchor="middle">{escape(route)}</text>')
        parts.append(f'<text x="{LABEL - 8}" y="{TOP + CELL * index + CELL // 2 + 4}" '
                     f'text-anchor="end">{escape(route)}</text>')
    for row, (expected, counts) in enumerate(figures.confusion.items()):
        total = sum(counts.values())
        for column, got in enumerate(ROUTES):
            count = counts[got]
            share = count / total if total else 0.0
            hue = 212 if expected == got else 4
            x_at = LABEL + CELL * column
            y_at = TOP + CELL * row
            parts.append(
                f'<rect class="cell" data-expected="{expected}" data-got="{got}" '
                f'data-count="{count}" x="{x_at}" y="{y_at}" width="{CELL - 2}" '
                f'height="{CELL - 2}" fill="hsl({hue}, 70%, {96 - 50 * share:.0f}%)">'
                f"<title>expected {expected}, got {got}: {count}</title></rect>")
            ink = "#fff" if share > 0.55 else "#1d2430"
            parts.append(f'<text x="{x_at + CELL // 2}" y="{y_at + CELL // 2 + 5}" '
                         f'text-anchor="middle" style="fill: {ink}; font-size: 18px">'
                         f"{count}</text>")
    parts.append("</svg>")
    return "\n".join(parts)


def route_bars(figures: Figures) -> str:
    """Precision and recall of each route as two horizontal bars, with n and correct."""
    row_height = 56
    height = row_height * len(ROUTES) + 10
    width = LABEL + BAR_WIDTH + 160
    parts = [f'<svg id="routes" xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
             'aria-label="precision and recall per route">']
    for index, (route, f) in enumerate(figures.per_route.items()):
        top = index * row_height + 6
        parts.append(f'<text x="{LABEL - 8}" y="{top + 22}" text-anchor="end">'
                     f"{escape(route)}</text>")
        for offset, (name, value, colour) in enumerate((("precision", f.precision, "#3b6fb6"),
                                                         ("recall", f.recall, "#6aa84f"))):
            y_at = top + offset * 22
            length = BAR_WIDTH * (value or 0.0)
            parts.append(f'<rect class="bar" data-route="{route}" data-kind="{name}" '
                         f'x="{LABEL}" y="{y_at}" width="{length:.1f}" height="18" '
                         f'fill="{colour}"></rect>')
            parts.append(f'<text x="{LABEL + BAR_WIDTH + 8}" y="{y_at + 14}">{name} '
                         f"{percent(value)}</text>")
        parts.append(f'<text class="note" x="{LABEL - 8}" y="{top + 40}" text-anchor="end" '
                     f'style="fill: #5b6472">{f.correct} of {f.n}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def wrong_rows(figures: Figures) -> str:
    """The messages routed wrong, as a table (their text escaped)."""
    if not figures.wrong:
        return '<p class="note">None.</p>'
    rows = "\n".join(
        f'<tr class="wrong"><td class="num">{o.item.line}</td><td>{o.item.route}</td>'
        f"<td>{o.got}</td><td>{o.item.sender}</td>"
        f'<td class="text">{escape(o.item.text)}</td></tr>' for o in figures.wrong)
    return ('<table id="wrong"><tr><th class="num">line</th><th>expected</th><th>got</th>'
            f"<th>sender</th><th>text</th></tr>\n{rows}</table>")
