"""Tools for testing agents and answerers, shipped like Starlette ships its `TestClient`.

- `ScriptedAnswerer` answers from a script, so a test can run an agent that asks without a person.
- The conformance kit (`CONFORMANCE_SCENARIOS`, `run_conformance`) checks that an answerer behaves
  as every answerer must, driven through its own front end by a driver you write.
- `PersonaAnswerer` is a simulated user: a model playing a persona answers, for evaluations.
- `asking_model` is a model that asks valid questions, then replies with what the tool returned:
  what to use instead of `TestModel`, whose generated arguments the question schema refuses.
"""

from ._conformance import CONFORMANCE_SCENARIOS, ConformanceScenario, Driver, run_conformance
from ._model import DEFAULT_QUESTION, asking_model
from ._persona import PersonaAnswerer
from ._scripted import DECLINE, Custom, Reply, ScriptedAnswerer, WithNote

__all__ = (
    'ScriptedAnswerer',
    'PersonaAnswerer',
    'Custom',
    'WithNote',
    'DECLINE',
    'Reply',
    'Driver',
    'ConformanceScenario',
    'CONFORMANCE_SCENARIOS',
    'run_conformance',
    'asking_model',
    'DEFAULT_QUESTION',
)
