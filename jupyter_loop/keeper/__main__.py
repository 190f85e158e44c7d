"""``python -m jupyter_loop.keeper KERNEL_DIR -- KERNEL_COMMAND...`` (see ``process``)."""

import sys

from .process import main

sys.exit(main(sys.argv[1:]))
