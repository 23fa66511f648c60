"""``python -m ctxeval``: the same as the ``ctxeval`` command."""

import sys

from .cli import main

sys.exit(main())
