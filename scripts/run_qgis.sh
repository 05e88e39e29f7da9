#!/usr/bin/env bash
# Launch the real QGIS with GeoFaham enabled in a project-local profile (.qgis-profile/, not in git).
#   HEADLESS=1            run under Xvfb (no display needed)
#   SCREENSHOT=out.png    save a screenshot of the main window once the plugin is up, then exit cleanly
#   QGIS_PROBE=report.json  write what the in-QGIS probe saw (plugin loaded, dock, unload/reload) and exit
#   PROJECT=file.qgz      open that project
# Extra arguments are passed to qgis.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROFILES="${GEOFAHAM_PROFILES:-$ROOT/.qgis-profile}"
PROFILE_DIR="$PROFILES/profiles/default"
PLUGIN_NAME=geofaham
VENV="$ROOT/.venv"
[ -x "$VENV/bin/python" ] || { echo "no venv: run 'make setup' first" >&2; exit 1; }

mkdir -p "$PROFILE_DIR/python/plugins" "$PROFILE_DIR/QGIS"
ln -sfn "$ROOT" "$PROFILE_DIR/python/plugins/$PLUGIN_NAME"
"$VENV/bin/python" "$ROOT/scripts/profile_ini.py" "$PROFILE_DIR/QGIS/QGIS3.ini" "$PLUGIN_NAME"

# QGIS embeds the Python it was built against, and that Python finds its standard library from the first python3
# on PATH: a pyenv or conda shell (its bin/ first) gave QGIS another Python's library and QGIS died at start. The
# venv is made from that Python (make setup checks PyQGIS imports in it): its home directory goes first on PATH;
# PYTHONHOME is not ours to keep.
PY_HOME="$(sed -n 's/^home *= *//p' "$VENV/pyvenv.cfg" 2>/dev/null | head -1)"
[ -n "$PY_HOME" ] && [ -d "$PY_HOME" ] && export PATH="$PY_HOME:$PATH"
unset PYTHONHOME

# The QGIS GUI embeds the system Python: give it the venv's packages.
SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
# GEOFAHAM_NO_VENV=1 starts QGIS with only the system Python's packages (what a user without the
# dependencies sees: the plugin must explain what is missing).
[ "${GEOFAHAM_NO_VENV:-0}" = "1" ] || export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
export GEOFAHAM_CACHE="${GEOFAHAM_CACHE:-$HOME/.cache/geofaham}"
export QT_LOGGING_RULES="${QT_LOGGING_RULES:-qt.qpa.*=false}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/runtime-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

args=(--nologo --noversioncheck --profiles-path "$PROFILES")
#   QUESTION="..."        type this question into the GeoFaham dock once QGIS is up (with SCREENSHOT/QGIS_PROBE)
export GEOFAHAM_PROBE_QUESTION="${QUESTION:-}"
if [ -n "${SCREENSHOT:-}" ] || [ -n "${QGIS_PROBE:-}" ]; then
  export GEOFAHAM_SCREENSHOT="${SCREENSHOT:+$(realpath -m "$SCREENSHOT")}"
  export GEOFAHAM_PROBE_REPORT="${QGIS_PROBE:+$(realpath -m "$QGIS_PROBE")}"
  args+=(--code "$ROOT/scripts/qgis_probe.py")
fi
[ -n "${PROJECT:-}" ] && args+=(--project "$PROJECT")

# No display to draw on (an SSH session, a CI box): QGIS would stop at "non-interactive mode not supported";
# Xvfb gives it one, and the line below says so.
if [ "${HEADLESS:-0}" != "1" ] && [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "run_qgis.sh: no display (DISPLAY and WAYLAND_DISPLAY unset): running QGIS under Xvfb (HEADLESS=1)" >&2
  HEADLESS=1
fi
if [ "${HEADLESS:-0}" = "1" ]; then
  exec xvfb-run -a -s '-screen 0 1920x1080x24' qgis "${args[@]}" "$@"
else
  exec qgis "${args[@]}" "$@"
fi
