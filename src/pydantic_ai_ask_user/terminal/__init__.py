"""Ask in the terminal: an inline menu that keeps what the model wrote above it in view.

Needs the `terminal` extra: `pip install 'pydantic-ai-ask-user[terminal]'`.
"""

from .. import _module_names
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


__getattr__ = _module_names.renamed_names(
    __name__,
    {
        'DEFAULT_MAX_CUSTOM_LENGTH': (
            DEFAULT_MAX_CUSTOM_ANSWER_LENGTH,
            _menu.warn_renamed,
            ('DEFAULT_MAX_CUSTOM_LENGTH', __name__),
        )
    },
)
"""The deprecated `DEFAULT_MAX_CUSTOM_LENGTH`, with a warning naming its new spelling (PEP 562)."""
