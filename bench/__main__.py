"""``python -m bench <command>``: GeoFaham-Bench (run, judge, report, tasks, ground-truth) and batch mode."""

import sys

from .cli import main

sys.exit(main())
