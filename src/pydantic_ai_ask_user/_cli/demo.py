"""`ask-user demo`: run an agent that asks two clarifying questions and acts on the answers.

The agent lives in `demo_agent`, imported when the command runs: listing or parsing `demo` loads no Pydantic AI.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import TYPE_CHECKING

import anyio

from .._text import printable
from .arguments import command
from .exit_codes import EXIT_ANSWERED, EXIT_CANNOT_ASK, EXIT_DECLINED, EXIT_INVALID

if TYPE_CHECKING:
    from pydantic_ai.models import Model

__all__ = ('register', 'run', 'TEST_MODEL_NOTE', 'EXIT_BAD_MODEL', 'EXIT_MISSING_PACKAGE', 'EXIT_MODEL_GAVE_UP')

EXIT_BAD_MODEL = EXIT_INVALID
"""`--model` names no model Pydantic AI knows, or one it cannot set up (a missing API key); one line on stderr."""

EXIT_MISSING_PACKAGE = EXIT_CANNOT_ASK
"""`--model` needs a provider package that is not installed; stderr names the extra to install."""

EXIT_MODEL_GAVE_UP = EXIT_DECLINED
"""A real model kept breaking the question rules until the run gave up: like a decline, nothing was answered."""

TEST_MODEL_NOTE = (
    "'test' is Pydantic AI's TestModel, whose made-up tool arguments AskUser refuses (two options both "
    "labelled 'a'); asking the demo's questions with pydantic_ai_ask_user.testing.asking_model() instead"
)
"""What `ask-user demo --model test` says before it runs `asking_model` in place of `TestModel`."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    """Add `demo` to the `ask-user` command line."""
    parser = command(
        subparsers,
        'demo',
        run,
        summary='run an agent that asks you two clarifying questions',
        description=(
            'Run an agent that asks two clarifying questions and acts on the answers. Offline and '
            'deterministic by default; in a terminal you answer, elsewhere a scripted person does.'
        ),
    )
    parser.add_argument('--model', metavar='NAME', help="a Pydantic AI model name, e.g. 'openai:gpt-5' (needs its key)")
    parser.add_argument('--scripted', action='store_true', help='let a scripted person answer even in a terminal')


def run(args: argparse.Namespace) -> int:
    """Run the demo, and return the exit code."""
    import pydantic_ai
    from pydantic_ai.exceptions import UnexpectedModelBehavior, UserError

    from .demo_agent import pick_answerer, run_demo

    # The demo owns its output: the exchange it prints is the point, so Pydantic AI's first-run banner stays out.
    pydantic_ai.BANNER_ENABLED = False
    name: str | None = args.model
    try:
        model = _resolve_model(name)
    except UserError as error:  # an unknown model name, a missing key
        _say(str(error))
        return EXIT_BAD_MODEL
    except ImportError as error:  # the provider's package is not installed
        _say(_missing_package_message(name or '', error))
        return EXIT_MISSING_PACKAGE
    if name == 'test':
        _say(TEST_MODEL_NOTE)
    person = pick_answerer(scripted=args.scripted, real_model=model is not None and name != 'test')
    try:
        anyio.run(
            lambda: run_demo(
                model=model, answerer=person.answerer, who=person.who, show_questions=not person.shows_questions
            )
        )
    except UserError as error:  # a provider that refuses the model only when it is called
        _say(str(error))
        return EXIT_BAD_MODEL
    except UnexpectedModelBehavior as error:  # a real model that kept breaking the question rules
        _say(f'the model gave up: {error}')
        return EXIT_MODEL_GAVE_UP
    return EXIT_ANSWERED


def _resolve_model(name: str | None) -> Model | None:
    """The model `--model` names: `None` for the demo's own, `asking_model` for `test`, else Pydantic AI's."""
    if name is None:
        return None
    if name == 'test':
        from ..testing import asking_model
        from .demo_agent import DEMO_QUESTIONS

        return asking_model(*DEMO_QUESTIONS['questions'], model_name='asking_model')
    from pydantic_ai.models import infer_model

    return infer_model(name)


_EXTRA = re.compile(r'pydantic-ai-slim\[([\w,-]+)\]')
"""Finds the optional group Pydantic AI's ImportError names, as in `pip install "pydantic-ai-slim[openai]"`."""


def _missing_package_message(name: str, error: ImportError) -> str:
    """One line saying which package the model needs and the command that installs it."""
    found = _EXTRA.search(str(error))
    provider, colon, _ = name.partition(':')
    extra = found.group(1) if found else provider if colon else ''
    if not extra:
        return f'the model {name!r} cannot be loaded: {error}'
    package = error.name or extra
    # Pydantic AI re-raises with its own message; the module that failed to import is the cause's name.
    cause = error.__cause__
    if isinstance(cause, ImportError) and cause.name:
        package = cause.name.partition('.')[0]
    return f"the model {name!r} needs the {package} package; install it with: pip install 'pydantic-ai-slim[{extra}]'"


def _say(message: str) -> None:
    print(f'ask-user: {printable(message, allow_newline=False)}', file=sys.stderr)
