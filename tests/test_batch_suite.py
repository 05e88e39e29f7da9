"""The batch suite (bench/batch_suite.py): everyday GIS tasks on messy generated files through batch with no model,
graded by independent code. No written output may be silently wrong; the correct ones must not fall below the
floor (what passes today: raise it as the planning of these operations lands)."""

from __future__ import annotations

import geopandas as gpd
import pytest
from pyproj import Transformer
from shapely.geometry import Point

from bench import batch_suite as suite
from bench.batch_paraphrases import PARAPHRASES, paraphrase_tasks

CORRECT_FLOOR = 36  # of 36 outputs, with no model: code reads every operation the instruction says
PARAPHRASE_FLOOR = 70  # of 72 outputs, the instructions said otherwise, with no model (the rest: reported)


@pytest.mark.parametrize("which", ["tasks", "paraphrases"])
def test_the_suite_has_no_silently_wrong_output(tmp_path, which):
    tasks = suite.TASKS if which == "tasks" else paraphrase_tasks()
    assert len(tasks) >= 30 and len({t.id for t in tasks}) == len(tasks)
    result = suite.run_suite(tasks, "scripted", tmp_path, log=print)
    print(result.summary())
    silent = [
        f"{g.task}/{g.name}: {g.grader} (the run said: {g.run_said})"
        for g in result.grades
        if g.outcome == suite.SILENT
    ]
    assert not silent, "\n".join(silent)
    assert result.count(suite.CORRECT) >= (CORRECT_FLOOR if which == "tasks" else PARAPHRASE_FLOOR), result.summary()
    assert len(result.grades) == sum(len(t.outputs) for t in tasks)
    for grade in result.grades:  # every output the run did not write or check says why, in one line
        if grade.outcome != suite.CORRECT:
            assert grade.run_said and "\n" not in grade.run_said and grade.run_said != "(the run gave no verdict)"


def test_graders_catch_wrong_files(tmp_path):
    """The graders fail the outputs a careless run would write: the input unchanged instead of reprojected, the
    rows with no name kept, a polygon reprojected the long way round the globe."""
    clinics = [Point(c[3], c[4]) for c in suite.CLINICS]
    unchanged = gpd.GeoDataFrame(geometry=clinics, crs=4326)
    unchanged.to_file(tmp_path / "a.gpkg")
    with pytest.raises(suite.Wrong, match="CRS"):
        suite._g_reproject_clinics(tmp_path / "a.gpkg")
    with pytest.raises(suite.Wrong, match="features instead of"):
        gpd.GeoDataFrame({"name": [c[1] for c in suite.CLINICS]}, geometry=clinics, crs=4326).to_file(
            tmp_path / "b.gpkg"
        )
        suite._g_named_clinics(tmp_path / "b.gpkg")
    to_utm = Transformer.from_crs(4326, 25830, always_xy=True)
    right = gpd.GeoDataFrame(geometry=[Point(to_utm.transform(c.x, c.y)) for c in clinics], crs=25830)
    right.to_file(tmp_path / "c.gpkg")
    suite._g_reproject_clinics(tmp_path / "c.gpkg")  # the right file passes
    naive = gpd.GeoDataFrame({"zone": list(suite.REEFS)}, geometry=list(suite.REEFS.values()), crs=4326)
    naive.set_geometry(naive.segmentize(0.1)).to_crs(3832).to_file(
        tmp_path / "d.gpkg"
    )  # densified in degrees: a band round the globe
    with pytest.raises(suite.Wrong, match="invalid geometries"):
        suite._g_reefs_3832(tmp_path / "d.gpkg")


def test_every_task_is_paraphrased_twice_in_other_words():
    assert set(PARAPHRASES) == {t.id for t in suite.TASKS}
    by_id = {t.id: t for t in suite.TASKS}
    for task_id, said in PARAPHRASES.items():
        assert len(set(said)) == 2 and by_id[task_id].instruction not in said
    assert len(paraphrase_tasks()) == 2 * len(suite.TASKS)
