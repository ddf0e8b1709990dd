"""A team inbox: two people, three agents; each person sees and decides only their own questions and approvals.

Run it with `uvicorn app:api --app-dir examples/team_inbox`, open http://127.0.0.1:8000/, sign in as
`alice` or `bob` (passwords below, or set `TEAM_INBOX_USERS`), start a run of an agent, and answer
its question, or approve its refund, in the inbox at `/inbox/`. The other person never sees it: their
inbox leaves it out, and its address is a 404 for them. `ask-user pending --db URL --for alice` lists
it in a terminal, and `ask-user answer --db URL ID` answers it (`--approve`, `--deny REASON` or
`--args JSON` for an approval) from there.

The runs are DBOS workflows and the questions wait in the database (`DBOSAnswerer`), so a question
outlives the server: stop it while a question waits, start it again, and the run goes on waiting
for the same answer. The models are scripted (they ask one question, or call the tool that needs approval,
then say what they got), so this runs without an API key; set `TEAM_INBOX_MODEL` (for example
`openai:gpt-5.2`) to use a real one.

Settings, from the environment:

- `TEAM_INBOX_DB`: the database (default `sqlite:///team-inbox.sqlite`, or a `postgresql://` URL);
- `TEAM_INBOX_USERS`: `name:password,name:password` (default `alice:alice-pw,bob:bob-pw`; a demo: use your own sign-in).
  A name is any one line of text an audience may name (`José`, `김민준`), compared exactly, as audiences are;
- `TEAM_INBOX_SECRET`: the key that signs the sign-in cookie (default: a new one at every start).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import os
import secrets
import uuid
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any

from dbos import DBOS, SetWorkflowID, WorkflowHandleAsync
from fastapi import FastAPI, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import HandleDeferredToolCalls
from pydantic_ai.durable_exec.dbos import DBOSDurability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pydantic_ai_ask_user import AskUser, Person, QuestionContext
from pydantic_ai_ask_user.dbos import (
    DBOSAnswerer,
    DBOSExternalEvents,
    DBOSQuestionStore,
    ask_through_store,
    dbos_config,
)
from pydantic_ai_ask_user.testing import asking_model
from pydantic_ai_ask_user.ui import BodyLimit
from pydantic_ai_ask_user.web import create_app

DATABASE = os.environ.get('TEAM_INBOX_DB', 'sqlite:///team-inbox.sqlite')
USERS = dict(
    entry.split(':', 1) for entry in os.environ.get('TEAM_INBOX_USERS', 'alice:alice-pw,bob:bob-pw').split(',')
)
for _name in USERS:
    try:
        Person(_name)  # a name the inbox can address questions to, and compare as it compares audiences
    except ValueError as _error:
        raise SystemExit(f'TEAM_INBOX_USERS: {_error}') from None
SECRET = os.environ.get('TEAM_INBOX_SECRET', secrets.token_hex(32)).encode()
COOKIE = 'team_inbox_user'
CSRF_COOKIE = 'team_inbox_csrf'
MODEL = os.environ.get('TEAM_INBOX_MODEL')


@dataclass
class Customer:
    """Who a run works for: the signed-in person who started it, and what it is about."""

    user: str
    order: int


def for_the_customer(ctx: RunContext[Customer]) -> str:
    return ctx.deps.user  # only the person the run works for may answer its questions


REFUND = {
    'header': 'Refund',
    'question': 'The order was paid twice. Refund the second payment?',
    'options': [{'label': 'Refund', 'description': 'to the card it came from'}, {'label': 'Keep as credit'}],
}
DELIVERY = {
    'header': 'Delivery',
    'question': 'The parcel is late. What should we do?',
    'options': [{'label': 'Send again'}, {'label': 'Wait two more days'}],
}


def asking_agent(
    name: str, question: dict[str, Any], context: Callable[[RunContext[Customer]], QuestionContext]
) -> Agent[Customer, str]:
    """An agent that asks `question` (scripted, unless `TEAM_INBOX_MODEL` names a model) of the customer only."""
    return Agent(
        MODEL or asking_model(question),
        name=name,
        deps_type=Customer,
        capabilities=[
            DBOSDurability(),
            AskUser(answerer=DBOSAnswerer(DATABASE), audience=for_the_customer, context=context),
        ],
    )


support_agent = asking_agent(
    'billing-bot',
    REFUND,
    lambda ctx: QuestionContext(
        title=f'Refund for order {ctx.deps.order}',
        summary=f'Order `{ctx.deps.order}` was paid **twice** on the same card.',
        link=f'https://shop.example/orders/{ctx.deps.order}',
    ),
)
delivery_agent = asking_agent(
    'delivery-bot', DELIVERY, lambda ctx: QuestionContext(title=f'Late parcel, order {ctx.deps.order}')
)


def refund_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Scripted: asks to refund the order the prompt names, then says what the tool (or the person) said."""
    returns = [part.content for message in messages for part in message.parts if isinstance(part, ToolReturnPart)]
    if returns:
        return ModelResponse(parts=[TextPart(str(returns[0]))])
    prompt = next(part.content for message in messages for part in message.parts if isinstance(part, UserPromptPart))
    order = int(str(prompt).split()[1])
    return ModelResponse(parts=[ToolCallPart('refund', {'order': order, 'amount': 49.9})])


# The refund needs the customer's approval: `HandleDeferredToolCalls` hands it to `ask_through_store`, which puts
# it in the same store as the questions, addressed and in context like them; the run waits for it in the database.
# `DBOSExternalEvents` comes before it: it notes the calls the wait decides, so a decision is checked against them.
# On Pydantic AI 2.68-2.77 write `RequestInput(ask)` instead, or `waiting_handler(ask)` from
# `pydantic_ai_ask_user.deferred`, which builds whichever the installed version has.
returns_agent = Agent(
    MODEL or FunctionModel(refund_model),
    name='returns-bot',
    deps_type=Customer,
    capabilities=[
        DBOSDurability(),
        DBOSExternalEvents(database_url=DATABASE),
        HandleDeferredToolCalls(
            ask_through_store(
                DATABASE,
                audience=for_the_customer,
                context=lambda ctx: QuestionContext(
                    title=f'Refund of order {ctx.deps.order}', summary='The parcel came back **unopened**.'
                ),
            )
        ),
    ],
)


@returns_agent.tool_plain(requires_approval=True)
def refund(order: int, amount: float) -> str:
    """Refund `amount` for `order` to the card it was paid with."""
    return f'Refunded {amount:.2f} for order {order}.'


@DBOS.workflow(name='billing')
async def billing(user: str, order: int) -> str:
    return (await support_agent.run(f'Order {order} was paid twice.', deps=Customer(user, order))).output


@DBOS.workflow(name='delivery')
async def delivery(user: str, order: int) -> str:
    return (await delivery_agent.run(f'Order {order} is late.', deps=Customer(user, order))).output


@DBOS.workflow(name='returns')
async def returns(user: str, order: int) -> str:
    return (await returns_agent.run(f'Order {order} came back.', deps=Customer(user, order))).output


WORKFLOWS = {'billing': billing, 'delivery': delivery, 'returns': returns}


def _signature(user: str) -> str:
    return hmac.new(SECRET, user.encode(), hashlib.sha256).hexdigest()


def _cookie_value(user: str) -> str:
    """The sign-in cookie for `user`: the name in base64 (a cookie holds no `é` or `김`), then its signature."""
    return f'{base64.urlsafe_b64encode(user.encode()).decode()}.{_signature(user)}'


def signed_in_user(request: Request) -> str | None:
    """The user the sign-in cookie names, when its signature is ours; `None` otherwise."""
    encoded, _, signature = request.cookies.get(COOKIE, '').partition('.')
    try:
        user = base64.urlsafe_b64decode(encoded.encode('ascii')).decode()
    except (ValueError, UnicodeError):
        return None
    if user in USERS and hmac.compare_digest(signature, _signature(user)):
        return user
    return None


def _sign_in_token(cookie: str) -> str:
    """The token the sign-in form carries for a browser whose sign-in CSRF cookie is `cookie`."""
    return hmac.new(SECRET, f'sign-in:{cookie}'.encode(), hashlib.sha256).hexdigest()


def authorize(request: Request) -> Person | bool:
    """The inbox's `authorize` hook: the signed-in person (who sees their own questions), or no access."""
    user = signed_in_user(request)
    return False if user is None else Person(user)


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncGenerator[None]:
    # Bump application_version when the workflows' code changes: DBOS recovers a run only on its own version.
    DBOS(config=dbos_config(DATABASE, name='team-inbox', application_version='2026-12'))
    DBOS.launch()  # also recovers the runs a previous start left waiting
    try:
        yield
    finally:
        store.close()
        DBOS.destroy()


store = DBOSQuestionStore(DATABASE)
inbox = create_app(store, authorize=authorize, title='Team inbox')
api = FastAPI(lifespan=lifespan)
api.add_middleware(BodyLimit, max_bytes=64 * 1024)
api.mount('/inbox', inbox)  # the inbox at /inbox/, each question at /inbox/requests/<id>, its API at /inbox/api/...


def _page(body: str) -> HTMLResponse:
    return HTMLResponse(f'<!doctype html><meta charset="utf-8"><title>Team inbox</title>{body}')


@api.get('/')
async def home(request: Request) -> HTMLResponse:
    user = signed_in_user(request)
    if user is None:
        # Login CSRF: the form carries a token only this browser's page can read, so another site's form cannot
        # sign the browser in as the attacker.
        cookie = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(24)
        page = _page(
            '<h1>Sign in</h1><form method="post" action="/signin">'
            f'<input type="hidden" name="csrf" value="{_sign_in_token(cookie)}">'
            '<label>Name <input name="user" autocomplete="username"></label> '
            '<label>Password <input name="password" type="password" autocomplete="current-password"></label> '
            '<button>Sign in</button></form>'
        )
        page.set_cookie(CSRF_COOKIE, cookie, httponly=True, samesite='strict')
        return page
    starts = ''.join(
        f'<form method="post" action="/runs/{name}"><label>Order <input name="order" value="1042"></label> '
        f'<button>Start {name}</button></form>'
        for name in WORKFLOWS
    )
    return _page(f'<h1>Hello {html.escape(user)}</h1>{starts}<p><a href="/inbox/">Your questions</a></p>')


@api.post('/signin')
async def sign_in(
    request: Request, user: Annotated[str, Form()], password: Annotated[str, Form()], csrf: Annotated[str, Form()] = ''
) -> RedirectResponse:
    cookie = request.cookies.get(CSRF_COOKIE, '')
    if not cookie or not hmac.compare_digest(csrf.encode(), _sign_in_token(cookie).encode()):
        raise HTTPException(403, 'this sign-in form was not sent by this site; reload it and sign in again')
    expected = USERS.get(user)  # exactly the name, as an audience names it
    if expected is None or not hmac.compare_digest(password.encode(), expected.encode()):
        raise HTTPException(403, 'wrong name or password')
    response = RedirectResponse('/', status_code=303)
    response.set_cookie(COOKIE, _cookie_value(user), httponly=True, samesite='lax')
    return response


@api.post('/runs/{name}')
async def start_run(request: Request, name: str, order: Annotated[int, Form()]) -> dict[str, str]:
    user = signed_in_user(request)
    if user is None:
        raise HTTPException(401, 'sign in first')
    workflow = WORKFLOWS.get(name)
    if workflow is None:
        raise HTTPException(404, 'no such agent')
    run_id = f'{name}:{user}:{uuid.uuid4().hex}'  # a user's name may hold ':', the agent's and the hex do not
    with SetWorkflowID(run_id):
        await DBOS.start_workflow_async(workflow, user, order)
    return {'run_id': run_id, 'inbox': '/inbox/'}


@api.get('/runs/{run_id}')
async def run_status(request: Request, run_id: str) -> dict[str, Any]:
    user = signed_in_user(request)
    agent, _, rest = run_id.partition(':')
    owner, _, _ = rest.rpartition(':')
    if user is None or agent not in WORKFLOWS or owner != user:
        raise HTTPException(404, 'no such run')  # someone else's run is as missing as one that never was
    status = await DBOS.get_workflow_status_async(run_id)
    if status is None:
        raise HTTPException(404, 'no such run')
    output: str | None = None
    if status.status == 'SUCCESS':
        handle: WorkflowHandleAsync[str] = await DBOS.retrieve_workflow_async(run_id)
        output = await handle.get_result()
    return {'status': status.status, 'output': output}
