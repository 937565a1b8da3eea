"""argparse help laid out as click lays out the other loadgen commands' help.

``loadgen mock`` and ``loadgen agent`` are argparse programs (each also runs on
its own: ``python -m loadgen.mock``), passed through by the click CLI; their
``--help`` should read like every other command's. Both stand apart from the
rest of loadgen, so this is a leaf (the standard library only) that both
import, as the mock imports the netstamp leaf::

    Usage: loadgen mock [OPTIONS]

      One paragraph, wrapped and indented two spaces.

      Examples:
        loadgen mock --port 8000

    Options:
      --host TEXT     Address to bind.
      -h, --help      Show this message and exit.

A parser whose class is :class:`ClickStyleParser` prints that: the usage line,
the description's paragraphs (blank-line separated; a paragraph whose lines
start with spaces is kept as written, like click's ``\\b``), the epilog the
same way, then one section per argument group (``Options:`` for the main one),
each option with its metavar (the type's name in capitals, as click writes
it, where the option names none) and its help wrapped beside it. A leaf: the
standard library only.
"""

from __future__ import annotations

import argparse
import shutil
import textwrap
from typing import NoReturn

__all__ = ["ClickStyleParser", "click_help"]

#: click's: at most 80 columns, the option column at most 30 wide, 2 between
MAX_WIDTH, COL_MAX, COL_SPACING = 80, 30, 2

#: click's names of the types, for an option that gives no metavar of its own
_TYPE_NAMES: tuple[tuple[object, str], ...] = ((int, "INTEGER"), (float, "FLOAT"))


class ClickStyleParser(argparse.ArgumentParser):
    """Help in click's layout; usage errors in one line, as the click commands say them."""

    def format_help(self) -> str:
        return click_help(self)

    def format_usage(self) -> str:
        return f"Usage: {self.prog} [OPTIONS]\n"

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def click_help(parser: argparse.ArgumentParser, width: int | None = None) -> str:
    """``parser``'s help in click's layout (``width``: the terminal's, at most 80)."""
    if width is None:
        width = max(min(shutil.get_terminal_size().columns, MAX_WIDTH) - 2, 50)
    out = [f"Usage: {parser.prog} [OPTIONS]", ""]
    for text in (parser.description, parser.epilog):
        out += _paragraphs(text or "", width)
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    for group in parser._action_groups:  # argparse keeps no public list of them
        shown = [a for a in group._group_actions if a.help != argparse.SUPPRESS]
        # click lists -h, --help last
        shown.sort(key=lambda a: a.dest == "help" and a.nargs == 0)
        if shown:
            title = group.title or "Options"
            main = title in ("options", "optional arguments")
            sections.append(("Options" if main else title, [_row(parser, a) for a in shown]))
    # one option column for every section, as wide as the widest name up to COL_MAX
    names = [len(name) for _, rows in sections for name, _ in rows]
    first_col = min(max(names, default=0), COL_MAX) + COL_SPACING
    for title, rows in sections:
        out += [f"{title}:", *_table(rows, first_col, width), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _paragraphs(text: str, width: int) -> list[str]:
    out: list[str] = []
    for para in textwrap.dedent(text).strip("\n").split("\n\n"):
        if not para.strip():
            continue
        lines = para.splitlines()
        if any(line.startswith(" ") for line in lines[1:]):  # an example block: as written
            out += [f"  {line}" for line in lines]
        else:
            out += textwrap.wrap(" ".join(lines), width - 2, initial_indent="  ",
                                 subsequent_indent="  ", break_on_hyphens=False)  # fmt: skip
        out.append("")
    return out


def _row(parser: argparse.ArgumentParser, action: argparse.Action) -> tuple[str, str]:
    names = ", ".join(action.option_strings) or _metavar(action)
    if action.option_strings and action.nargs != 0:
        names += f" {_metavar(action)}"
    text = action.help or ""
    if "%" in text:
        params = {**vars(action), "prog": parser.prog}
        if action.choices is not None:
            params["choices"] = ", ".join(map(str, action.choices))
        text = text % params
    if action.dest == "help" and action.nargs == 0:  # argparse's -h: click's own words
        text = "Show this message and exit."
    return names, _sentence(text)


def _metavar(action: argparse.Action) -> str:
    if isinstance(action.metavar, str):
        return action.metavar
    if action.choices is not None:
        return "[" + "|".join(map(str, action.choices)) + "]"
    if not action.option_strings:
        return action.dest.upper()  # a positional argument: click writes its name
    return next((name for kind, name in _TYPE_NAMES if action.type is kind), "TEXT")


def _sentence(text: str) -> str:
    """Help as click's commands write it: a capital first letter and a full stop."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def _table(rows: list[tuple[str, str]], first_col: int, width: int) -> list[str]:
    text_width = max(width - first_col - 2, 10)
    out: list[str] = []
    for name, text in rows:
        lines = textwrap.wrap(text, text_width, break_on_hyphens=False)
        if not lines:
            out.append(f"  {name}")
            continue
        if len(name) <= first_col - COL_SPACING:
            out.append(f"  {name:<{first_col}}{lines[0]}".rstrip())
        else:
            out += [f"  {name}", f"  {'':<{first_col}}{lines[0]}".rstrip()]
        out += [f"  {'':<{first_col}}{line}" for line in lines[1:]]
    return out
