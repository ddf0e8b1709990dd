"""Notes, the recommended option and the time left, on the form and in the JSON API."""

from __future__ import annotations

import html as html_lib
import re
import time

import httpx
import pytest
from web_support import answer_body, asking, bearer, csrf_of, single

from pydantic_ai_ask_user import AskUserAnswer, AskUserRequest, Question
from pydantic_ai_ask_user.web import WebAnswerer

pytestmark = pytest.mark.anyio


def _with_notes() -> AskUserRequest:
    return AskUserRequest(questions=(single(),), notes=True)


async def _post(client: httpx.AsyncClient, request_id: str, **fields: str) -> httpx.Response:
    page = await client.get(f'/requests/{request_id}')
    return await client.post(f'/requests/{request_id}', data={'csrf': csrf_of(page.text), 'action': 'answer', **fields})


async def test_the_note_box_is_there_only_when_the_request_takes_notes(
    web: WebAnswerer, client: httpx.AsyncClient
) -> None:
    async with asking(web) as plain:
        page = (await client.get(f'/requests/{plain.request.id}')).text
        assert 'q0-note' not in page
        assert 'Note (optional)' not in page
    async with asking(web, _with_notes()) as noted:
        page = (await client.get(f'/requests/{noted.request.id}')).text
        assert '<label for="q0-note" class="small">Note (optional)</label>' in page
        assert 'maxlength="2000"' in page
        assert '0 / 2000' in page  # the counter, which the page script keeps current


async def test_a_note_goes_back_with_the_picked_option(web: WebAnswerer, client: httpx.AsyncClient) -> None:
    async with asking(web, _with_notes()) as job:
        sent = await _post(client, job.request.id, q0='0', **{'q0-note': "but only after\r\ntonight's backup"})
        assert sent.status_code == 200, sent.text
        assert (await job.response()).answers == (
            AskUserAnswer('Database', ('PostgreSQL',), note="but only after\ntonight's backup"),
        )
        assert 'Note: but only after' in html_lib.unescape(sent.text)


async def test_a_note_goes_back_with_a_custom_answer_and_a_blank_note_is_none(
    web: WebAnswerer, client: httpx.AsyncClient
) -> None:
    async with asking(web, _with_notes()) as job:
        await _post(client, job.request.id, q0='other', **{'q0-text': 'CockroachDB', 'q0-note': 'in 3 regions'})
        assert (await job.response()).answers == (
            AskUserAnswer('Database', custom_answer='CockroachDB', note='in 3 regions'),
        )
    async with asking(web, _with_notes()) as job:
        await _post(client, job.request.id, q0='1', **{'q0-note': '   '})
        assert (await job.response()).answers == (AskUserAnswer('Database', ('SQLite',)),)


@pytest.mark.parametrize(
    ('note', 'message'),
    [
        ('x' * 2001, 'Your note is 2001 characters long; please keep it to 2000.'),
        ('ring \x07 the bell', 'Your note contains U+0007'),
        ('\u200b\u200b', 'Your note is blank: write something, or clear it.'),
    ],
)
async def test_a_note_that_breaks_the_rules_is_said_on_the_form_keeping_what_was_typed(
    web: WebAnswerer, client: httpx.AsyncClient, note: str, message: str
) -> None:
    async with asking(web, _with_notes()) as job:
        refused = await _post(client, job.request.id, q0='1', **{'q0-note': note})
        assert refused.status_code == 422
        page = html_lib.unescape(refused.text)
        assert re.search(r'<p class="field-error" id="q0-note-error">' + re.escape(message), page)
        assert 'Some answers need another look' in page
        kept = re.search(r'<textarea name="q0-note"[^>]*>(.*?)</textarea>', refused.text, re.S)
        assert kept is not None
        assert html_lib.unescape(kept.group(1)) == note
        assert 'checked' in page.split('id="q0-o1"', 1)[1].split('>', 1)[0]  # the option stays ticked
        assert not job.done.is_set()


async def test_a_form_note_on_a_request_without_notes_is_ignored(web: WebAnswerer, client: httpx.AsyncClient) -> None:
    async with asking(web) as job:
        await _post(client, job.request.id, q0='1', **{'q0-note': 'sneaky'})
        assert (await job.response()).answers == (AskUserAnswer('Database', ('SQLite',)),)


async def test_the_json_api_takes_a_note_and_says_the_request_takes_notes(
    web: WebAnswerer, client: httpx.AsyncClient
) -> None:
    async with asking(web, _with_notes()) as job:
        shown = (await client.get(f'/api/requests/{job.request.id}', headers=bearer(web))).json()
        assert shown['notes'] is True
        body = answer_body()
        body['answers'][0]['note'] = 'x' * 2001  # type: ignore[index]
        too_long = await client.post(f'/api/requests/{job.request.id}/answer', json=body, headers=bearer(web))
        assert too_long.status_code == 422
        assert 'note' in too_long.json()['message']
        body['answers'][0]['note'] = 'after the backup'  # type: ignore[index]
        sent = await client.post(f'/api/requests/{job.request.id}/answer', json=body, headers=bearer(web))
        assert sent.status_code == 200, sent.text
        assert (await job.response()).answers[0].note == 'after the backup'


async def test_the_json_api_refuses_a_note_when_the_request_takes_none(
    web: WebAnswerer, client: httpx.AsyncClient
) -> None:
    async with asking(web) as job:
        shown = (await client.get(f'/api/requests/{job.request.id}', headers=bearer(web))).json()
        assert 'notes' not in shown
        assert 'deadline' not in shown
        body = answer_body()
        body['answers'][0]['note'] = 'sneaky'  # type: ignore[index]
        refused = await client.post(f'/api/requests/{job.request.id}/answer', json=body, headers=bearer(web))
        assert refused.status_code == 422
        assert not job.done.is_set()


def _recommending() -> AskUserRequest:
    question = single()
    return AskUserRequest(
        questions=(
            Question(
                header=question.header, question=question.question, options=question.options, recommended='SQLite'
            ),
        )
    )


async def test_the_recommended_option_has_a_badge_and_the_focus_and_is_not_ticked(
    web: WebAnswerer, client: httpx.AsyncClient
) -> None:
    async with asking(web, _recommending()) as job:
        page = (await client.get(f'/requests/{job.request.id}')).text
        sqlite = re.search(r'<input [^>]*id="q0-o1"[^>]*>', page)
        assert sqlite is not None
        assert 'autofocus' in sqlite.group()
        assert 'checked' not in sqlite.group()
        assert 'aria-describedby="q0-o1-r q0-o1-d"' in sqlite.group()
        assert '<span class="badge" id="q0-o1-r">Recommended</span>' in page
        assert page.count('autofocus') == 1
        assert page.count('class="badge"') == 1
        assert ' checked' not in page
    async with asking(web) as plain:
        page = (await client.get(f'/requests/{plain.request.id}')).text
        assert 'class="badge"' not in page
        assert 'autofocus' in re.search(r'<input [^>]*id="q0-o0"[^>]*>', page).group()


async def test_the_time_left_is_on_the_form_the_inbox_and_in_the_api(
    web: WebAnswerer, client: httpx.AsyncClient
) -> None:
    deadline = time.time() + 300
    request = AskUserRequest(questions=(single(),), deadline=deadline)
    async with asking(web, request) as job:
        form = (await client.get(f'/requests/{job.request.id}')).text
        shown = re.search(
            r'Time left: <time class="time-left" datetime="([^"]+)" data-deadline="([^"]+)">(\d+):(\d\d)</time>', form
        )
        assert shown is not None, form
        assert shown.group(1).endswith('Z')
        assert float(shown.group(2)) == deadline
        assert 4 <= int(shown.group(3)) <= 5
        inbox = (await client.get('/')).text
        assert f'data-deadline="{deadline}"' in inbox
        listed = (await client.get('/api/requests', headers=bearer(web))).json()['requests'][0]
        assert listed['deadline'] == deadline
        one = (await client.get(f'/api/requests/{job.request.id}', headers=bearer(web))).json()
        assert one['deadline'] == deadline
    async with asking(web) as plain:
        assert 'time-left' not in (await client.get(f'/requests/{plain.request.id}')).text
