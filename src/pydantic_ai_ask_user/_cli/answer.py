"""`ask-user answer ID`: answer one waiting question (in the terminal menu, or from JSON), decide one approval, or,
given a wait's token, decide every item of that wait at once.

What the id means is the library's rule (`find_waiting`): a whole key first, else a unique beginning of one
among the waiting questions and approvals.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from .._answer_json import parse_answer_json
from .._answers import AskUserRequest, ask_user_result
from .._receipt import os_user_at_host
from .._text import terminal_json
from ..store import StoreError, UnknownRequestError, find_waiting
from .approvals import answer_approval, answer_wait, approval_error, approval_flag_given, is_wait_token
from .common import (
    Store,
    ambiguous,
    ask_in_terminal,
    cannot_read_questions,
    fail,
    first_line,
    open_store,
    read_json,
    run_on,
    store_error,
    where,
)
from .exit_codes import EXIT_ANSWERED, EXIT_CANNOT_ASK, EXIT_DECLINED, EXIT_INVALID
from .i18n import _

__all__ = ('run_answer',)


def run_answer(args: argparse.Namespace) -> int:
    """Answer one waiting question (or decide an approval, or a whole wait) and print what its model gets."""
    return run_on(open_store(args), _answer, args)


async def _answer(store: Store, args: argparse.Namespace) -> int:
    item: str = args.item
    if is_wait_token(item):
        return await answer_wait(store, args)
    try:
        request = await store.get(item)
    except UnknownRequestError as unknown:
        return await _answer_other(store, args, unknown)
    except StoreError as error:
        return store_error(error)
    except Exception as error:
        fail(cannot_read_questions(args, error))
        return EXIT_CANNOT_ASK
    return await _answer_question(store, args, request)


async def _answer_other(store: Store, args: argparse.Namespace, unknown: UnknownRequestError) -> int:
    """`args.item` is no waiting question's key: an approval's, or what `find_waiting` reads it as (a tool call id,
    or the beginning of a key, as git takes a commit's); `unknown` said when it is none of them.
    """
    item: str = args.item
    try:
        try:
            return await answer_approval(store, args, await store.get_approval(item))
        except UnknownRequestError:
            pass
        found = await find_waiting(store, item)
    except StoreError as error:
        return approval_error(error)
    except Exception as error:
        fail(cannot_read_questions(args, error))
        return EXIT_CANNOT_ASK
    if len(found) > 1:
        return ambiguous(item, found.candidates())
    if found.approvals:
        return await answer_approval(store, args, found.approvals[0])
    if not found.questions:
        return store_error(unknown)
    return await _answer_question(store, args, found.questions[0])


async def _answer_question(store: Store, args: argparse.Namespace, request: AskUserRequest) -> int:
    """Answer `request` as `--json` says, or in the terminal menu; print what its model gets."""
    if approval_flag_given(args):
        fail(_('{id} is a question: answer it with --json, or in the terminal menu').format(id=repr(args.item)))
        return EXIT_INVALID
    if args.json_file is not None:
        try:
            response = parse_answer_json(request, read_json(args.json_file))
        except (OSError, UnicodeDecodeError) as error:
            fail(_('cannot read {path}: {error}').format(path=args.json_file, error=error))
            return EXIT_INVALID
        except ValueError as error:  # json.JSONDecodeError is one
            fail(_('invalid answer: {error}').format(error=error))
            return EXIT_INVALID
    else:
        asked = await ask_in_terminal(request)
        if isinstance(asked, int):
            return asked
        response = asked
    if response.answered_by is None:
        # Who answers here: the OS user and host; an answer given as JSON may name someone else itself.
        response = replace(response, answered_by=os_user_at_host())
    try:
        result = ask_user_result(request, response)
        await store.respond(request.key, response)
    except StoreError as error:
        return store_error(error)
    except ValueError as error:
        fail(_('invalid answer: {error}').format(error=error))
        return EXIT_INVALID
    except Exception as error:  # the database went away after the question was read
        fail(
            _(
                'cannot send the answer to {database}: {error}; '
                '`ask-user pending` shows whether the question still waits'
            ).format(database=where(args), error=first_line(error))
        )
        return EXIT_CANNOT_ASK
    sys.stdout.write(terminal_json(result) + '\n')
    return EXIT_DECLINED if response.cancelled else EXIT_ANSWERED
