"""Fixtures for the Temporal tests: a private Temporal dev server, one per session and worker, or one of a test's own."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from temporal_server import TemporalServer, start_temporal_server
from temporal_testing import client, start_worker, worker  # noqa: F401  (the Temporal tests' fixtures)


@pytest.fixture(scope='session')
def temporal_address() -> Iterator[str]:
    """`host:port` of a Temporal dev server on free ports with a private database, for this session only."""
    server = start_temporal_server()
    try:
        yield server.address
    finally:
        server.stop()
        shutil.rmtree(server.root, ignore_errors=True)


@pytest.fixture(params=[True], ids=['indexed'])
def temporal_server(request: pytest.FixtureRequest) -> Iterator[TemporalServer]:
    """A dev server of this test's own, which the test may stop and start again (on the same port and file).

    Parametrize it indirectly with `False` for a namespace without the search attribute `AskUserQuestions`.
    """
    server = start_temporal_server(index=request.param)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.root, ignore_errors=True)
