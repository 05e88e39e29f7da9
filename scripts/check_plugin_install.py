#!/usr/bin/env python3
"""Install GeoFaham the way a user of the QGIS plugin repository does (no ``make``), then use it.

On Debian 12 with QGIS 3.40, in a throw-away user base (``HOME`` and ``PYTHONUSERBASE`` in a temp folder;
the real ``~/.local`` is never touched; no venv, pyenv or conda on the path), with the system Python that
QGIS embeds (``/usr/bin/python3``):

1. ``message``: ``python3 -m geofaham_plugin check`` prints what is missing and how to install it; the
   commands are taken from ``geofaham_plugin.deps.debian_commands`` (the code that builds the message) and
   must appear verbatim in what ``check`` printed.
2. ``install``: each command is run as printed (``sudo`` dropped when already root without sudo; apt gets
   its "yes"), pip's wheel cache in ``~/.cache/geofaham/pip-user-route`` so a second run is fast.
3. ``versions``: nothing missing any more, the optional packages (numba) installed too; numpy < 2; shapely, pyogrio and rasterio link Debian's GEOS 3.11
   and GDAL 3.6 (the libraries QGIS loads), no bundled ``*.libs`` in the user site.
4. ``qgis``: QGIS headless (``QgsApplication([], False)``, offscreen) loads the plugin from a plugin folder
   with ``qgis.utils.loadPlugin``/``startPlugin`` (a mocked ``iface``): the real plugin, not the
   missing-packages one, and no critical message; the band math compiled by numba gives numpy's pixels; then,
   in the same process (GEOS/GDAL of QGIS and of
   shapely/pyogrio side by side), ``ask`` answers a question that code resolves (no model).
5. ``cli``: ``python3 -m geofaham_plugin ask`` answers it too, offline, outside QGIS.

Every stage prints its name and time; a failure ends with ``FAILED at stage <name>`` and exit code 1.

    python3 scripts/check_plugin_install.py            # a fresh user base, removed at the end
    python3 scripts/check_plugin_install.py --keep DIR # keep (and reuse) the user base in DIR
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SYSTEM_PYTHON = "/usr/bin/python3"
QUESTION = "How many structures did the Eaton fire destroy?"
EXPECTED = "2,722"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class StageFailed(Exception):
    pass


@contextmanager
def stage(name: str, timings: dict[str, float]) -> Iterator[None]:
    print(f"\n=== stage {name}", flush=True)
    start = time.monotonic()
    try:
        yield
    except Exception as exc:
        print(f"\nFAILED at stage {name}: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(1) from exc
    timings[name] = time.monotonic() - start
    print(f"=== stage {name}: ok ({timings[name]:.0f} s)", flush=True)


def cache_dir() -> Path:
    return Path(os.environ.get("GEOFAHAM_CACHE") or Path.home() / ".cache" / "geofaham")


def clean_env(base: Path) -> dict[str, str]:
    """The environment of a QGIS user: the system's PATH, a home of its own, no venv, no PYTHON* variables."""
    dropped = ("PYTHON", "VIRTUAL_ENV", "CONDA", "PYENV", "GEOFAHAM_", "QGIS_", "PIP_CACHE_DIR", "PIP_USER")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    home = base / "home"
    env.update(
        HOME=str(home),
        PYTHONUSERBASE=str(home / ".local"),
        PIP_CACHE_DIR=str(cache_dir() / "pip-user-route"),
        PATH=SYSTEM_PATH,
        QT_QPA_PLATFORM="offscreen",
        LANG="C.UTF-8",
        DEBIAN_FRONTEND="noninteractive",
        # Debian 12's pip 23.0 does not read its cache of locally built wheels under --no-binary unless told
        # to (later pips do): without this every run builds shapely, pyogrio and rasterio again (~3 min)
        PIP_USE_FEATURE="no-binary-enable-wheel-cache",
    )
    return env


def run(cmd: list[str] | str, env: dict[str, str], *, shell: bool = False, stdin: str | None = None) -> str:
    """Run, echo the output, fail with the tail of it."""
    shown = cmd if isinstance(cmd, str) else " ".join("<script>" if "\n" in part else part for part in cmd)
    print(f"$ {shown}", flush=True)
    out = subprocess.run(
        cmd,
        shell=shell,  # noqa: S602 - the commands the missing-packages message prints, run as a user would
        env=env,
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        executable="/bin/bash" if shell else None,
        check=False,
    )
    text = out.stdout + out.stderr
    print("\n".join("  | " + line for line in text.splitlines()[-25:]), flush=True)
    if out.returncode != 0:
        raise StageFailed(f"exit code {out.returncode}: {shown}")
    return out.stdout


def as_this_user(command: str) -> str:
    """``sudo`` dropped when root already and there is no sudo (a container); else the command as printed."""
    if os.geteuid() == 0 and shutil.which("sudo", path=SYSTEM_PATH) is None:
        return command.replace("sudo ", "")
    return command


def stage_message(env: dict[str, str]) -> list[str]:
    code = "import json\nfrom geofaham_plugin.deps import debian_commands, missing_dependencies\n"
    code += "print(json.dumps(debian_commands(missing_dependencies())))"
    commands: list[str] = json.loads(run([SYSTEM_PYTHON, "-c", code], env).splitlines()[-1])
    printed = subprocess.run(
        [SYSTEM_PYTHON, "-m", "geofaham_plugin", "check"], env=env, cwd=ROOT, capture_output=True, text=True
    ).stdout
    print(printed)
    for command in commands:
        if command not in printed:
            raise StageFailed(f"the check does not print the command {command!r}")
    return commands


def _apt_packages(command: str) -> list[str]:
    """The packages of every ``sudo apt install`` in ``command``."""
    names = []
    for part in command.split("&&"):
        if part.strip().startswith("sudo apt install "):
            names += part.split("sudo apt install ", 1)[1].split()
    return names


def stage_install(commands: list[str], env: dict[str, str], *, apt: bool) -> None:
    for command in commands:
        if not apt and (packages := _apt_packages(command)):
            absent = [p for p in packages if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode]
            if absent:
                raise StageFailed(f"not installed (run without --no-apt once): {' '.join(absent)}")
            print(f"apt: {' '.join(packages)} installed already (--no-apt)")
            command = command.split("&&", 1)[1].strip() if "&&" in command else ""
        if command:
            run(as_this_user(command), env, shell=True, stdin="y\n" * 5)


VERSIONS = """
import json, pathlib, site, sys
from geofaham_plugin.deps import missing_dependencies, missing_optional
import numpy, shapely, pyogrio, rasterio, geopandas, pandas
missing = [d.distribution for d in missing_dependencies() + missing_optional()]
assert not missing, f"still missing: {missing}"
user = pathlib.Path(site.getusersitepackages())
info = {
    "numpy": numpy.__version__, "pandas": pandas.__version__, "geopandas": geopandas.__version__,
    "shapely": shapely.__version__, "geos": shapely.geos_version_string, "pyogrio": pyogrio.__version__,
    "pyogrio_gdal": pyogrio.__gdal_version_string__, "rasterio": rasterio.__version__,
    "rasterio_gdal": rasterio.__gdal_version__, "user_site": str(user),
    "from_user_site": sorted(m.__name__ for m in (numpy, shapely, pyogrio, rasterio, geopandas, pandas)
                             if str(user) in m.__file__),
}
print(json.dumps(info))
assert int(numpy.__version__.split(".")[0]) < 2, numpy.__version__
assert shapely.geos_version[:2] == (3, 11), shapely.geos_version
assert rasterio.__gdal_version__.startswith("3.6"), rasterio.__gdal_version__
assert pyogrio.__gdal_version_string__.startswith("3.6"), pyogrio.__gdal_version_string__
geo = ("shapely", "pyproj", "rasterio", "pyogrio", "fiona")
bundled = sorted(p.name for p in user.glob("*.libs") if p.name.split(".")[0] in geo) if user.is_dir() else []
assert not bundled, f"wheels that bundle their own GEOS/GDAL/PROJ: {bundled}"
"""

QGIS = """
import contextlib, io, os, sys
from unittest import mock
plugins, session, question, expected = sys.argv[1:5]
from qgis.core import Qgis, QgsApplication
app = QgsApplication([], False)
app.initQgis()
import qgis.utils
from qgis.PyQt.QtWidgets import QMenu
from qgis.testing.mocked import get_iface
iface = get_iface()  # a mock with a real main window and map canvas; the plugin menu a real menu too
iface.pluginMenu.return_value = QMenu()
qgis.utils.iface = iface
sys.path.insert(0, plugins)
qgis.utils.plugin_paths = [plugins]
qgis.utils.updateAvailablePlugins()
assert "geofaham" in qgis.utils.available_plugins, qgis.utils.available_plugins
errors = []
with mock.patch.object(qgis.utils, "showException", lambda *a, **k: errors.append(a)):
    assert qgis.utils.loadPlugin("geofaham"), f"loadPlugin: {errors}"
    assert qgis.utils.startPlugin("geofaham"), f"startPlugin: {errors}"
plugin = qgis.utils.plugins["geofaham"]
print("plugin:", type(plugin).__name__)
critical = [c for c in iface.messageBar().pushMessage.call_args_list if Qgis.Critical in c.args]
assert type(plugin).__name__ == "GeoFahamPlugin", critical
assert not critical, critical
assert plugin.dock is not None and iface.addDockWidget.called, "no dock"
# numba's own LLVM beside QGIS's libraries in one process: the compiled band math builds and gives numpy's pixels
import numpy as np
from geofaham.geofaham_plugin.core.engines.raster import kernels, ops
assert kernels.compiled("nd_change") is not None, "numba's raster kernels did not build inside QGIS"
bands = [np.arange(k, k + 20_000, dtype="uint16").reshape(100, 200) for k in (1, 900, 50, 7_000)]
jit = ops.dnbr({"nir": bands[0], "swir22": bands[1]}, {"nir": bands[2], "swir22": bands[3]})
os.environ["GEOFAHAM_RASTER_JIT"] = "0"
plain = ops.dnbr({"nir": bands[0], "swir22": bands[1]}, {"nir": bands[2], "swir22": bands[3]})
del os.environ["GEOFAHAM_RASTER_JIT"]
assert np.array_equal(jit, plain, equal_nan=True), "compiled and numpy band math differ inside QGIS"
print("qgis: compiled band math equals numpy's", flush=True)
from geofaham.geofaham_plugin.core import cli
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = cli.main(["ask", question, "--session", session])
print(out.getvalue())
assert code == 0 and expected in out.getvalue(), code
assert qgis.utils.unloadPlugin("geofaham")
print("qgis: plugin loaded and answered", flush=True)
# exitQgis() segfaults tearing down the mocked iface's map canvas (with or without the plugin loaded): the
# check is over, leave without it
sys.stderr.flush()
os._exit(0)
"""


def stage_qgis(base: Path, env: dict[str, str]) -> None:
    plugins = base / "plugins"
    plugins.mkdir(exist_ok=True)
    link = plugins / "geofaham"
    if not link.exists():
        link.symlink_to(ROOT, target_is_directory=True)
    env = env | {"GEOFAHAM_OFFLINE": "1"}
    out = run([SYSTEM_PYTHON, "-c", QGIS, str(plugins), str(base / "session-qgis"), QUESTION, EXPECTED], env)
    if "qgis: plugin loaded and answered" not in out:
        raise StageFailed("the QGIS child did not finish")


def stage_cli(base: Path, env: dict[str, str]) -> None:
    env = env | {"GEOFAHAM_OFFLINE": "1"}
    out = run([SYSTEM_PYTHON, "-m", "geofaham_plugin", "ask", QUESTION, "--session", str(base / "session")], env)
    if EXPECTED not in out:
        raise StageFailed(f"the answer does not say {EXPECTED}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="user base folder to use and keep (default: a temp folder)")
    parser.add_argument(
        "--no-apt", action="store_true", help="check that the apt packages are installed instead of installing them"
    )
    args = parser.parse_args(argv)
    if not Path(SYSTEM_PYTHON).exists():
        print(f"FAILED at stage setup: no {SYSTEM_PYTHON}", file=sys.stderr)
        return 1
    base = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="geofaham-install-"))
    (base / "home").mkdir(parents=True, exist_ok=True)
    env = clean_env(base)
    timings: dict[str, float] = {}
    print(f"user base: {env['PYTHONUSERBASE']}\npip cache: {env['PIP_CACHE_DIR']}")
    try:
        with stage("message", timings):
            commands = stage_message(env)
        with stage("install", timings):
            stage_install(commands, env, apt=not args.no_apt)
        with stage("versions", timings):
            run([SYSTEM_PYTHON, "-c", VERSIONS], env)
        with stage("qgis", timings):
            stage_qgis(base, env)
        with stage("cli", timings):
            stage_cli(base, env)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print("\nall stages passed: " + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()))
    print(f"total {sum(timings.values()):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
