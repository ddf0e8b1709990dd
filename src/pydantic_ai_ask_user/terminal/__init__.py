"""Ask in the terminal: an inline menu that keeps what the model wrote above it in view.

Needs the `terminal` extra: `pip install 'pydantic-ai-ask-user[terminal]'`.
"""

from ._answerer import TerminalAnswerer, open_cli_answerer
from ._menu import CUSTOM_ROW_LABEL, DEFAULT_MAX_CUSTOM_LENGTH, Menu
from ._render import cell_width, wrap

__all__ = (
    'TerminalAnswerer',
    'open_cli_answerer',
    'Menu',
    'DEFAULT_MAX_CUSTOM_LENGTH',
    'CUSTOM_ROW_LABEL',
    'cell_width',
    'wrap',
)
