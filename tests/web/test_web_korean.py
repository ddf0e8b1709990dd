"""The pages in the browser's language: Korean for `Accept-Language: ko-KR`, English otherwise."""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path

import httpx
import pytest
from web_support import asgi_client, asking, csrf_of, log_in, single

from pydantic_ai_ask_user import AskUserRequest
from pydantic_ai_ask_user._messages import WEB, WEB_PLURALS
from pydantic_ai_ask_user.web import WebAnswerer
from pydantic_ai_ask_user.web._templates import TEMPLATES_DIR

pytestmark = pytest.mark.anyio

KO = {'accept-language': 'ko-KR,ko;q=0.9,en;q=0.8'}


def _text(page: str) -> str:
    return html_lib.unescape(re.sub(r'\s+', ' ', page))


async def test_the_inbox_is_in_korean_for_a_korean_browser(web: WebAnswerer, client: httpx.AsyncClient) -> None:
    async with asking(web):
        korean = await client.get('/', headers=KO)
        english = await client.get('/', headers={'accept-language': 'de-DE,fr;q=0.5'})
    page = _text(korean.text)
    assert '<html lang="ko">' in korean.text
    assert korean.headers['content-language'] == 'ko'
    assert 'Accept-Language' in korean.headers['vary']
    for text in ('본문으로 건너뛰기', '질문 1개', '알림 받기', '실행'):
        assert text in page, text
    assert 'Waiting for you' not in page
    assert 'Skip to content' not in page
    # The page scripts' texts are in Korean too, in a data block that is never run.
    block = re.search(r'<script type="application/json" id="ask-user-live">(.*?)</script>', korean.text, re.S)
    assert block is not None
    texts = json.loads(block.group(1))
    assert texts['just_now'] == '방금'
    assert texts['notify_title'] == '답변을 기다리는 질문이 있습니다'
    assert '<html lang="en">' in english.text
    assert 'Waiting for you' in english.text


async def test_the_form_its_errors_and_the_confirmation_are_in_korean(
    web: WebAnswerer, client: httpx.AsyncClient
) -> None:
    async with asking(web, AskUserRequest(questions=(single(),), notes=True)) as job:
        form = await client.get(f'/requests/{job.request.id}', headers=KO)
        page = _text(form.text)
        for text in ('하나를 고르세요.', '기타', '보내기', '답하지 않기', '메모 (선택)'):
            assert text in page, text
        assert 'Submit' not in page
        refused = await client.post(
            f'/requests/{job.request.id}', data={'csrf': csrf_of(form.text), 'action': 'answer'}, headers=KO
        )
        assert refused.status_code == 422
        assert '선택지 중 하나를 고르세요.' in _text(refused.text)
        sent = await client.post(
            f'/requests/{job.request.id}', data={'csrf': csrf_of(form.text), 'action': 'answer', 'q0': '1'}, headers=KO
        )
        assert sent.status_code == 200
        assert '<html lang="ko">' in sent.text
        await job.response()


async def test_the_refusal_pages_are_in_korean(web: WebAnswerer) -> None:
    async with asgi_client(web) as client:
        not_signed_in = await client.get('/', headers=KO)
        assert not_signed_in.status_code == 401
        assert '로그인하지 않음' in _text(not_signed_in.text)
        link = '/' + web.app.login_path()
        await client.get(link)
        used = await client.get(link, headers=KO)
        assert '이 링크는 쓸 수 없습니다' in _text(used.text)
        assert '로그인 링크는 한 번만 쓸 수 있습니다.' in _text(used.text)
        await log_in(client, web)
        unknown = await client.get('/requests/nope', headers=KO)
        assert unknown.status_code == 404
        assert '없는 질문' in _text(unknown.text)


async def test_json_api_errors_stay_english_for_programs(web: WebAnswerer, client: httpx.AsyncClient) -> None:
    response = await client.get('/api/requests/nope', headers=KO)
    assert response.status_code == 404
    assert response.json()['message'].isascii()


def test_every_string_a_template_draws_is_listed_for_the_catalogs() -> None:
    marked = set(WEB) | {form for pair in WEB_PLURALS for form in pair}
    for template in Path(TEMPLATES_DIR).glob('*.html'):
        source = template.read_text()
        drawn = re.findall(r"(?<![\w])_\('((?:[^'\\]|\\.)*)'\)", source)
        drawn += [form for pair in re.findall(r"ngettext\('([^']*)', '([^']*)'", source) for form in pair]
        missing = set(drawn) - marked
        assert not missing, f'{template.name}: {missing}'
