"""Headless core: orchestrator, Response Store, agents, engines, models. Imports no Qt and no qgis."""
