"""``python -m geofaham_plugin``: the headless command line (see ``core/cli.py``)."""

import sys

from .core.cli import main

sys.exit(main())
