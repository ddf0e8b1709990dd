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
    N_('pick one'),
    N_('pick one or more'),
    N_('{time} left'),
    N_('(recommended)'),
    N_('Note:'),
    N_('Tab note'),
    N_('Enter or Tab done'),
    N_('This text cannot be sent: it is blank.'),
    N_('This text cannot be sent: it contains {character}; only plain text and line breaks are allowed.'),
    N_('You declined to answer.'),
    N_('The question was withdrawn before you answered; no answer is needed any more.'),
    N_('A question is waiting for you'),
    N_('Asked by {agent}'),
)
"""The terminal menu: every string it draws (the menu reads them with `translator(language).gettext`).

The menu marks and translates these same strings where it draws them; this list is what the catalog
tests check the template against.
"""

TERMINAL_PLURALS = (
    Nn_('Your answer can be at most {count} character.', 'Your answer can be at most {count} characters.'),
    Nn_('Your note can be at most {count} character.', 'Your note can be at most {count} characters.'),
    Nn_('{count} more request waiting', '{count} more requests waiting'),
)
"""The terminal menu's messages that depend on a count."""

WEB = (
    N_('Declined'),
    N_('Answer sent'),
    N_('You declined to answer'),
    N_('The agent was told, and will carry on without your answer.'),
    N_('Thank you, your answer was sent'),
    N_('Note:'),
    N_('Back to the waiting questions'),
    N_('Skip to content'),
    N_('Notify me'),
    N_('Time left:'),
    N_('Where this question comes from'),
    N_('Asked by {agent}'),
    N_('conversation'),
    N_('Open where this was asked'),
    N_('This question is no longer waiting'),
    N_(
        'The agent stopped waiting for an answer (it timed out or its run was cancelled), so nothing you '
        'send now will reach it.'
    ),
    N_('This question was answered in another tab or by someone else'),
    N_('The agent has its answer, so this form can no longer be sent; anything you wrote stays below, to copy.'),
    N_('The question server stopped, so nothing you send now will reach the agent.'),
    N_('Some answers need another look'),
    N_('Choose one or more.'),
    N_('Choose one.'),
    N_('Recommended'),
    N_('Other'),
    N_('Your own answer (instead of the options)'),
    N_('Your own answer'),
    N_('Note (optional)'),
    N_('Submit'),
    N_('Decline to answer'),
    N_('Waiting questions'),
    N_('Waiting for you'),
    N_('Nothing is waiting for you.'),
    N_('asked {when}'),
    N_('run'),
    N_('Reload the page to see new questions.'),
    N_('What you wrote, to keep:'),
    N_('For a new link, press Enter in the terminal where ask-user is running.'),
    N_('Use the browser you signed in with: this ask-user has no terminal to print a new link in.'),
    N_('Ask whoever runs this inbox for a new link: ask-user inbox link YOUR-NAME prints one.'),
    N_('A question is waiting for you'),
    N_('Already answered'),
    N_('Ask whoever gave you the link for a new one, or use the browser you signed in with.'),
    N_('Each sign-in link works once.'),
    N_('It was answered in another tab or by someone else, so your answer was not sent.'),
    N_('Lost the connection to the server; trying again…'),
    N_('New questions appear here as they are asked.'),
    N_('No access'),
    N_('No question is waiting at this address.'),
    N_('No such question'),
    N_('Not signed in'),
    N_('Notifications are blocked in this browser'),
    N_('Notifications are on'),
    N_('Open the link that was printed when the question server started; it signs this browser in.'),
    N_('Pick at least one option.'),
    N_('Pick one of the options.'),
    N_('Pick only one option.'),
    N_('That choice is not one of the options; pick again.'),
    N_('The agent stopped waiting for an answer (it timed out or its run was cancelled).'),
    N_('The answer was refused: {reason}'),
    N_('The page was not sent by this server, or it is too old. Reload the question and answer again.'),
    N_('The question store cannot be reached'),
    N_('The question store cannot be reached; trying again…'),
    N_('This form has expired'),
    N_('This link does not work'),
    N_('This question has been answered already.'),
    N_(
        'This server cannot reach the database the questions are kept in, so it can neither show them '
        'nor take answers right now. Reload the page in a moment.'
    ),
    N_('This server has finished; you can close this tab.'),
    N_('Time is up'),
    N_('Write your answer in the box under "Other", or pick one of the options.'),
    N_('You are not allowed to see these questions.'),
    N_('You wrote an answer of your own but picked an option: choose "Other" to send it, or clear the box.'),
    N_('Your answer contains {character}; only plain text and line breaks are allowed.'),
    N_('Your answer is blank.'),
    N_('Your answer is {length} characters long; please keep it to {limit}.'),
    N_('Your note contains {character}; only plain text and line breaks are allowed.'),
    N_('Your note is blank: write something, or clear it.'),
    N_('Your note is {length} characters long; please keep it to {limit}.'),
    N_('just now'),
    N_('Sign in?'),
    N_('Sign in'),
    N_(
        'Sign in only if you opened this link yourself: a link another site opened for you could sign you in '
        'as someone else.'
    ),
    N_('This link signs this browser in to the questions of {title}.'),
    N_('This link signs this browser in as {name}.'),
    N_('This browser is signed in already; signing in again replaces that.'),
    N_('This browser is signed in as {name} now; signing in replaces that.'),
    N_('Open the sign-in link again, and sign in on the page it shows.'),
    N_('Approve {tool}?'),
    N_('The agent asks to run'),
    N_('Where this comes from'),
    N_('With these arguments'),
    N_('Approve'),
    N_('Reason for a denial (the agent is told)'),
    N_('Deny'),
    N_("Run it with these arguments instead (JSON, checked against the tool's parameters)"),
    N_('Approve with these arguments'),
    N_('Tool calls waiting for your approval'),
    N_('approval'),
    N_('No arguments.'),
    N_('Show as JSON'),
    N_('Approve with other arguments'),
    N_('Reply to the agent instead'),
    N_('Your reply (the tool does not run; the agent reads this instead)'),
    N_('Send the reply'),
    N_('Deny or ignore'),
    N_('Ignore'),
    N_('Ignore dismisses the call: it does not run, and the agent is told it was dismissed.'),
    N_('write the reply to give the agent first'),
    N_('Approved: {tool} runs'),
    N_('Approved with your arguments: {tool} runs'),
    N_('Denied: {tool} does not run'),
    N_('Replied: {tool} does not run'),
    N_('Ignored: {tool} does not run'),
    N_('It runs with the arguments you gave, not the ones the agent asked for:'),
    N_('It runs with the arguments the agent asked for:'),
    N_('The agent is told:'),
    N_('The decision was refused: {reason}'),
    N_('The page was not sent by this server, or it is too old. Reload it and decide again.'),
    N_('Your decision was sent to the agent.'),
    N_('choose an action: approve, approve with other arguments, reply, deny or ignore'),
    N_('More questions'),
    N_('More tool calls'),
    N_('Loading more questions…'),
    N_('This page of questions does not exist'),
    N_('The address of the page was changed or is too old. Start again from the first page.'),
)
"""Every string the web pages draw: from the templates (which `pybabel extract` does not read), from
`_cli/web_answerer.py` (in a directory it skips), and from the `web` package's code."""

WEB_PLURALS = (
    Nn_('The agent has a question for you', 'The agent has {count} questions for you'),
    Nn_('{count} question', '{count} questions'),
    Nn_('{count} day ago', '{count} days ago'),
    Nn_('{count} hour ago', '{count} hours ago'),
    Nn_('{count} minute ago', '{count} minutes ago'),
    Nn_('{count} question waiting', '{count} questions waiting'),
)
"""The web pages' texts that depend on a count."""

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
    N_('nothing is waiting'),
    N_('{id}  asked {asked}  workflow {workflow}'),
    N_('waits until {deadline}'),
    N_('for {names}'),
    N_('asked by {agent}'),
    N_('conversation {id}'),
    N_('--group needs --for NAME: the groups are those of the person named'),
    N_('a note may go with each answer'),
    N_('pick one or more'),
    N_('pick one'),
    N_('(recommended)'),
    N_('cannot read the questions in {database}: {error}'),
    N_('give a whole number from 1 to 500, not {text!r}'),
    N_('give a number of seconds, 0 or more, not {text!r}'),
    N_('{shown} of {total} waiting items shown'),
    N_('{shown} of {total} waiting items shown; the next ones: {command}'),
    N_('invalid answer: {error}'),
    N_('{error}; {hint}, or answer with --json'),
    N_('{error}; or answer with --json'),
    N_('cannot send the answer to {database}: {error}; `ask-user pending` shows whether the question still waits'),
    N_(
        'ask-user: waiting for a worker of the workflow to accept it: Temporal takes an answer only through a '
        'running worker {hint}'
    ),
    N_('start one, or give --timeout SECONDS to stop waiting'),
    N_(
        'no worker accepted it within {seconds:g} s, so this command recorded nothing; the server may still hand '
        'it to a worker that comes back: `ask-user pending --temporal` shows whether it still waits'
    ),
    N_('warning: {problem}; it is left out'),
    N_('no question is waiting under id {id}'),
    N_('{prefix!r} means {count} waiting items; give the whole id of the one you mean:'),
    N_('question {id} has already been answered'),
    N_('question {id} is no longer waiting for an answer'),
    N_('install the {extra} extra: uv sync --all-extras (in {path}), or {command}'),
    N_('install the {extra} extra: {command}'),
    N_('--namespace is a Temporal namespace: give --temporal HOST:PORT with it'),
    N_('the Temporal namespace {namespace} at {address}'),
    N_('this is not a TemporalEventWaiter token: it names no Temporal workflow'),
    N_(
        'no wait has this token: it was resolved already, its deadline passed, or no workflow of this namespace '
        'waits on it'
    ),
    N_('cannot resolve the wait in {where}: {error}'),
    N_('{token}  opened {opened}  workflow {workflow}'),
    N_('waits for {name} (ask-user resolve TOKEN --json FILE)'),
    N_('result of'),
    N_('call {id}'),
    N_('{id}  approval  asked {asked}  workflow {workflow}'),
    N_('run {call}?'),
    N_('(--approve, --deny REASON or --args JSON; wait {token})'),
    N_('approval {id} has already been decided'),
    N_('approval {id} is no longer waiting for a decision'),
    N_('nothing is waiting under id {id}'),
    N_('--args must be a JSON object of the arguments to run the call with'),
    N_('decide a tool approval with --approve, --deny [REASON], --args JSON, --respond TEXT, --ignore or --json FILE'),
    N_('invalid decision: {error}'),
    N_('cannot send the decision to {database}: {error}; `ask-user pending` shows whether it still waits'),
    N_('a wait is decided with --json FILE: an object of each call id and its decision or answer'),
    N_('nothing waits under this token: the wait was decided already, is over, or is unknown here'),
    N_('{id} is a question: answer it with --json, or in the terminal menu'),
    N_('nothing was decided: the approval still waits'),
    N_('give a number of seconds, more than 0 and at most {most}, not {text!r}'),
    N_('the address of the inbox is not known yet: start ask-user inbox first, or give --url'),
    N_('{path} holds no key: a JSON object with "key", 16 characters or more'),
    N_('--url takes the address of the inbox, http(s)://HOST[:PORT]/, not {url!r}'),
    N_('no inbox key at {path}: start ask-user inbox with the same --db or --temporal first, or give --key-file'),
    N_('cannot read the inbox key: {error}'),
    N_('--authorize takes MODULE:FUNCTION (for example myapp.auth:authorize), not {spec!r}'),
    N_('--authorize: {spec} is not a function'),
    N_('cannot import {module} for --authorize: {error}'),
    N_(
        '{host} is reached from other machines: give --url, the address people open (https://... behind a '
        'proxy that ends HTTPS), for the sign-in links to name; or --authorize MODULE:FUNCTION'
    ),
    N_('--authorize: {module} has no {name}'),
    N_('stopped'),
    N_('press Ctrl-C to stop'),
    N_('a sign-in link for a person: ask-user inbox link NAME [--group GROUP] {source}{file}'),
    N_(
        'warning: people reach this inbox over plain HTTP, where sign-in links and cookies can be read on the'
        ' way; put a proxy that ends HTTPS in front of it and give --url https://...'
    ),
    N_('sign in as an administrator, who sees every item (this link works once, within a day): {link}'),
    N_('the team inbox of {source} is at {url}'),
    N_('warning: cannot record the address in {path}: {error}'),
    N_('cannot read or make the inbox key: {error}'),
    N_('cannot serve the inbox on {host}:{port}: {error}'),
    N_('listening on all interfaces, port {port} ({host} is this machine: {name})'),
    N_('signing in is up to {hook}'),
    N_('give a whole number from 1 to 1000000, not {text!r}'),
    N_('could not open a browser; open the link above yourself'),
    N_(
        'warning: {path} may be read by other users of this machine, who could sign in as anyone with it: '
        'chmod 600 {path}'
    ),
)
"""The `ask-user` command's own messages to a person, as `_cli` looks them up with `_cli.i18n._`.

Babel skips directories whose names start with `_`, so `make messages` finds them here; a test checks
that this tuple holds every message `_cli` looks up.
"""
