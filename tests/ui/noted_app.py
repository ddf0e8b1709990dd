"""An app serving agents with `AskUser(notes=True, recommended_options=True)` over AG-UI and the Vercel AI data stream.

For the real JavaScript clients (`agui_client.mjs`, `vercel_client.mjs`): `/agent` and `/chat` defer the
question to the client; `/agent-live` and `/chat-live` answer it in the server (with a note) within a
timeout, so the page sees the requested event with `notes` and `deadline`.
"""

from __future__ import annotations

from pydantic_ai import Agent, DeferredToolRequests
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from pydantic_ai_ask_user import AskUser
from pydantic_ai_ask_user.testing import ScriptedAnswerer, WithNote, asking_model
from pydantic_ai_ask_user.ui.ag_ui import AskUserAGUIAdapter
from pydantic_ai_ask_user.ui.vercel_ai import AskUserVercelAIAdapter

QUESTION = {
    'header': 'Region',
    'question': 'Where should I deploy the service?',
    'options': [{'label': 'EU', 'description': 'Frankfurt'}, {'label': 'US', 'description': 'Virginia'}],
    'recommended': 'EU',
}

deferred = Agent(
    asking_model(QUESTION),
    capabilities=[AskUser(answerer=None, notes=True, recommended_options=True)],
    output_type=[str, DeferredToolRequests],
)
live = Agent(
    asking_model(QUESTION),
    capabilities=[
        AskUser(
            answerer=ScriptedAnswerer(default=WithNote('US', 'after the freeze')),
            notes=True,
            recommended_options=True,
            timeout=600,
        )
    ],
)


async def ag_ui(request: Request) -> Response:
    return await AskUserAGUIAdapter.dispatch_request(request, agent=deferred)


async def ag_ui_live(request: Request) -> Response:
    return await AskUserAGUIAdapter.dispatch_request(request, agent=live)


async def vercel(request: Request) -> Response:
    return await AskUserVercelAIAdapter.dispatch_request(request, agent=deferred, sdk_version=6)


async def vercel_live(request: Request) -> Response:
    return await AskUserVercelAIAdapter.dispatch_request(request, agent=live, sdk_version=6)


async def home(request: Request) -> Response:
    return PlainTextResponse('ok')


app = Starlette(
    routes=[
        Route('/', home),
        Route('/agent', ag_ui, methods=['POST']),
        Route('/agent-live', ag_ui_live, methods=['POST']),
        Route('/chat', vercel, methods=['POST']),
        Route('/chat-live', vercel_live, methods=['POST']),
    ]
)
