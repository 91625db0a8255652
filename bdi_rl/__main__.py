"""``python -m bdi_rl`` works like the ``bdi-rl`` command."""

import sys

from bdi_rl.cli import main

sys.exit(main())
