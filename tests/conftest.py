from __future__ import annotations

import inspect
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile('default', max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile('long', max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'default'))


@pytest.fixture
def anyio_backend() -> str:
    return 'asyncio'


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Every `async def` test runs on anyio's asyncio backend without a marker on each.
    for item in items:
        if isinstance(item, pytest.Function) and inspect.iscoroutinefunction(item.obj):
            item.add_marker(pytest.mark.anyio)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Module | pytest.Class, name: str, obj: object) -> None:
    # Mark before anyio's own hook parametrizes the function: a parametrized `async def` test marked only
    # in `pytest_collection_modifyitems` loses its parameters ("'SubRequest' object has no attribute 'param'").
    if inspect.iscoroutinefunction(obj) and collector.istestfunction(obj, name):
        marks = getattr(obj, 'pytestmark', [])
        if not any(mark.name == 'anyio' for mark in marks):
            pytest.mark.anyio(obj)
