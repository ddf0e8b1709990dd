"""Fixtures for the UI integrations: the real JavaScript clients from npm, the example apps under uvicorn, Chromium."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright
from ui_support import CHROMIUM, CHROMIUM_ARGS, HERE, Served, install_clients, serve


@pytest.fixture(scope='module')
def anyio_backend() -> str:
    return 'asyncio'


@pytest.fixture(scope='session')
def node_clients() -> Path:
    """The directory holding the installed clients and the drivers."""
    return install_clients()


@pytest.fixture(scope='module')
def ag_ui_app() -> Iterator[Served]:
    """`examples/ui/ag_ui_app.py` under uvicorn, in its own process."""
    yield from serve('ag_ui_app')


@pytest.fixture(scope='module')
def vercel_ai_app() -> Iterator[Served]:
    """`examples/ui/vercel_ai_app.py` under uvicorn, in its own process."""
    yield from serve('vercel_ai_app')


@pytest.fixture(scope='module')
def noted_app() -> Iterator[Served]:
    """`noted_app.py` (next to this file) under uvicorn: agents with notes and recommended options."""
    yield from serve('noted_app', HERE)


@pytest.fixture(scope='module')
def fixed_id_app() -> Iterator[Served]:
    """`fixed_id_app.py` (next to this file) under uvicorn: a model whose every tool call has the id `call_0`."""
    yield from serve('fixed_id_app', HERE)


@pytest.fixture(scope='module')
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        await chromium.close()
