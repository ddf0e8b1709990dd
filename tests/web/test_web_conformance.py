"""The core's answerer conformance scenarios, passed by `WebAnswerer` through its JSON API and through its pages."""

from __future__ import annotations

import anyio
import httpx
import pytest
from playwright.async_api import expect
from web_support import WAIT, Tab, bearer, wait_pending

from pydantic_ai_ask_user import AskUserRequest, AskUserResponse
from pydantic_ai_ask_user.testing import CONFORMANCE_SCENARIOS, ConformanceScenario, Driver, run_conformance
from pydantic_ai_ask_user.web import WebAnswerer

pytestmark = pytest.mark.anyio


def http_driver(client: httpx.AsyncClient) -> Driver:
    async def drive(request: AskUserRequest, response: AskUserResponse | None) -> None:
        with anyio.fail_after(WAIT):
            while True:
                listed = (await client.get('/api/requests')).json()['requests']
                if any(item['id'] == request.id for item in listed):
                    break
                await anyio.sleep(0.01)
        if response is None:
            return
        if response.cancelled:
            reply = await client.post(f'/api/requests/{request.id}/decline')
        else:
            body = {
                'answers': [
                    {
                        'header': a.header,
                        **(
                            {'custom_answer': a.custom_answer}
                            if a.custom_answer is not None
                            else {'selected': list(a.selected)}
                        ),
                        **({'note': a.note} if a.note is not None else {}),
                    }
                    for a in response.answers
                ]
            }
            reply = await client.post(f'/api/requests/{request.id}/answer', json=body)
        assert reply.status_code == 200, reply.text

    return drive


@pytest.mark.parametrize('scenario', CONFORMANCE_SCENARIOS, ids=lambda s: s.name)
async def test_web_answerer_conforms_through_the_json_api(
    scenario: ConformanceScenario, web: WebAnswerer, live: str
) -> None:
    async with httpx.AsyncClient(base_url=live, headers=bearer(web)) as client:
        await run_conformance(scenario, web, http_driver(client))
    assert len(web.hub) == 0


def browser_driver(tab: Tab, web: WebAnswerer, live: str) -> Driver:
    page = tab.page
    signed_in: list[bool] = []

    async def drive(request: AskUserRequest, response: AskUserResponse | None) -> None:
        await wait_pending(web.hub, request.id)
        if signed_in:
            await page.goto(f'{live}requests/{request.id}')
        else:
            await page.goto(web.login_url(live, request.id))
            signed_in.append(True)
        await expect(page.locator('#answer-form')).to_be_visible()
        if response is None:
            return
        if response.cancelled:
            await page.get_by_role('button', name='Decline to answer').click()
        else:
            for answer in response.answers:
                index = next(i for i, q in enumerate(request.questions) if q.header == answer.header)
                fieldset = page.locator(f'#q{index}')
                if answer.custom_answer is not None:
                    await fieldset.locator(f'#q{index}-custom').fill(answer.custom_answer)
                for label in answer.selected:
                    await fieldset.get_by_label(label, exact=True).check()
                if answer.note is not None:
                    await fieldset.locator(f'#q{index}-note').fill(answer.note)
            await page.get_by_role('button', name='Submit').click()
        await expect(page.locator('#confirmation')).to_be_visible()

    return drive


@pytest.mark.browser
@pytest.mark.parametrize('scenario', CONFORMANCE_SCENARIOS, ids=lambda s: s.name)
async def test_web_answerer_conforms_through_the_pages_in_chromium(
    scenario: ConformanceScenario, tab: Tab, web: WebAnswerer, live: str
) -> None:
    await run_conformance(scenario, web, browser_driver(tab, web, live))
    assert len(web.hub) == 0
    assert tab.dialogs == []
    assert tab.errors == []
