"""QGIS entry point of the GeoFaham plugin.

QGIS imports this package and calls :func:`classFactory`. Nothing heavy is imported at module level:
the dependency check runs first, so a missing Python package gives a readable, translated message
instead of a traceback in the plugin manager.
"""


def classFactory(iface):  # noqa: N802 (QGIS API name)
    from .geofaham_plugin.deps import missing_dependencies

    missing = missing_dependencies()
    if missing:
        from .geofaham_plugin.ui.missing_deps import MissingDependenciesPlugin

        return MissingDependenciesPlugin(iface, missing)
    from .geofaham_plugin.ui.plugin import GeoFahamPlugin

    return GeoFahamPlugin(iface)
