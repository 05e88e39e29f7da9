"""Refresh the .ts sources in i18n/ from every tr("...") in geofaham_plugin/ui (context "GeoFaham").

New strings are added as unfinished (QGIS then shows English); strings no longer used are marked
obsolete; existing translations are kept. `make translations` runs this, then lrelease builds .qm.
Usage: python scripts/i18n.py [--check]   (--check: exit 1 if a .ts is out of date, change nothing)
"""

from __future__ import annotations

import ast
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTEXT = "GeoFaham"


def source_strings() -> list[str]:
    found: list[str] = []
    for path in sorted((ROOT / "geofaham_plugin" / "ui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("tr", "N_")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and node.args[0].value not in found
            ):
                found.append(node.args[0].value)
    return found


def refresh(ts_path: Path, strings: list[str]) -> str:
    tree = ET.parse(ts_path)
    context = next(c for c in tree.getroot().iter("context") if c.findtext("name") == CONTEXT)
    existing = {m.findtext("source"): m for m in context.findall("message")}
    for source, message in existing.items():
        translation = message.find("translation")
        if source not in strings:
            translation.set("type", "obsolete")
        elif translation.get("type") == "obsolete":
            del translation.attrib["type"]
    for source in strings:
        if source not in existing:
            message = ET.SubElement(context, "message")
            ET.SubElement(message, "source").text = source
            ET.SubElement(message, "translation", {"type": "unfinished"})
    ET.indent(tree, space="    ")
    body = ET.tostring(tree.getroot(), encoding="unicode")
    return '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n' + body + "\n"


def main() -> int:
    check = "--check" in sys.argv
    strings = source_strings()
    stale = []
    for ts in sorted((ROOT / "i18n").glob("*.ts")):
        text = refresh(ts, strings)
        if text != ts.read_text(encoding="utf-8"):
            stale.append(ts.name)
            if not check:
                ts.write_text(text, encoding="utf-8")
    if check and stale:
        print("out of date (run `make translations`): " + ", ".join(stale))
        return 1
    print(f"{len(strings)} strings; " + ("updated: " + ", ".join(stale) if stale and not check else "up to date"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
