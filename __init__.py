"""QGIS entry point of the GeoFaham plugin.

QGIS imports this package and calls :func:`classFactory`. Nothing heavy is imported at module level:
the dependency check runs first, so a missing Python package gives a readable, translated message
instead of a traceback in the plugin manager.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qgis.gui import QgisInterface

    from .geofaham_plugin.ui.missing_deps import MissingDependenciesPlugin
    from .geofaham_plugin.ui.plugin import GeoFahamPlugin


def classFactory(iface: QgisInterface) -> GeoFahamPlugin | MissingDependenciesPlugin:  # noqa: N802 (QGIS API name)
    from .geofaham_plugin.deps import missing_dependencies

    missing = missing_dependencies()
    if missing:
        from .geofaham_plugin.ui.missing_deps import MissingDependenciesPlugin

        return MissingDependenciesPlugin(iface, missing)
    from .geofaham_plugin.ui.plugin import GeoFahamPlugin

    return GeoFahamPlugin(iface)
