"""``python -m geofaham_plugin``: the headless command line (see ``core/cli.py``).

With a dependency missing the core cannot even be imported: every command then prints what is missing and
how to install it (what ``check`` prints) and exits with 1, instead of a traceback.
"""

import sys

try:  # Ctrl-C while the modules load: one line, no traceback (inside a command, core.cli.guarded says it)
    from .deps import missing_dependencies, print_check

    if missing_dependencies():
        sys.exit(print_check())

    from .core.cli import main
except KeyboardInterrupt:
    print("error: interrupted (Ctrl-C)", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
