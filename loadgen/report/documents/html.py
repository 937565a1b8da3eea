"""``report.html``: the blocks of :func:`loadgen.report.documents.markdown.build_document` as one
self-contained page.

Owns the page's markup and CSS. Everything is inline: the CSS in a
``<style>`` element, every plot as a ``data:image/png;base64`` URI read from
the results directory. No script, no external font, stylesheet or image, so
the file can be mailed, attached to a CI run or opened offline.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

from loadgen.report.blocks import (
    FAIL,
    INCONCLUSIVE,
    INTERRUPTED,
    PASS,
    Block,
    Figures,
    Heading,
    Items,
    Table,
    Text,
)

__all__ = ["CSS", "render_html"]

CSS = """
:root { --fg: #1d2330; --muted: #5b6475; --line: #d9dde5; --bg: #ffffff; --band: #f5f7fa;
        --pass: #18794e; --pass-bg: #e6f4ec; --fail: #b42318; --fail-bg: #fdecea;
        --warn-bg: #fff7e0; --warn: #8a5a00; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
       font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
main { max-width: 1280px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 10px; padding-bottom: 4px;
     border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 22px 0 8px; }
p.note { color: var(--muted); margin: 0 0 8px; }
p.verdict { font-size: 17px; font-weight: 600; background: var(--band);
            border-left: 4px solid #2f6fde; padding: 10px 14px; margin: 8px 0; }
ul { margin: 6px 0 10px; padding-left: 22px; }
ul.warn { list-style: none; padding: 8px 12px 8px 14px; background: var(--warn-bg);
          color: var(--warn); border-left: 4px solid #e0a800; }
ul.warn li::before { content: "⚠ "; }
.table-wrap { overflow-x: auto; margin: 8px 0 12px; }
table { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 4px 6px; text-align: right; white-space: nowrap; }
th { background: var(--band); font-weight: 600; white-space: normal; vertical-align: bottom;
     min-width: 4.5em; line-height: 1.25; }
table.verdicts td:last-child, table.verdicts th:last-child { position: sticky; right: 0;
     box-shadow: -2px 0 3px rgba(0, 0, 0, 0.06); }
table.verdicts td:last-child { background: var(--bg); }
td:first-child, th:first-child, td.t { text-align: left; }
tr:nth-child(even) td { background: #fbfcfd; }
td.pass, td.fail { font-weight: 600; text-align: center; }
td.pass { color: var(--pass); background: var(--pass-bg) !important; }
td.fail { color: var(--fail); background: var(--fail-bg) !important; }
.figs { display: flex; flex-wrap: wrap; gap: 12px; margin: 10px 0; }
.figs figure { margin: 0; flex: 1 1 480px; min-width: 0; }
.figs img { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 4px; }
/* never wider than drawn: a one-panel figure is not scaled up to the page's width */
footer { color: var(--muted); font-size: 12px; margin-top: 32px; }
"""


#: cells that say whether a step met its SLA
_VERDICT_CELLS = (PASS, FAIL, INCONCLUSIVE, INTERRUPTED)


def _cell(text: str) -> str:
    if text in (PASS, FAIL):
        cls = " class=pass" if text == PASS else " class=fail"
    elif text[:1].isalpha():
        cls = " class=t"  # words, not numbers: left-aligned
    else:
        cls = ""
    return f"<td{cls}>{html.escape(text)}</td>"


def _table(t: Table) -> str:
    """A table; one whose last column holds verdicts (pass / fail) keeps that column in
    view: its headers wrap so the table fits the page, and should it still be wider than
    the window, the last column sticks to the right edge while the rest scrolls."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in t.header)
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in t.rows)
    verdicts = any(row and row[-1] in _VERDICT_CELLS for row in t.rows)
    cls = " class=verdicts" if verdicts else ""
    table = f"<table{cls}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    return f'<div class="table-wrap">{table}</div>'


def _data_uri(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    kind = "svg+xml" if path.suffix == ".svg" else "png"
    return f"data:image/{kind};base64,{base64.b64encode(data).decode('ascii')}"


def _figures(f: Figures, base: Path) -> str:
    parts = []
    for rel, alt in f.images:
        uri = _data_uri(base / rel)
        if uri is None:
            parts.append(f"<figure><p class=note>missing plot: {html.escape(rel)}</p></figure>")
        else:
            parts.append(f'<figure><img src="{uri}" alt="{html.escape(alt)}"></figure>')
    return f'<div class="figs">{"".join(parts)}</div>'


def _block(b: Block, base: Path) -> str:
    if isinstance(b, Heading):
        return f"<h{b.level}>{html.escape(b.text)}</h{b.level}>"
    if isinstance(b, Text):
        cls = f' class="{b.tone}"' if b.tone else ""
        return f"<p{cls}>{html.escape(b.text)}</p>"
    if isinstance(b, Items):
        cls = f' class="{b.tone}"' if b.tone else ""
        return f"<ul{cls}>" + "".join(f"<li>{html.escape(i)}</li>" for i in b.items) + "</ul>"
    if isinstance(b, Table):
        return _table(b)
    return _figures(b, base)


def render_html(blocks: Sequence[Block], base: Path, title: str = "loadgen report") -> str:
    """The page; images are read from ``base`` (the results directory) and inlined."""
    body = "\n".join(_block(b, base) for b in blocks)
    return (
        "<!DOCTYPE html>\n<html lang=en>\n<head>\n<meta charset=utf-8>\n"
        '<meta name=viewport content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n"
        f"<body><main>\n{body}\n<footer>written by loadgen · self-contained: "
        "plots are inlined</footer>\n</main></body>\n</html>\n"
    )
