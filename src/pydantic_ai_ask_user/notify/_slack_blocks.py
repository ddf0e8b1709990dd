"""The Block Kit of `SlackChannel`'s messages and modals, as plain dicts: no Slack library is imported here.

Everything the model or the application wrote goes into `plain_text` objects (Slack draws them as they are: no
mention, no link, no bold) or, where `mrkdwn` is needed (a code block), through `mrkdwn_escape`. Every text is cut to
Block Kit's limits.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai_ask_user._answers import AskUserRequest
from pydantic_ai_ask_user._approvals import PendingApproval
from pydantic_ai_ask_user._i18n import translator

from ._items import Finished, Recipient, WaitingItem
from ._links import InboxLinks

Block = dict[str, Any]
"""One Block Kit block (or element), as the Web API takes it."""

MAX_BLOCKS = 50
"""The most blocks one message holds (Block Kit's limit)."""

MAX_SECTION_TEXT = 3000
"""The longest text of a section block."""

MAX_BUTTON_TEXT = 75
"""The longest text of a button (and of an option)."""

MAX_MODAL_TITLE = 24
"""The longest title, submit and close text of a modal."""

MAX_BLOCK_ID = 255
"""The longest `block_id` and `action_id`."""

MAX_URL = 3000
"""The longest URL of a button."""

MAX_FALLBACK_TEXT = 3000
"""How much of the notification text (the message's `text`) is kept."""

MAX_BUTTONS = 5
"""A single-select question with at most this many options gets a button each; more, a select menu."""

PREFIX = 'ask_user'
"""What every `block_id`, `action_id` and `callback_id` of this channel starts with."""

ANSWER_CALLBACK = f'{PREFIX}:answer'
"""The `callback_id` of the answer modal."""

DENY_CALLBACK = f'{PREFIX}:deny'
"""The `callback_id` of the modal that asks why a call is denied."""


def mrkdwn_escape(text: str) -> str:
    """`text` for a `mrkdwn` field: `&`, `<` and `>` as Slack's entities, so it links and mentions nothing."""
    return text.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')


def cut(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, ending in `…` when cut (never in the middle of a surrogate pair)."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + '…'


def plain(text: str, limit: int = MAX_SECTION_TEXT) -> Block:
    """A `plain_text` object: drawn as it is, emoji codes included (`emoji: false`)."""
    return {'type': 'plain_text', 'text': cut(text, limit) or ' ', 'emoji': False}


def _section(block_id: str, text: str) -> Block:
    return {'type': 'section', 'block_id': block_id, 'text': plain(text)}


def _context(block_id: str, text: str) -> Block:
    return {'type': 'context', 'block_id': block_id, 'elements': [plain(text)]}


@dataclass(frozen=True)
class Drawing:
    """How the channel draws: its language and whether questions take the person's own words."""

    language: str
    """The language of the channel's own words."""

    allow_custom_answers: bool
    """Whether each question has an "Other" box in the answer modal."""

    @property
    def gettext(self) -> Callable[[str], str]:
        """The language's `gettext`."""
        return translator(self.language).gettext


def item_prefix(n: int) -> str:
    """The start of every `block_id` of the `n`-th item of a message."""
    return f'{PREFIX}:{n}:'


def actions_block_id(n: int, item: WaitingItem) -> str:
    """The `block_id` of an item's buttons: it names the item (`q` or `a`, and its key)."""
    return f'{item_prefix(n)}{"a" if item.kind == "approval" else "q"}:{item.key}'


def read_actions_block_id(block_id: str) -> tuple[int, str, str] | None:
    """(n, kind letter, key) of an `actions_block_id`, or `None` when it is not one."""
    parts = block_id.split(':', 3)
    if len(parts) != 4 or parts[0] != PREFIX or not parts[1].isdigit() or parts[2] not in ('q', 'a') or not parts[3]:
        return None
    return int(parts[1]), parts[2], parts[3]


def needs_modal(request: AskUserRequest, drawing: Drawing) -> bool:
    """Whether answering `request` takes the modal (several questions, multi-select, notes) rather than buttons."""
    return len(request.questions) != 1 or request.questions[0].multi_select or request.notes


def message_blocks(
    recipient: Recipient, items: Sequence[WaitingItem], links: InboxLinks, drawing: Drawing
) -> tuple[list[Block], str]:
    """The blocks of the message that tells `recipient` of `items`, and its notification text (escaped)."""
    _ = drawing.gettext
    blocks: list[Block] = []
    if len(items) > 1:
        title = translator(drawing.language).ngettext(
            '{count} item waits for you', '{count} items wait for you', len(items)
        )
        blocks.append(
            {'type': 'header', 'block_id': f'{PREFIX}:head', 'text': plain(title.format(count=len(items)), 150)}
        )
    shown = 0
    for n, item in enumerate(items):
        drawn = item_blocks(n, item, recipient, links, drawing)
        if len(blocks) + len(drawn) + 1 > MAX_BLOCKS:
            break
        blocks.extend(drawn)
        if len(items) > 1:
            blocks.append({'type': 'divider', 'block_id': f'{item_prefix(n)}end'})
        shown += 1
    if shown < len(items):
        more = translator(drawing.language).ngettext(
            '…and {count} more in the inbox', '…and {count} more in the inbox', len(items) - shown
        )
        blocks.append(
            {
                'type': 'section',
                'block_id': f'{PREFIX}:more',
                'text': plain(more.format(count=len(items) - shown)),
                'accessory': _link_button(f'{PREFIX}:more', _('Open the inbox'), links.inbox(recipient)),
            }
        )
    if len(items) == 1:
        item = items[0]
        text = (
            _('A tool call waits for your approval: {tool}').format(tool=item.approval.tool_name)
            if item.approval is not None
            else _('A question waits for you: {headline}').format(headline=item.headline)
        )
    else:
        text = blocks[0]['text']['text']
    return blocks, mrkdwn_escape(cut(text, MAX_FALLBACK_TEXT))


def _link_button(action_id: str, text: str, url: str) -> Block:
    return {'type': 'button', 'action_id': action_id, 'text': plain(text, MAX_BUTTON_TEXT), 'url': cut(url, MAX_URL)}


def item_blocks(n: int, item: WaitingItem, recipient: Recipient, links: InboxLinks, drawing: Drawing) -> list[Block]:
    """The blocks of one item: its headline, what it asks, and its buttons."""
    prefix = item_prefix(n)
    blocks = [_section(f'{prefix}h', item.headline)]
    context = item.context
    if context is not None and context.summary:
        blocks.append(_context(f'{prefix}s', context.summary))
    elements: list[Block] = []
    interactive = len(actions_block_id(n, item)) <= MAX_BLOCK_ID
    if item.request is not None:
        blocks.extend(_question_blocks(prefix, item.request))
        if interactive:
            elements.extend(_question_elements(n, item.request, drawing))
    elif item.approval is not None:
        blocks.extend(_approval_blocks(prefix, item.approval, drawing))
        if interactive:
            _ = drawing.gettext
            elements.append(_button(f'{PREFIX}:approve', _('Approve'), 'approve', style='primary'))
            elements.append(_button(f'{PREFIX}:deny', _('Deny…'), 'deny', style='danger'))
    _ = drawing.gettext
    elements.append(_link_button(f'{PREFIX}:link', _('Open in the inbox'), links.page(recipient, item)))
    blocks.append(
        {
            'type': 'actions',
            'block_id': actions_block_id(n, item) if interactive else f'{prefix}x',
            'elements': elements,
        }
    )
    return blocks


def _question_blocks(prefix: str, request: AskUserRequest) -> list[Block]:
    blocks: list[Block] = []
    titled = request.context is not None and bool(request.context.title)
    for i, question in enumerate(request.questions):
        # The headline is the first question's text unless the context has a title: not said twice.
        first = question.header if i == 0 and not titled else f'{question.header}: {question.question}'
        described = [f'• {o.label}: {o.description}' for o in question.options if o.description]
        blocks.append(_section(f'{prefix}q{i}', '\n'.join([first, *described])))
    return blocks


def _question_elements(n: int, request: AskUserRequest, drawing: Drawing) -> list[Block]:
    _ = drawing.gettext
    if needs_modal(request, drawing):
        return [_button(f'{PREFIX}:open', _('Answer…'), 'open', style='primary')]
    question = request.questions[0]
    elements: list[Block] = []
    if len(question.options) <= MAX_BUTTONS:
        for o, option in enumerate(question.options):
            style = 'primary' if option.label == question.recommended else None
            elements.append(_button(f'{PREFIX}:answer:{o}', option.label, f'0:{o}', style=style))
    else:
        elements.append(
            {
                'type': 'static_select',
                'action_id': f'{PREFIX}:select',
                'placeholder': plain(_('Choose an option'), 150),
                'options': [
                    {'text': plain(option.label, MAX_BUTTON_TEXT), 'value': f'0:{o}'}
                    for o, option in enumerate(question.options)
                ],
            }
        )
    if drawing.allow_custom_answers:
        elements.append(_button(f'{PREFIX}:open', _('Other…'), 'open'))
    return elements


def _button(action_id: str, text: str, value: str, *, style: str | None = None) -> Block:
    button: Block = {'type': 'button', 'action_id': action_id, 'text': plain(text, MAX_BUTTON_TEXT), 'value': value}
    if style is not None:
        button['style'] = style
    return button


ARGS_LIMIT = 2600
"""How much of an approval's arguments (as JSON) a message shows; the inbox shows them all."""


def _approval_blocks(prefix: str, approval: PendingApproval, drawing: Drawing) -> list[Block]:
    _ = drawing.gettext
    args = json.dumps(approval.args, indent=2, ensure_ascii=False, default=str, sort_keys=True)
    shortened = len(args) > ARGS_LIMIT
    code = mrkdwn_escape(cut(args, ARGS_LIMIT)).replace('`', 'ˋ')
    blocks: list[Block] = [
        _section(f'{prefix}t', _('Tool call waiting for approval: {tool}').format(tool=approval.tool_name)),
        {
            'type': 'section',
            'block_id': f'{prefix}args',
            'text': {'type': 'mrkdwn', 'text': f'```{code}```', 'verbatim': True},
        },
    ]
    if shortened:
        blocks.append(_context(f'{prefix}cut', _('The arguments are shortened here; the inbox shows them all.')))
    return blocks


def finished_text(finished: Finished, drawing: Drawing) -> str:
    """What an item's message says once it finished: "Answered by alice", "Denied", "Withdrawn"."""
    _ = drawing.gettext
    by = finished.by
    outcome = finished.outcome
    if outcome == 'answered':
        return _('Answered by {name}').format(name=by) if by else _('Answered')
    if outcome == 'declined':
        return _('Declined by {name}').format(name=by) if by else _('Declined')
    if outcome == 'approved':
        return _('Approved by {name}').format(name=by) if by else _('Approved')
    if outcome == 'denied':
        return _('Denied by {name}').format(name=by) if by else _('Denied')
    if outcome == 'withdrawn':
        return _('No longer waiting')
    return _('Finished by {name}').format(name=by) if by else _('Finished')


def finished_blocks(blocks: Sequence[Block], n: int, status: str) -> list[Block]:
    """`blocks` (a message's) with the `n`-th item's buttons and details replaced by one line: `status`."""
    prefix = item_prefix(n)
    result: list[Block] = []
    for block in blocks:
        block_id = str(block.get('block_id', ''))
        if not block_id.startswith(prefix):
            result.append(block)
        elif block_id == f'{prefix}h':
            result.append(block)
            result.append(_context(f'{prefix}done', status))
        elif block_id == f'{prefix}end':
            result.append(block)
    return result


def lone_finished_blocks(headline: str, status: str) -> list[Block]:
    """The blocks of a one-item message once it finished, drawn anew: its headline and `status`."""
    return [_section(f'{item_prefix(0)}h', headline or ' '), _context(f'{item_prefix(0)}done', status)]


def _words_input(block_id: str, action_id: str, label: str, *, multiline: bool = False) -> Block:
    """An optional box of a modal for a person's own words (an answer, a note, a reason), at most 2,000 characters."""
    element: Block = {'type': 'plain_text_input', 'action_id': action_id, 'max_length': 2000}
    if multiline:
        element['multiline'] = True
    return {'type': 'input', 'block_id': block_id, 'label': plain(label, 2000), 'optional': True, 'element': element}


def answer_modal(request: AskUserRequest, metadata: str, drawing: Drawing) -> Block:
    """The modal that answers `request`: per question, its options (radio buttons, or checkboxes for multi-select),
    an "Other" box when custom answers are allowed, a note when the request takes notes.
    """
    _ = drawing.gettext
    blocks: list[Block] = []
    optional = drawing.allow_custom_answers
    for i, question in enumerate(request.questions):
        options = [
            {
                'text': plain(option.label, MAX_BUTTON_TEXT),
                'value': str(o),
                **({'description': plain(option.description, MAX_BUTTON_TEXT)} if option.description else {}),
            }
            for o, option in enumerate(question.options)
        ]
        element: Block = {
            'type': 'checkboxes' if question.multi_select else 'radio_buttons',
            'action_id': 'choice',
            'options': options,
        }
        blocks.append(
            {
                'type': 'input',
                'block_id': f'q{i}',
                'label': plain(question.header, 2000),
                'hint': plain(question.question, 2000),
                'optional': optional,
                'element': element,
            }
        )
        if drawing.allow_custom_answers:
            blocks.append(_words_input(f'q{i}-other', 'other', _('Or in your own words')))
        if request.notes:
            blocks.append(_words_input(f'q{i}-note', 'note', _('Note (optional)'), multiline=True))
    return {
        'type': 'modal',
        'callback_id': ANSWER_CALLBACK,
        'private_metadata': metadata,
        'title': plain(_('Answer'), MAX_MODAL_TITLE),
        'submit': plain(_('Send'), MAX_MODAL_TITLE),
        'close': plain(_('Cancel'), MAX_MODAL_TITLE),
        'blocks': blocks[:100],
    }


def deny_modal(approval: PendingApproval, metadata: str, drawing: Drawing) -> Block:
    """The modal that denies `approval`, with an optional reason told to the model."""
    _ = drawing.gettext
    return {
        'type': 'modal',
        'callback_id': DENY_CALLBACK,
        'private_metadata': metadata,
        'title': plain(_('Deny the call'), MAX_MODAL_TITLE),
        'submit': plain(_('Deny'), MAX_MODAL_TITLE),
        'close': plain(_('Cancel'), MAX_MODAL_TITLE),
        'blocks': [
            _section('tool', _('Tool call waiting for approval: {tool}').format(tool=approval.tool_name)),
            _words_input('reason', 'reason', _('Why (told to the model; optional)'), multiline=True),
        ],
    }


def notice_modal(text: str, drawing: Drawing) -> Block:
    """A modal that only tells something ("answered already"), for `response_action: update`."""
    _ = drawing.gettext
    return {
        'type': 'modal',
        'title': plain(_('Answer'), MAX_MODAL_TITLE),
        'close': plain(_('Close'), MAX_MODAL_TITLE),
        'blocks': [_section('notice', text)],
    }
