"""mkdocs hooks for the documentation site (`mkdocs.yml` names this file).

- The fences the tests read settings from (```` ```python {test="skip"} ````, `{install="..."}`) are plain
  ```` ```python ```` to the site: the settings are for `tests/test_docs.py`, not for the reader.
- `docs/cli.md`'s `<!-- cli-reference -->` becomes the reference of every `ask-user` command, generated from the
  argparse parser the command itself runs (`build_parser()`), so the page cannot drift from `--help`.

What the README repeats from the site is copied the other way, from the pages into the README, by
`scripts/readme.py`.
"""

from __future__ import annotations

import argparse
import html
import re
from typing import Any

CLI_MARKER = '<!-- cli-reference -->'
"""Where `docs/cli.md` wants the generated reference."""

_FENCE_SETTINGS = re.compile(
    r'^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<lang>[\w+-]+)[ \t]+\{[^}\n]*\}[ \t]*$', re.M
)
_HELP_WIDTH = 100
"""Usage lines are wrapped as argparse wraps them on a terminal this wide, whatever the build machine's is."""


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Drop the test settings from fences, and put the generated command reference where it is asked for."""
    markdown = _FENCE_SETTINGS.sub(r'\g<indent>\g<fence>\g<lang>', markdown)
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    return markdown


def cli_reference() -> str:
    """Markdown for `ask-user` and each of its commands: usage, description and a table of every argument."""
    from pydantic_ai_ask_user._cli import build_parser

    return '\n\n'.join(_sections(build_parser(), 'ask-user'))


def _sections(parser: argparse.ArgumentParser, title: str) -> list[str]:
    """The section of `parser`, then those of its subcommands, and theirs (`ask-user inbox link`), in order."""
    sections = [_command_section(parser, title, level=3)]
    for name, sub in _subcommands(parser).items():
        sections += _sections(sub, f'{title} {name}')
    return sections


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps them nowhere public
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _formatter(parser: argparse.ArgumentParser) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(parser.prog, width=_HELP_WIDTH)


def _command_section(parser: argparse.ArgumentParser, title: str, *, level: int) -> str:
    formatter = _formatter(parser)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    usage = formatter.format_help().strip()
    lines = [f'{"#" * level} `{title}`', '', '```text', usage, '```', '']
    if parser.description:
        lines += [_text(parser.description), '']
    rows = [_row(parser, action) for action in parser._actions if action.help is not argparse.SUPPRESS]
    rows = [row for row in rows if row]
    if rows:
        lines += ['| argument | what it does |', '| --- | --- |', *rows]
    return '\n'.join(lines).rstrip('\n')


def _row(parser: argparse.ArgumentParser, action: argparse.Action) -> str | None:
    if isinstance(action, argparse._SubParsersAction):
        names = ', '.join(f'`{name}`' for name in action.choices)
        return f'| `{action.metavar or "COMMAND"}` | one of {names} (each below) |'
    formatter = _formatter(parser)
    if action.option_strings:
        metavar = formatter._format_args(action, action.dest.upper()) if action.nargs != 0 else ''
        name = ', '.join(f'`{option}{" " + metavar if metavar else ""}`' for option in action.option_strings)
    else:
        name = f'`{formatter._format_args(action, action.dest)}`'
    help_text = formatter._expand_help(action) if action.help else ''
    return f'| {_cell(name)} | {_cell(_text(help_text))} |'


def _text(text: str) -> str:
    """Argparse's text as Markdown prose: one line, HTML-escaped (help may show `<FILE>`-like placeholders)."""
    return html.escape(' '.join(text.split()), quote=False)


def _cell(text: str) -> str:
    return text.replace('|', '\\|')
