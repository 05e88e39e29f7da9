"""The QGIS side: adapts core events to widgets and layers. Touches the project only on the main thread."""
