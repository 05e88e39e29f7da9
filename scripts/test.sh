#!/usr/bin/env bash
# Run the whole suite headless with the project venv. Fails when a test fails or when no test ran.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export GEOFAHAM_CACHE="${GEOFAHAM_CACHE:-$HOME/.cache/geofaham}"
export GEOFAHAM_PG_DSN="${GEOFAHAM_PG_DSN:-postgresql://geofaham:geofaham@127.0.0.1:5432/geofaham}"
export QT_QPA_PLATFORM=offscreen
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/runtime-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
# The whole run (no arguments) checks the code first: lint, format and types (pyproject.toml).
if [ $# -eq 0 ]; then
  export RUFF_CACHE_DIR="$GEOFAHAM_CACHE/ruff-cache"
  echo "lint: ruff check, ruff format --check, mypy"
  .venv/bin/ruff check --quiet . || { echo "ruff check failed: run .venv/bin/ruff check --fix ." >&2; exit 1; }
  .venv/bin/ruff format --check --quiet . || { echo "ruff format found unformatted files: run .venv/bin/ruff format ." >&2; exit 1; }
  .venv/bin/mypy --cache-dir "$GEOFAHAM_CACHE/mypy-cache" || { echo "mypy found type errors" >&2; exit 1; }
  # what the QGIS plugin repository scans on upload: Bandit on the plugin package (config in pyproject.toml)
  # and a secrets scan of every tracked file against the audited baseline (.secrets.baseline)
  echo "security: bandit, detect-secrets"
  .venv/bin/bandit --quiet -c pyproject.toml -r geofaham_plugin 2>/dev/null || { echo "bandit found issues: fix them or add '# nosec BXXX' with the reason" >&2; exit 1; }
  .venv/bin/python scripts/secrets_check.py || { echo "detect-secrets found a new secret: remove it, or refresh and audit .secrets.baseline (detect-secrets scan --baseline .secrets.baseline; detect-secrets audit .secrets.baseline)" >&2; exit 1; }
fi
REPORT="$(mktemp -d)/junit.xml"
set +e
.venv/bin/python -m pytest --junitxml="$REPORT" "$@"
rc=$?
set -e
[ $rc -eq 0 ] || { echo "tests failed (pytest exit $rc)" >&2; exit $rc; }
ran="$(.venv/bin/python -c "import sys, xml.etree.ElementTree as E; r=E.parse(sys.argv[1]).getroot(); s=r if r.tag=='testsuite' else r.find('testsuite'); print(int(s.get('tests'))-int(s.get('skipped')))" "$REPORT")"
[ "$ran" -gt 0 ] || { echo "no test ran" >&2; exit 1; }
echo "tests passed: $ran ran"
