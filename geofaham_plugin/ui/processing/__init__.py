"""GeoFaham's deterministic operations as QGIS Processing algorithms (Toolbox, Model Designer)."""
