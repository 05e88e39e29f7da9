"""Smoke test of bench/bench_network.py on a tiny input: it runs, prints the engine / networkx ratio lines and the
grid's goal line, and the engine agrees with the plain networkx baseline pair by pair. No timing assertions."""

from __future__ import annotations

import json
import re

import pytest
from conftest import SHARED_DATA

PBF = SHARED_DATA / "osm" / "test.osm.pbf"
TINY = ["--pbf", str(PBF), "--origins", "12", "--targets", "2", "--grid", "8", "--grid-origins", "10"]


@pytest.mark.skipif(not PBF.is_file(), reason="the .osm.pbf sample is not in ../shared/data")
def test_bench_network_runs_on_a_tiny_input_and_prints_the_ratios(tmp_path, capsys):
    from bench import bench_network

    out = tmp_path / "network.json"
    assert bench_network.main([*TINY, "--repeats", "1", "--no-rss", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    for metric in ("build_s", "query_s", "total_s", "traced_mib"):
        assert len(re.findall(rf"ratio engine/networkx {metric} +\d+\.\d+x", text)) == 2, metric
    assert re.search(r"grid: 112 segments built \+ queried by the engine in \d+\.\d s", text)
    agree = re.findall(r"agree with networkx for (\d+)/(\d+) pairs", text)
    assert agree == [("24", "24"), ("20", "20")]
    report = json.loads(out.read_text())
    assert [r["segments"] for r in report][1] == 112 and set(report[0]["rows"]) == {"engine", "networkx"}

    # the child that measures a path's peak RSS (run as a process by the bench) prints its rise as JSON
    assert bench_network.main([*TINY, "--child", "grid:engine"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["rss_rise_mib"] >= 0
