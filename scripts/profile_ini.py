"""Enable a plugin in a QGIS profile's QGIS3.ini and silence first-run prompts (idempotent)."""

import configparser
import sys
from pathlib import Path

ini_path, plugin = Path(sys.argv[1]), sys.argv[2]
ini = configparser.RawConfigParser()
ini.optionxform = str  # QGIS keys are case-sensitive
if ini_path.exists():
    ini.read(ini_path, encoding="utf-8")
for section, key, value in (
    ("PythonPlugins", plugin, "true"),
    ("PythonPlugins", "watchDog", "false"),
    ("qgis", "checkVersion", "false"),
    ("qgis", "showTips", "false"),
    ("qgis", "allowCrashReporting", "false"),
    ("app", "newsFeed\\enabled", "false"),
):
    if not ini.has_section(section):
        ini.add_section(section)
    ini.set(section, key, value)
with ini_path.open("w", encoding="utf-8") as fh:
    ini.write(fh, space_around_delimiters=False)
