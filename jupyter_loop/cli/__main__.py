"""``python -m jupyter_loop.cli``: the same as ``jupyter loop``."""

import sys

from .main import main

sys.exit(main())
