"""Helpers of the MCP tests: free ports, waiting for a server, the test servers' command line."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import waits
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

HERE = Path(__file__).parent
SERVERS = HERE / 'mcp_servers.py'


def wait_for_port(port: int, process: subprocess.Popen[Any]) -> None:
    """Return once something listens on `port`; fail if `process` (the server) exits first."""

    def listening() -> bool:
        if process.poll() is not None:
            raise AssertionError(f'the server exited with {process.returncode} before listening on {port}')
        try:
            with socket.create_connection(('127.0.0.1', port), timeout=1):
                return True
        except OSError:
            return False

    waits.wait_for(listening, f'something to listen on port {port}')


def stop(process: subprocess.Popen[Any]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=waits.WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def server_command(*args: str) -> list[str]:
    """The test servers' command line."""
    return [sys.executable, str(SERVERS), *args]


def http_client(url: str, token: str | None, *, mode: str = 'legacy', headers: dict[str, str] | None = None) -> Client:
    """The Python MCP client over streamable HTTP, sending `Authorization: Bearer <token>` and any other `headers`."""
    sent = {**({'authorization': f'Bearer {token}'} if token is not None else {}), **(headers or {})}
    return Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=sent)), mode=mode)
