"""Fail when a tracked file holds a secret the audited baseline (.secrets.baseline) does not list.

Secrets are compared by file and hash, not by line number, so an edit that moves an audited example
(a DSN in the README) does not fail the run; only a new secret does. The baseline is refreshed with
``detect-secrets scan --baseline .secrets.baseline`` and audited with ``detect-secrets audit``."""

from __future__ import annotations

import json
import subprocess  # nosec B404 (runs git and detect-secrets with argument lists, no shell)
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    baseline = json.loads((ROOT / ".secrets.baseline").read_text(encoding="utf-8"))
    known = {(f, s["hashed_secret"]) for f, found in baseline["results"].items() for s in found}
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)  # nosec B603 B607
    files = [f for f in listed.stdout.splitlines() if f != ".secrets.baseline"]
    scan = [str(Path(sys.executable).with_name("detect-secrets")), "scan", *files]
    report = json.loads(subprocess.run(scan, cwd=ROOT, capture_output=True, text=True, check=True).stdout)  # nosec B603
    new = [
        f"{f}:{s['line_number']} ({s['type']})"
        for f, found in report["results"].items()
        for s in found
        if (f, s["hashed_secret"]) not in known
    ]
    for line in new:
        print(f"new secret: {line}", file=sys.stderr)
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())
