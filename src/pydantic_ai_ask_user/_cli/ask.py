"""The arguments of `ask-user ask` (it runs in `asking`): put one `ask_user_question` argument file to a person,
and print the model's result.

Exit codes: 0 answered, 1 declined, 2 invalid input, 3 timed out, 4 no way to ask here. Asks through the
capability's own wait (`wait_for_answer`) and prints what `ask_user_result` makes, as the model would get it;
loads neither Pydantic AI nor DBOS, and Starlette only with `--web`.
"""

from __future__ import annotations

import argparse

from .arguments import command, later, port, seconds

# The question models, anyio and the front ends are imported when `ask` runs (`asking`, loaded by name), not when the
# command line is built: `ask-user --help` and the other commands never pay for them.

__all__ = ('register',)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    """Add `ask` to the `ask-user` command line."""
    parser = command(
        subparsers,
        'ask',
        later('asking', 'run'),
        summary='ask the questions of a JSON file in the terminal or a browser, print the answers as JSON',
        description=(
            'Read the arguments of an ask_user_question call ({"questions": [...]}, a question may name its '
            '"recommended" label) from FILE or stdin, '
            'ask them, and print on stdout the JSON the model would get. Exit codes: 0 answered, '
            '1 declined, 2 invalid input, 3 timed out, 4 no terminal or browser to ask in.'
        ),
    )
    parser.add_argument('file', nargs='?', default='-', metavar='FILE|-', help='the question file (default: stdin)')
    parser.add_argument('--timeout', type=seconds, metavar='SECONDS', help='give up after this many seconds')
    parser.add_argument('--notes', action='store_true', help='let the person add a note to each answer')
    parser.add_argument('--web', action='store_true', help='ask in a browser instead of the terminal')
    parser.add_argument('--host', default='127.0.0.1', help='with --web: the address to serve on')
    parser.add_argument('--port', type=port, default=0, help='with --web: the port (default: any free one)')
    parser.add_argument('--open', action='store_true', help='with --web: open the page in a browser')
    parser.add_argument(
        '--notify-url', metavar='URL', help='with --web: POST a signed webhook there (key: $ASK_USER_WEBHOOK_KEY)'
    )
    parser.add_argument('--bell', action='store_true', help='in the terminal: ring the bell when the question opens')
    parser.add_argument(
        '--notify-desktop',
        action='store_true',
        help='in the terminal: a desktop notification when the question opens (OSC 9 and OSC 777)',
    )
