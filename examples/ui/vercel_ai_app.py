"""An agent that asks, served over the Vercel AI data stream, with a tiny page that answers.

Run `uvicorn vercel_ai_app:app --app-dir examples/ui`, open
http://127.0.0.1:8000/ and answer the question. The model is `asking_model` (it asks one question,
then says what it got back), so this runs without an API key; set `ASK_USER_EXAMPLE_MODEL`
(for example `openai:gpt-5.2`) to use a real one.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic_ai import Agent, DeferredToolRequests
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from pydantic_ai_ask_user import AskUser
from pydantic_ai_ask_user.testing import asking_model
from pydantic_ai_ask_user.ui import BodyLimit
from pydantic_ai_ask_user.ui.vercel_ai import AskUserVercelAIAdapter

HERE = Path(__file__).parent
QUESTION = {
    'header': 'Region',
    'question': 'Where should I deploy the service?',
    'options': [{'label': 'EU', 'description': 'Frankfurt'}, {'label': 'US', 'description': 'Virginia'}],
}

# `answerer=None`: the run ends on the question, and the page's answer comes back on the next request.
agent = Agent(
    os.environ.get('ASK_USER_EXAMPLE_MODEL') or asking_model(QUESTION),
    capabilities=[AskUser(answerer=None)],
    output_type=[str, DeferredToolRequests],
)


async def run(request: Request) -> Response:
    return await AskUserVercelAIAdapter.dispatch_request(request, agent=agent, sdk_version=6)


async def page(request: Request) -> Response:
    return FileResponse(HERE / 'vercel_ai.html')


async def form_js(request: Request) -> Response:
    return FileResponse(HERE / 'form.js', media_type='text/javascript')


# BodyLimit: a body over 1 MiB gets 413 (chunked ones too, counted as they arrive), one slower than 30 s 408.
app = Starlette(
    routes=[Route('/', page), Route('/form.js', form_js), Route('/chat', run, methods=['POST'])],
    middleware=[Middleware(BodyLimit)],
)
