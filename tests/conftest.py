from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile('default', max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile('long', max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'default'))


@pytest.fixture
def anyio_backend() -> str:
    return 'asyncio'
