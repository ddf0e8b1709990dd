"""What the Prefect tests share: the environment of a Prefect process with a home of its own."""

from __future__ import annotations

import os
from pathlib import Path


def prefect_server_env(home: Path) -> dict[str, str]:
    """The environment of a Prefect process with its own home: no analytics, no telemetry, no UI, no profile of yours."""
    return {
        **os.environ,
        'PREFECT_HOME': str(home),
        'PREFECT_PROFILES_PATH': str(home / 'profiles.toml'),
        'PREFECT_SERVER_ANALYTICS_ENABLED': 'false',
        'PREFECT_SERVER_UI_ENABLED': 'false',
        'PREFECT_CLOUD_ENABLE_ORCHESTRATION_TELEMETRY': 'false',
        'PREFECT_LOGGING_LEVEL': 'WARNING',
    }
