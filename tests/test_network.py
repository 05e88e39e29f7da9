"""Road access (issue 13): the network engine on a hand-computed grid (Catarroja's roads and the EMSR773 flood are
checked against networkx on the raw GeoJSON, through a question, in test_road_access.py)."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
from shapely.geometry import LineString, Point, box

from geofaham_plugin.core.engines import network as net

# a transverse Mercator with scale 1 at the grid's corner: 100 m in it is 100 m on the ellipsoid (to < 1 mm)
LOCAL = "+proj=tmerc +lat_0=39.4 +lon_0=-0.4 +k=1 +x_0=0 +y_0=0 +ellps=WGS84 +units=m +no_defs"


def _grid(bridge_south: bool = False) -> gpd.GeoDataFrame:
    """Streets of a 3 x 3 grid, 100 m apart: three west-east (y = 0, 100, 200), three south-north (x = 0, 100,
    200), each a line through its three junctions. The middle west-east street is one-way westward (oneway=-1)."""
    rows = []
    for y in (0, 100, 200):
        oneway = "-1" if y == 100 else None
        bridge = "yes" if (bridge_south and y == 0) else None
        rows.append(
            {
                "highway": "residential",
                "oneway": oneway,
                "bridge": bridge,
                "geometry": LineString([(0, y), (100, y), (200, y)]),
            }
        )
    for x in (0, 100, 200):
        rows.append(
            {
                "highway": "residential",
                "oneway": None,
                "bridge": None,
                "geometry": LineString([(x, 0), (x, 100), (x, 200)]),
            }
        )
    return gpd.GeoDataFrame(rows, crs=LOCAL)


def _points(*xy: tuple[float, float]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"name": [f"p{x}_{y}" for x, y in xy]}, geometry=[Point(p) for p in xy], crs=LOCAL)


# a flood around junction (100, 0): it cuts both halves of the south street and the first piece north of it
HAZARD = gpd.GeoDataFrame(geometry=[box(90, -10, 110, 10)], crs=LOCAL)


def test_grid_known_cut_exact_distances_and_statuses():
    network = net.build_network(_grid())
    assert network.node_count == 9 and len(network.segments) == 12
    r = net.reachability(network, _points((0, 0)), _points((200, 0), (100, 0)), HAZARD)
    a, b = r.pairs.iloc[0], r.pairs.iloc[1]
    # before: straight along the south street
    assert a["before_m"] == pytest.approx(200, abs=0.01) and b["before_m"] == pytest.approx(100, abs=0.01)
    # after: the middle street runs westward only, so the way round is by the north street: 200 + 200 + 200
    assert a["after_m"] == pytest.approx(600, abs=0.01)
    assert a["status"] == "detour" and a["detour_ratio"] == pytest.approx(3.0)
    # residential roads at 30 km/h: 200 m in 0.4 min
    assert a["before_min"] == pytest.approx(0.4, abs=0.001)
    # the flooded junction has all its roads cut: cut off, and isolated as a target
    assert b["status"] == "cut off" and np.isnan(b["after_m"])
    assert r.isolated_targets == [1] and r.isolated_origins == []
    assert int(r.cut.sum()) == 3
    assert sorted(net.cut_roads(network, r.cut)["cut_segments"].tolist()) == [1, 2]


def test_grid_bridge_is_not_cut_and_oneway_counts():
    network = net.build_network(_grid(bridge_south=True))
    r = net.reachability(network, _points((0, 0)), _points((200, 0)), HAZARD)
    row = r.pairs.iloc[0]
    assert row["after_m"] == pytest.approx(200, abs=0.01) and row["status"] == "reachable"
    assert int(r.cut.sum()) == 1  # only the south-north street's first piece
    # the one-way street: from (200, 100) west to (0, 100) is 200 m, east is round by the north street
    back = net.reachability(network, _points((200, 100)), _points((0, 100)))
    there = net.reachability(network, _points((0, 100)), _points((200, 100)))
    assert back.pairs.iloc[0]["before_m"] == pytest.approx(200, abs=0.01)
    assert there.pairs.iloc[0]["before_m"] == pytest.approx(400, abs=0.01)


def test_snap_beyond_limit_is_off_network():
    network = net.build_network(_grid())
    r = net.reachability(network, _points((0, 0)), _points((200, 900)), max_snap_m=500)
    assert r.pairs.iloc[0]["status"] == "off network"
    assert any("off network" in n for n in r.notes)


def test_many_origins_to_one_target_equal_one_pair_at_a_time():
    """With fewer targets than origins the engine searches from the targets on the reversed graph: every pair
    must get what it gets when routed on its own (one origin, one target: searched from the origin)."""
    network = net.build_network(_grid())
    junctions = [(x, y) for x in (0, 100, 200) for y in (0, 100, 200)]
    for target in [(0, 100), (200, 100), (100, 200)]:
        many = net.reachability(network, _points(*junctions), _points(target), HAZARD).pairs
        for i, origin in enumerate(junctions):
            one = net.reachability(network, _points(origin), _points(target), HAZARD).pairs.iloc[0]
            row = many.iloc[i]
            for column in ("before_m", "after_m", "before_min", "after_min", "detour_ratio", "status"):
                assert (row[column] == one[column]) or (pd.isna(row[column]) and pd.isna(one[column])), (
                    origin,
                    target,
                    column,
                )


def test_pgrouting_gives_what_networkx_gives_on_the_grid():
    """With a PostGIS engine the tool routes through pgRouting (pgr_dijkstraCost): the same pairs, distances,
    times, statuses and isolated features as networkx, searched from the origins and from the targets, with and
    without a distance limit."""
    import os
    import uuid

    from geofaham_plugin.core.engines.db import open_engine

    dsn = os.environ.get("GEOFAHAM_PG_DSN")
    if not dsn:
        pytest.skip("GEOFAHAM_PG_DSN is not set")
    engine = open_engine("postgis", dsn=dsn, schema=f"gf_test_{uuid.uuid4().hex[:8]}")
    try:
        if not engine.has_pgrouting():  # type: ignore[attr-defined]
            pytest.skip("the PostGIS database has no pgRouting (scripts/setup.sh creates it)")
        network = net.build_network(_grid())
        junctions = [(x, y) for x in (0, 100, 200) for y in (0, 100, 200)]
        cases = [(junctions, [(200, 0), (100, 0)]), ([(0, 0)], [(200, 0), (100, 0), (0, 200)])]
        seen: set[str] = set()
        for origins, targets in cases:
            for max_km in (None, 0.35):
                plain = net.reachability(network, _points(*origins), _points(*targets), HAZARD, max_km=max_km)
                routed = net.reachability(
                    network,
                    _points(*origins),
                    _points(*targets),
                    HAZARD,
                    max_km=max_km,
                    router=engine.route_costs,  # type: ignore[attr-defined]
                )
                pd.testing.assert_frame_equal(plain.pairs, routed.pairs)
                seen |= set(plain.pairs["status"])
                assert (plain.isolated_origins, plain.isolated_targets) == (
                    routed.isolated_origins,
                    routed.isolated_targets,
                )
        assert seen == {"detour", "cut off", "reachable", "unreachable before"}
    finally:
        engine.drop_schema()  # type: ignore[attr-defined]
        engine.close()
