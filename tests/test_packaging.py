"""The plugin as QGIS's plugin repository sees it: metadata fields and the pb_tool zip."""

import configparser
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import ROOT

REQUIRED_FIELDS = [
    "name",
    "qgisMinimumVersion",
    "description",
    "about",
    "version",
    "author",
    "email",
    "homepage",
    "tracker",
    "repository",
    "tags",
    "icon",
    "experimental",
    "hasProcessingProvider",
    "license",
]


def test_metadata_has_every_field_the_repository_expects():
    meta = configparser.ConfigParser()
    meta.read(ROOT / "metadata.txt", encoding="utf-8")
    general = meta["general"]
    for field in REQUIRED_FIELDS:
        assert general.get(field, "").strip(), field
    assert (ROOT / general["icon"]).is_file()
    assert tuple(int(x) for x in general["qgisMinimumVersion"].split(".")) <= (3, 40)
    for dependency in ("geopandas", "rasterio", "openai", "pystac-client", "osmnx", "psycopg2"):
        assert dependency in general["about"]
    assert "GPL" in general["license"]


def test_pb_tool_zip_contains_the_plugin_and_nothing_else(tmp_path):
    deploy = tmp_path / "plugins"
    subprocess.run(
        [str(ROOT / ".venv" / "bin" / "pb_tool"), "zip", "-n", "-p", str(deploy)],
        cwd=ROOT,
        input="y\n" * 5,
        text=True,
        check=True,
        capture_output=True,
    )
    built = ROOT / "geofaham.zip"
    target = tmp_path / "geofaham.zip"
    shutil.move(built, target)
    names = zipfile.ZipFile(target).namelist()
    assert "geofaham/metadata.txt" in names and "geofaham/__init__.py" in names
    assert "geofaham/geofaham_plugin/ui/plugin.py" in names and "geofaham/resources/icon.png" in names
    assert any(n.startswith("geofaham/geofaham_plugin/core/") for n in names)
    assert not [n for n in names if n.startswith(("geofaham/tests", "geofaham/.venv", "geofaham/bench"))]
    assert not [n for n in names if "__pycache__" in n]

    # the plugin repository's upload scan: Bandit (critical = high severity blocks) and a secrets scanner, run on
    # what the zip holds, with none of our own configuration
    unpacked = tmp_path / "unpacked"
    zipfile.ZipFile(target).extractall(unpacked)
    bin_dir = ROOT / ".venv" / "bin"
    bandit = subprocess.run(
        [str(bin_dir / "bandit"), "-r", "-q", "-lll", "-f", "json", str(unpacked)],
        capture_output=True,
        text=True,
    )
    found = json.loads(bandit.stdout)["results"]
    assert not found, [f"{r['filename']}:{r['line_number']} {r['test_id']}" for r in found]
    files = [str(p) for p in unpacked.rglob("*") if p.is_file()]
    scan = subprocess.run([str(bin_dir / "detect-secrets"), "scan", *files], capture_output=True, text=True, check=True)
    baseline = json.loads((ROOT / ".secrets.baseline").read_text(encoding="utf-8"))
    audited = {s["hashed_secret"] for found in baseline["results"].values() for s in found}
    secrets = [
        f"{Path(f).relative_to(unpacked)}:{s['line_number']} ({s['type']})"
        for f, hits in json.loads(scan.stdout)["results"].items()
        for s in hits
        if s["hashed_secret"] not in audited
    ]
    assert not secrets, secrets


def test_translation_sources_are_in_sync_with_the_ui_code():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "i18n.py"), "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout


def test_french_translation_is_complete_and_compiles(built_translations, tmp_path):
    text = (ROOT / "i18n" / "geofaham_fr.ts").read_text(encoding="utf-8")
    assert 'type="unfinished"' not in text
    assert (built_translations / "geofaham_fr.qm").stat().st_size > 1000
    for ts in (ROOT / "i18n").glob("*.ts"):  # one message per source: a merged pair inside one is dropped by lrelease
        out = subprocess.run(["lrelease", str(ts), "-qm", str(tmp_path / "x.qm")], capture_output=True, text=True)
        assert "duplicate" not in out.stdout + out.stderr, out.stdout + out.stderr
        assert text.count("<source>") == text.count("<message>") or ts.name != "geofaham_fr.ts"
