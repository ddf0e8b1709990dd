from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile('default', max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile('long', max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))
# `make test-floor` runs the same properties against the lowest dependency versions, right after `make test` ran
# them with 300 examples each on the same code: it checks the floor versions behave alike, not a new search.
settings.register_profile('floor', max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'default'))


@pytest.fixture
def anyio_backend() -> str:
    return 'asyncio'
