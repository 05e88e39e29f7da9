"""Headless command line: ``python -m geofaham_plugin <command>``."""

from __future__ import annotations

import argparse
import json
import sys

from ..deps import missing_dependencies, pip_command
from .config import settings_from_env


def _cmd_check(_args) -> int:
    missing = missing_dependencies()
    if missing:
        print("missing: " + ", ".join(d.distribution for d in missing))
        print("install with: " + pip_command(missing))
        return 1
    print("all dependencies present")
    return 0


def _cmd_config(_args) -> int:
    print(json.dumps(settings_from_env().describe(), indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m geofaham_plugin", description="GeoFaham, headless.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="check the Python dependencies").set_defaults(func=_cmd_check)
    sub.add_parser("config", help="show where models, database, STAC and Overpass come from").set_defaults(
        func=_cmd_config
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
