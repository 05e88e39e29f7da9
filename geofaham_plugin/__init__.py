"""GeoFaham: disaster-response questions answered by real geospatial computation.

``geofaham_plugin.core`` runs headless (no Qt, no qgis imports); ``geofaham_plugin.ui`` adapts it to
QGIS. Inside this package every import is relative, so it works both as the top-level package
``geofaham_plugin`` (CLI, tests, bench) and nested inside the QGIS plugin folder.
"""

__version__ = "0.1.0"
