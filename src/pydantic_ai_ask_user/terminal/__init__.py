"""Ask in the terminal: an inline menu that keeps what the model wrote above it in view.

Needs the `terminal` extra: `pip install 'pydantic-ai-ask-user[terminal]'`.
"""

from typing import Any

from . import _menu
from ._answerer import TerminalAnswerer
from ._menu import CUSTOM_ROW_LABEL, DEFAULT_MAX_CUSTOM_ANSWER_LENGTH, Menu
from ._render import cell_width, wrap

__all__ = (
    'TerminalAnswerer',
    'Menu',
    'DEFAULT_MAX_CUSTOM_ANSWER_LENGTH',
    'CUSTOM_ROW_LABEL',
    'cell_width',
    'wrap',
)


def __getattr__(name: str) -> Any:
    """The deprecated `DEFAULT_MAX_CUSTOM_LENGTH`, with a warning naming its new spelling (PEP 562)."""
    if name == 'DEFAULT_MAX_CUSTOM_LENGTH':
        _menu.warn_renamed(name, __name__)
        return DEFAULT_MAX_CUSTOM_ANSWER_LENGTH
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
