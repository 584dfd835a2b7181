"""``python -m subagents.cli``: the ``subagents`` command."""

import sys

from subagents.cli import main

sys.exit(main())
