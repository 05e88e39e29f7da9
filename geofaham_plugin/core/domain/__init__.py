"""The ground floor: GeoFaham's shared vocabulary.

Names of roles and agents, damage classes, the disaster-event table, time windows, the artifact-id
pattern, geometry-kind sets and geodesy helpers. Every other part of the core may import from here;
nothing here imports from above (only the standard library, pydantic, shapely and pyproj), so the
vocabulary cannot pull a floor above it into an import cycle.
"""
