"""Every message a person reads in the front ends, in English, marked for the catalogs (`make messages` extracts them).

The front ends still hold their own copies of these strings; wiring each front end to read them through
`translator(language).gettext` replaces those copies with these constants. Until then this module is what
`pybabel extract` finds, so the catalogs already carry every string a translation needs. Placeholders are
`str.format` fields (`{count}`), kept as they are in a translation.
"""

from __future__ import annotations

from ._i18n import N_, Nn_

__all__ = ('TERMINAL', 'TERMINAL_PLURALS', 'WEB', 'WEB_PLURALS', 'CLI')

TERMINAL = (
    N_('Type my own answer'),
    N_('To type your own answer, move to "Type my own answer" first (↑↓).'),
    N_('This question takes no typed answer; pick an option.'),
    N_('Typing here unticks {labels}: your own answer replaces the ticked options.'),
    N_('Your own answer replaces the ticked options: unticked {labels}.'),
    N_('Your own answer replaces the options: to tick options instead, clear the text in "Type my own answer" first.'),
    N_('This is the first question.'),
    N_('There is no option {number}.'),
    N_('Pick one: Enter chooses the highlighted option.'),
    N_('Pick at least one option (Space or its number), then press Enter.'),
    N_('Type your answer first, or pick an option with Up/Down.'),
    N_('{count}/{limit} characters'),
    N_('Enter send'),
    N_('Enter confirm the ticked options'),
    N_('←→ move in text'),
    N_('↑↓ leave the text'),
    N_('Shift-Tab back'),
    N_('Esc decline'),
    N_('↑↓ move'),
    N_('Space or 1-{count} toggle'),
    N_('1-{count} pick'),
    N_('Enter confirm'),
    N_('← back'),
)
"""The terminal menu: the custom-answer row, its hints and messages, and the key help line's parts."""

TERMINAL_PLURALS = (
    Nn_('Your answer can be at most {count} character.', 'Your answer can be at most {count} characters.'),
)
"""The terminal menu's messages that depend on a count."""

WEB = (
    N_('Skip to content'),
    N_('Questions waiting for you'),
    N_('No questions are waiting. New ones appear here as the agent asks them.'),
    N_('Reload the page to see new questions.'),
    N_('Choose one.'),
    N_('Choose one or more.'),
    N_('Other'),
    N_('Your own answer'),
    N_('Your own answer (instead of the options)'),
    N_('Submit'),
    N_('Decline to answer'),
    N_('Some answers need another look'),
    N_('Thank you, your answer was sent'),
    N_('You declined to answer'),
    N_('The agent was told, and will carry on without your answer.'),
    N_('Back to the waiting questions'),
    N_('This question is no longer waiting'),
    N_(
        'The agent stopped waiting for an answer (it timed out or its run was cancelled), '
        'so nothing you send now will reach it.'
    ),
    N_('This question was answered in another tab or by someone else'),
    N_('The agent has its answer, so this form can no longer be sent; anything you wrote stays below, to copy.'),
    N_('The question server stopped, so nothing you send now will reach the agent.'),
    N_('What you wrote, to keep:'),
)
"""The web inbox's headings, buttons and notices (from its templates)."""

WEB_PLURALS = (
    Nn_('The agent has a question for you', 'The agent has {count} questions for you'),
    Nn_('{count} question', '{count} questions'),
)
"""The web inbox's texts that depend on a count."""

CLI = (
    N_('ask-user: interrupted'),
    N_('ask-user: internal error (a bug in ask-user): {message}; set {variable}=1 to see where it happened'),
    N_('cannot read {path}: {error}'),
    N_('{error}; {hint}'),
    N_('the answerer returned an invalid response: {error}'),
    N_('not a DeferredToolResults: {problem}'),
    N_('this is not a DBOSEventWaiter token: it names no DBOS workflow'),
    N_('no wait has this token: it was resolved already, its deadline passed, or it is unknown to this database'),
    N_('cannot reach the database {database}: {error}'),
    N_('no questions are waiting'),
    N_('{id}  asked {asked}  workflow {workflow}'),
    N_('waits until {deadline}'),
    N_('a note may go with each answer'),
    N_('pick one or more'),
    N_('pick one'),
    N_('(recommended)'),
    N_('cannot read the questions in {database}: {error}'),
    N_('invalid answer: {error}'),
    N_('{error}; {hint}, or answer with --json'),
    N_('{error}; or answer with --json'),
    N_('cannot send the answer to {database}: {error}; `ask-user pending` shows whether the question still waits'),
    N_('no question is waiting under id {id}'),
    N_('question {id} has already been answered'),
    N_('question {id} is no longer waiting for an answer'),
    N_('install the {extra} extra: uv sync --all-extras (in {path}), or {command}'),
    N_('install the {extra} extra: {command}'),
)
"""The `ask-user` command's own messages to a person, as `_cli` looks them up with `_cli.i18n._`.

Babel skips directories whose names start with `_`, so `make messages` finds them here; a test checks
that this tuple holds every message `_cli` looks up.
"""
