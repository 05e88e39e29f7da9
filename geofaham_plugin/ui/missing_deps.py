"""The plugin object QGIS gets when a Python dependency is missing: it explains, it does not crash."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qgis.core import Qgis, QgsMessageLog

from ..deps import SETUP_COMMAND, Dependency, install_instructions
from .i18n import install_translator, remove_translator, tr

if TYPE_CHECKING:
    from qgis.gui import QgisInterface
    from qgis.PyQt.QtCore import QTranslator


def missing_dependencies_message(missing: list[Dependency]) -> str:
    names = ", ".join(dep.label for dep in missing)
    return tr(
        "GeoFaham cannot start because these Python packages are missing: {names}. "
        'Install them with: {command} (or run "{setup}" in the GeoFaham source folder), '
        "then restart QGIS."
    ).format(names=names, command="; ".join(install_instructions(missing)), setup=SETUP_COMMAND)


class MissingDependenciesPlugin:
    """Shows which packages are missing and the command that installs them; adds nothing else."""

    def __init__(self, iface: QgisInterface, missing: list[Dependency]) -> None:
        self.iface = iface
        self.missing = missing
        self.translator: QTranslator | None = None
        self.message = ""

    def initGui(self) -> None:  # noqa: N802 (QGIS API name)
        self.translator = install_translator()
        self.message = missing_dependencies_message(self.missing)
        QgsMessageLog.logMessage(self.message, "GeoFaham", Qgis.Critical)
        self.iface.messageBar().pushMessage("GeoFaham", self.message, Qgis.Critical, 0)

    def unload(self) -> None:
        remove_translator(self.translator)
        self.translator = None
