"""OpenStreetMap features for the Maps agent and the OSM layers of the local layer catalogue.

One :class:`~.query.FeatureQuery` (an OR of tag selectors, each an AND of tags) drives every source, so
a class means the same thing whether a local extract, Overpass or the disaster database answers it.
Classes are defined once, in ``core/data/osm_classes.json`` (read by ``domain.feature_classes``);
local extracts are described in the layer catalogue (``core/data/layers.json``).

- ``query``: the class model (class and tag queries, matching tag columns, classifying a layer);
- ``geometry``: Overpass JSON elements to geometries, the result schema, area coverage;
- ``overpass``: the bounded Overpass client (direct HTTP POST, so the endpoint, timeouts, retries and
  the error pages Overpass sends with HTTP 200 are under our control and testable);
- ``extracts``: local extracts (HOT-export GeoJSON sets, .osm.pbf files).

Results are GeoDataFrames in EPSG:4326 with ``osm_id``, ``osm_type``, ``name`` and the query's key tags.
"""

ATTRIBUTION = "© OpenStreetMap contributors, ODbL"
USER_AGENT = "GeoFaham QGIS plugin (disaster response; python-httpx)"
