"""`AskUserPlugin`: a Temporal plugin passing this package through the workflow sandbox, as Pydantic AI's passes its.

Temporal's sandbox runs each workflow run in a fresh copy of every module it imports that is not passed through:
without this, `pydantic_ai_ask_user` (and OpenTelemetry, which it imports) was imported again, module by module, for
every run a worker started and every workflow it validated, the larger part of a worker's CPU in the tests.

Passed through, the worker's one copy serves every run. That is safe because what of this package runs in workflow
code keeps no state of a run at module level (a run's notes are `ContextVar`s, its waits live on the workflow
instance), reads the clock only as the workflow's (`workflow.time()`, `workflow.now()`, `workflow.uuid4()`), and its
module-level caches hold only values computed from their arguments (validators, translations). The sandbox still
checks the workflow's own code.

The modules are passed through by name (`SandboxRestrictions.with_passthrough_modules`), not by importing them inside
`workflow.unsafe.imports_passed_through()`: that passes through only the modules imported in the block, and a module
of this package that workflow code imports later (a function-level import) would then be imported afresh, at run
time, where the sandbox refuses what OpenTelemetry does on import (reading `os.environ`), failing the workflow task
on every retry.
"""

from __future__ import annotations

from dataclasses import replace

from temporalio.plugin import SimplePlugin
from temporalio.worker import WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

__all__ = ('AskUserPlugin', 'PASSTHROUGH_MODULES', 'passing_ask_user_through')

PASSTHROUGH_MODULES = ('pydantic_ai_ask_user',)
"""The modules `AskUserPlugin` passes through Temporal's workflow sandbox, with their submodules. What this package
imports is passed through already (Pydantic AI's plugin and Temporal's defaults), or imported by it once, outside the
sandbox, at its own import."""


def passing_ask_user_through(runner: WorkflowRunner | None) -> WorkflowRunner:
    """`runner` with `PASSTHROUGH_MODULES` passed through, when it is a `SandboxedWorkflowRunner`; as it is if not.

    For a worker configured by hand: `Worker(..., workflow_runner=passing_ask_user_through(SandboxedWorkflowRunner()))`.
    """
    if runner is None:
        runner = SandboxedWorkflowRunner()
    if not isinstance(runner, SandboxedWorkflowRunner):
        return runner
    return replace(runner, restrictions=runner.restrictions.with_passthrough_modules(*PASSTHROUGH_MODULES))


class AskUserPlugin(SimplePlugin):
    """Temporal plugin that passes `pydantic_ai_ask_user` through the workflow sandbox (`PASSTHROUGH_MODULES`).

    Beside Pydantic AI's, on the client the worker is made from, or on the worker:
    `Client.connect(address, plugins=[PydanticAIPlugin(), AskUserPlugin()])`. Without it the workflows run the
    same, and each run imports this package again inside the sandbox.
    """

    def __init__(self) -> None:
        super().__init__('AskUserPlugin', workflow_runner=passing_ask_user_through)  # pyright: ignore[reportUnknownMemberType]
