"""`python -m pydantic_ai_ask_user._cli`: the `ask-user` command."""

import sys

from . import main

sys.exit(main())
