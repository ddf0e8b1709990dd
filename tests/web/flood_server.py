"""A `WebAnswerer` served by `serve()`, asking one question: what the flood tests attack, in its own process.

Prints one JSON line with the base URL, the access token and the request id once it serves, then one
with the answer (each header's picked labels) once a person gave it, and exits.
"""

from __future__ import annotations

import json

import anyio
from web_support import ask_one

from pydantic_ai_ask_user.web import WebAnswerer, serve


async def main() -> None:
    web = WebAnswerer()
    request = ask_one()
    async with serve(web.app) as base:
        print(json.dumps({'base': base, 'token': web.access_token, 'id': request.id}), flush=True)
        response = await web(request)
        print(json.dumps({answer.header: list(answer.selected) for answer in response.answers}), flush=True)


anyio.run(main)
