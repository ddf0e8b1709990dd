"""`AskUserPlugin`: this package passed through Temporal's workflow sandbox, beside what Pydantic AI's plugin passes.

Every Temporal test's worker runs with it (`temporal_support.patient_worker`), and the docs' worker does too
(`test_temporal_inbox.py` runs it as copied): those runs are what show the workflows work with it.
"""

from __future__ import annotations

from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from temporalio.worker import UnsandboxedWorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from pydantic_ai_ask_user.temporal import PASSTHROUGH_MODULES, AskUserPlugin, passing_ask_user_through


def test_the_plugin_adds_the_package_to_the_sandbox_s_passthrough_after_or_before_pydantic_ai_s() -> None:
    own = SandboxRestrictions.default.with_passthrough_modules('my_app.models')
    for plugins in ([PydanticAIPlugin(), AskUserPlugin()], [AskUserPlugin(), PydanticAIPlugin()]):
        config: dict[str, object] = {'workflow_runner': SandboxedWorkflowRunner(restrictions=own)}
        for plugin in plugins:
            config = dict(plugin.configure_worker(config))  # pyright: ignore[reportArgumentType]
        runner = config['workflow_runner']
        assert isinstance(runner, SandboxedWorkflowRunner)
        passed = runner.restrictions.passthrough_modules
        assert passed >= {*PASSTHROUGH_MODULES, 'pydantic_ai', 'pydantic', 'my_app.models'}
        assert passed >= SandboxRestrictions.default.passthrough_modules  # nothing of the defaults dropped


def test_a_runner_that_is_no_sandbox_is_left_as_it_is_and_none_is_the_default_sandbox() -> None:
    unsandboxed = UnsandboxedWorkflowRunner()
    assert passing_ask_user_through(unsandboxed) is unsandboxed
    runner = passing_ask_user_through(None)
    assert isinstance(runner, SandboxedWorkflowRunner)
    assert (
        runner.restrictions.passthrough_modules
        == SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH_MODULES).passthrough_modules
    )
