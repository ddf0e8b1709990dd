"""`WebOptions`: one set of options for `WebAnswerer`, `create_app` and `AskUserApp`, and the older names that warn."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
from inline_snapshot import snapshot
from web_support import answer_body, asgi_client, ask_one, asking, bearer

from pydantic_ai_ask_user import web as web_module
from pydantic_ai_ask_user.hub import QuestionHub
from pydantic_ai_ask_user.limits import MAX_CUSTOM_ANSWER_LENGTH
from pydantic_ai_ask_user.web import (
    DEFAULT_MAX_CUSTOM_ANSWER_LENGTH,
    AskUserApp,
    WebAnswerer,
    WebOptions,
    create_app,
)

pytestmark = pytest.mark.anyio


def _answerer_app(options: WebOptions | None = None, /, **fields: Any) -> AskUserApp:
    return (WebAnswerer(**fields) if options is None else WebAnswerer(options=options, **fields)).app


def _created_app(options: WebOptions | None = None, /, **fields: Any) -> AskUserApp:
    return create_app(QuestionHub(), **fields) if options is None else create_app(QuestionHub(), options, **fields)


def _app(options: WebOptions | None = None, /, **fields: Any) -> AskUserApp:
    return (
        AskUserApp(QuestionHub(), **fields) if options is None else AskUserApp(QuestionHub(), options=options, **fields)
    )


def _options(**fields: Any) -> WebOptions:
    return WebOptions(**fields)


BUILDERS = [
    pytest.param(_answerer_app, id='WebAnswerer'),
    pytest.param(_created_app, id='create_app'),
    pytest.param(_app, id='AskUserApp'),
]
"""Each public way to build the app, as `(options=None, **fields) -> AskUserApp`."""


@pytest.mark.parametrize('build', BUILDERS)
def test_options_and_keyword_arguments_build_the_same_app(build: Callable[..., AskUserApp]) -> None:
    options = WebOptions(title='Deploys', allow_custom_answers=False, max_custom_answer_length=40, body_seconds=5)
    assert build(options).options == options
    assert build(title='Deploys', allow_custom_answers=False, max_custom_answer_length=40, body_seconds=5).options == (
        options
    )
    # Keywords apply over the options object.
    assert build(options, title='Releases').options == WebOptions(
        title='Releases', allow_custom_answers=False, max_custom_answer_length=40, body_seconds=5
    )
    assert build().options == WebOptions()


def test_the_default_custom_answer_limit_is_the_cores() -> None:
    assert DEFAULT_MAX_CUSTOM_ANSWER_LENGTH == MAX_CUSTOM_ANSWER_LENGTH
    assert WebOptions().max_custom_answer_length == MAX_CUSTOM_ANSWER_LENGTH


@pytest.mark.parametrize(
    ('fields', 'message'),
    [
        pytest.param(
            {'max_custom_answer_length': 0},
            snapshot('max_custom_answer_length must be at least 1 and at most 2000 (MAX_CUSTOM_ANSWER_LENGTH), not 0'),
            id='custom-answer-zero',
        ),
        pytest.param(
            {'max_custom_answer_length': MAX_CUSTOM_ANSWER_LENGTH + 1},
            snapshot(
                'max_custom_answer_length must be at least 1 and at most 2000 (MAX_CUSTOM_ANSWER_LENGTH), not 2001'
            ),
            id='custom-answer-over-the-core-limit',
        ),
        pytest.param(
            {'max_body_bytes': 1023}, snapshot('max_body_bytes must be at least 1024, not 1023'), id='body-too-small'
        ),
        pytest.param({'body_seconds': 0}, snapshot('body_seconds must be more than 0, not 0'), id='no-body-time'),
    ],
)
@pytest.mark.parametrize('build', [*BUILDERS, pytest.param(_options, id='WebOptions')])
def test_an_option_out_of_range_is_a_value_error_naming_it(
    build: Callable[..., Any], fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=f'^{next(iter(fields))} ') as raised:
        build(**fields)
    assert str(raised.value) == message


@pytest.mark.parametrize('build', BUILDERS)
def test_a_keyword_that_is_no_option_is_a_type_error_listing_the_options(build: Callable[..., AskUserApp]) -> None:
    with pytest.raises(TypeError) as raised:
        build(titel='Deploys')
    assert str(raised.value).split('() ', 1)[1] == snapshot(
        "got an unexpected keyword argument 'titel'; its options are authorize, access_token, login_links, "
        'answered_by, title, allow_custom_answers, max_custom_answer_length, max_body_bytes, body_seconds, receipt_key'
    )


@pytest.mark.parametrize('build', BUILDERS)
def test_the_old_and_the_new_name_together_are_a_type_error(build: Callable[..., AskUserApp]) -> None:
    only = 'pass max_custom_answer_length only'
    with pytest.warns(DeprecationWarning, match='max_custom_answer=...'), pytest.raises(TypeError, match=only):
        build(max_custom_answer=5, max_custom_answer_length=6)


def test_options_are_frozen() -> None:
    options = WebOptions()
    with pytest.raises(AttributeError):
        options.title = 'changed'  # type: ignore[misc]


@pytest.mark.parametrize(
    ('use', 'message'),
    [
        pytest.param(
            lambda: WebAnswerer(max_custom_answer=5).options.max_custom_answer_length,
            snapshot('WebAnswerer(max_custom_answer=...) is deprecated; use WebAnswerer(max_custom_answer_length=...)'),
            id='WebAnswerer-keyword',
        ),
        pytest.param(
            lambda: create_app(QuestionHub(), max_custom_answer=5).options.max_custom_answer_length,
            snapshot('create_app(max_custom_answer=...) is deprecated; use create_app(max_custom_answer_length=...)'),
            id='create_app-keyword',
        ),
        pytest.param(
            lambda: AskUserApp(QuestionHub(), max_custom_answer=5).options.max_custom_answer_length,
            snapshot('AskUserApp(max_custom_answer=...) is deprecated; use AskUserApp(max_custom_answer_length=...)'),
            id='AskUserApp-keyword',
        ),
        pytest.param(
            lambda: WebAnswerer(max_custom_answer_length=5).max_custom_answer,
            snapshot('WebAnswerer.max_custom_answer is deprecated; use WebAnswerer.options.max_custom_answer_length'),
            id='WebAnswerer-attribute',
        ),
        pytest.param(
            lambda: WebAnswerer(max_custom_answer_length=5).app.max_custom_answer,
            snapshot('AskUserApp.max_custom_answer is deprecated; use AskUserApp.max_custom_answer_length'),
            id='AskUserApp-attribute',
        ),
    ],
)
def test_the_old_custom_answer_names_still_work_and_warn(use: Callable[[], int], message: str) -> None:
    with warnings.catch_warnings(record=True) as recorded:
        warnings.simplefilter('always')
        assert use() == 5
    # Only the deprecations: an earlier test's leftovers collected meanwhile (a `ResourceWarning` for a transport
    # it left open, seen once under xdist) are not this call's.
    caught = [w for w in recorded if issubclass(w.category, DeprecationWarning)]
    assert [(w.category, str(w.message)) for w in caught] == [(DeprecationWarning, message)]
    # Each warning points at the caller's line, here, not at the library.
    assert all(w.filename == __file__ for w in caught)


def test_the_old_default_constant_still_imports_and_warns() -> None:
    with pytest.warns(DeprecationWarning, match='DEFAULT_MAX_CUSTOM_ANSWER') as caught:
        old = web_module.DEFAULT_MAX_CUSTOM_ANSWER  # pyright: ignore[reportAttributeAccessIssue]
    assert old == MAX_CUSTOM_ANSWER_LENGTH
    assert [str(w.message) for w in caught] == snapshot(
        [
            'pydantic_ai_ask_user.web.DEFAULT_MAX_CUSTOM_ANSWER is deprecated; use DEFAULT_MAX_CUSTOM_ANSWER_LENGTH',
        ]
    )
    with pytest.raises(AttributeError):
        web_module.NO_SUCH_NAME  # pyright: ignore[reportAttributeAccessIssue]  # noqa: B018


async def test_the_old_keyword_still_sets_the_limit_the_api_enforces() -> None:
    with pytest.warns(DeprecationWarning, match='max_custom_answer_length'):
        web = WebAnswerer(max_custom_answer=10)
    async with asking(web, ask_one()) as job, asgi_client(web) as client:
        path = f'/api/requests/{job.request.id}/answer'
        refused = await client.post(path, json=answer_body(custom='x' * 11), headers=bearer(web))
        assert refused.status_code == 422
        assert refused.json()['message'] == snapshot(
            "the custom answer to 'Database' is 11 characters long; the most allowed is 10"
        )
        taken = await client.post(path, json=answer_body(custom='x' * 10), headers=bearer(web))
        assert taken.status_code == 200
        assert (await job.response()).answers[0].custom_answer == 'x' * 10
