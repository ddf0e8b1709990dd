"""A Temporal worker process for the kill -9 tests: `python temporal_worker.py ADDRESS TASK_QUEUE`.

Prints `ready` once it polls, then runs until it is killed.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta

from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from temporal_support import ALL_WORKFLOWS, patient_worker, warm_worker_start
from temporalio.client import Client

# Done once in the fork server that imports this module; in a worker forked from it, found done (inherited).
warm_worker_start()


async def main(address: str, queue: str) -> None:
    client = await Client.connect(address, plugins=[PydanticAIPlugin()])
    # A killed worker's sticky queue is given up after 1 s, not 10, so the next worker takes the workflow at once.
    async with patient_worker(
        client,
        task_queue=queue,
        workflows=list(ALL_WORKFLOWS),
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=1),
    ):
        print('ready', flush=True)
        await asyncio.Event().wait()


if __name__ == '__main__':
    asyncio.run(main(sys.argv[1], sys.argv[2]))
