"""What a question says of the values of the user's layers is applied, or the answer says it was not: a yes/no
field used as an adjective ("functional water points", "non-functional"), a feature singled out by its name
("camp Bravo"), a number comparison on a field ("holding more than 5000 litres", "camps with more than 6000
people") and one result per polygon ("in each camp"). Two layers a field team might bring, written here:
camps (GeoJSON polygons, drawn in UTM 37N) and water points (CSV with lon/lat and yes/no, litres columns).
Every expected value is computed here with geopandas, never with product code; the model is a ScriptedModel
with no planning script (code resolves each question) that finishes a run whose plan cannot apply."""

from __future__ import annotations

import re

import geopandas as gpd
import pandas as pd
import pytest
from shapely.geometry import Point, box

from geofaham_plugin.core.engines.layers import LayerCatalogue, data_dir, guess_name_field
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.coverage import question_constraints
from geofaham_plugin.core.planning.prepass import prepass, user_entries

X0, Y0 = 500_000, 1_000_000  # UTM 37N
CAMPS = [("Alpha", (0, 0, 2000, 1500), 12_000), ("Bravo", (3000, 0, 4500, 1000), 8_000), ("Charlie", (6000, 0, 7000, 1000), 5_000)]  # fmt: skip
# wp_id, x, y (metres from X0, Y0), functional, capacity in litres
POINTS = [
    ("WP20", 400, 300, "yes", 3000), ("WP21", 1500, 1200, "no", 8000), ("WP22", 900, 700, "no", 1000),
    ("WP23", 3300, 250, "yes", 6000), ("WP24", 3700, 800, "no", 7000), ("WP25", 4200, 400, "yes", 2000),
    ("WP26", 4400, 600, "no", 9000), ("WP27", 3500, 500, "no", 5000), ("WP28", 4000, 200, "no", 100),
    ("WP29", 6300, 300, "yes", 4000), ("WP30", 6500, 700, "no", 6000), ("WP31", 6800, 200, "yes", 5500),
    ("WP32", 6200, 900, "no", 200), ("WP33", 6900, 800, "no", 100),
    ("WP34", 1000, 2600, "yes", 10000), ("WP35", 5000, 3000, "yes", 10000), ("WP36", 2500, 500, "no", 12000),
]  # fmt: skip


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("field_team")
    camps = gpd.GeoDataFrame(
        {"camp": [c[0] for c in CAMPS], "population": [c[2] for c in CAMPS]},
        geometry=[box(X0 + a, Y0 + b, X0 + c, Y0 + d) for _, (a, b, c, d), _ in CAMPS],
        crs=32637,
    )
    points = gpd.GeoSeries([Point(X0 + p[1], Y0 + p[2]) for p in POINTS], crs=32637).to_crs(4326)
    table = pd.DataFrame(
        {
            "wp_id": [p[0] for p in POINTS],
            "functional": [p[3] for p in POINTS],
            "capacity_l": [p[4] for p in POINTS],
            "lon": points.x.round(7),
            "lat": points.y.round(7),
        }
    )
    camps.to_crs(4326).to_file(folder / "camps.geojson", driver="GeoJSON")
    table.to_csv(folder / "water_points.csv", index=False)
    joined = gpd.sjoin(gpd.GeoDataFrame(table, geometry=points), camps.to_crs(4326)[["camp", "population", "geometry"]])
    return folder, joined


@pytest.fixture(scope="module")
def catalogue(files):
    folder, _ = files
    c = LayerCatalogue(data_dir())
    c.add_user_layer("camps", folder / "camps.geojson")
    c.add_user_layer("water points", folder / "water_points.csv")
    return c


def ask(store, catalogue, question: str):
    # a replan asks the model for another reading; it has none
    script = {"planner": [{"template": "none fits"}] * 4, "progress": [{"action": "finish", "reason": "no data"}] * 3}
    return Orchestrator(store, LLM(ScriptedModel(script)), layers=catalogue).run(question)


def per_camp(answer: str) -> dict[str, int]:
    """The answer's table rows "| ... | Alpha | 3 |" as camp -> count."""
    return {
        m[1]: int(m[2]) for m in re.finditer(r"\|\s*(?:\d+\s*\|\s*)?(Alpha|Bravo|Charlie)\s*\|\s*([\d,]+)\s*\|", answer)
    }


def listed(record) -> list[str]:
    return sorted(item.name for item in record.structured.items)


def counts(joined, mask) -> dict[str, int]:
    found = joined[mask].groupby("camp").size().to_dict()
    return {c[0]: int(found.get(c[0], 0)) for c in CAMPS}


@pytest.mark.parametrize(
    "question, functional",
    [
        ("How many functional water points are in each camp?", "yes"),  # the chain: count points in polygons
        ("how many non-functional water points in every camp", "no"),  # the spec: counts in zones
        ("number of water points in each camp whose functional is no", "no"),  # a condition said after the zones
    ],
)
def test_a_yes_no_field_said_as_an_adjective_filters_the_counts_per_camp(store, catalogue, files, question, functional):
    _, joined = files
    expected = counts(joined, joined["functional"] == functional)
    assert expected != counts(joined, joined["functional"].notna())  # the filter makes a difference
    record = ask(store, catalogue, question)
    assert record.status == "answered", record.answer
    assert per_camp(record.answer) == expected, record.answer


def test_a_comparison_on_a_field_said_by_its_unit_and_a_camp_by_its_name(store, catalogue, files):
    _, joined = files
    expected = sorted(joined.loc[(joined["camp"] == "Bravo") & (joined["capacity_l"] > 5000), "wp_id"])
    for question in (
        "Which water points holding more than 5000 litres lie inside camp Bravo?",
        "Which water points with a capacity of more than 5000 litres lie in camp Bravo?",
    ):
        record = ask(store, catalogue, question)
        assert record.status == "answered", record.answer
        assert listed(record) == expected, record.answer
        assert "(capacity_l > 5000)" in record.answer and "(camp: Bravo)" in record.answer


def test_a_listed_subset_in_a_named_camp(store, catalogue, files):
    _, joined = files
    expected = sorted(joined.loc[(joined["camp"] == "Charlie") & (joined["functional"] == "no"), "wp_id"])
    record = ask(store, catalogue, "List the non-functional water points in camp Charlie")
    assert record.status == "answered", record.answer
    assert listed(record) == expected  # named by wp_id: the layer's one identifier


def test_a_comparison_on_the_reference_layer(store, catalogue, files):
    _, joined = files
    expected = int((joined["population"] > 6000).sum())
    record = ask(store, catalogue, "how many water points are in camps with more than 6000 people")
    assert record.status == "answered", record.answer
    (total,) = record.structured.totals()
    assert total.value == expected


def test_a_comparison_with_no_field_is_reported_not_applied(store, catalogue):
    record = ask(store, catalogue, "Which water points with more than 5000 lie inside camp Bravo?")
    assert record.status != "answered"
    assert [c.phrase for c in record.constraints if c.kind == "comparison" and not c.applied] == ["more than 5000"]
    assert "the condition “more than 5000”" in record.answer.split("The result below")[0]


def test_what_a_question_says_of_the_values_are_constraints(catalogue):
    entries = {e.id: e for e in user_entries(catalogue)}

    def found(question: str) -> dict[str, object]:
        facts = prepass(question, layers=catalogue)
        return {c.kind: c.value for c in question_constraints(facts, entries=entries)}

    said = found("How many functional water points with more than 5000 litres are in each camp?")
    assert said["attribute"] == ["functional", "yes"]
    assert said["comparison"] == 5000.0
    assert said["each"] == "user:camps"
    assert found("non-functional water points in camp Charlie")["attribute"] == ["camp", "Charlie"]
    assert "comparison" not in found("water points within 500 m of camp Bravo")  # a distance, not a condition
    assert "attribute" not in found("water points whose functional is no")  # a condition said as one (filter_where)


def test_an_event_question_is_not_applied_to_the_users_layers(store, catalogue):
    record = ask(store, catalogue, "Count the structures in each damage class that the Eaton fire damaged")
    assert record.status == "answered", record.answer
    assert [s.tool for s in record.steps] == ["load_event_layer", "select_damage", "count"]
    assert record.steps[-1].args == {"by": "damage_class"}


def test_a_unique_text_identifier_names_the_features(catalogue):
    entry = catalogue.user_layers["user:water_points"]
    assert entry.name_field == "wp_id"
    assert guess_name_field(entry.fields, entry.feature_count + 1) is None  # not on every feature: no name


@pytest.mark.parametrize(
    "question",
    ["¿Cuántos puntos de agua hay en cada campamento?", "Combien de points d'eau y a-t-il dans chaque campement ?"],
)
def test_layers_named_in_english_are_called_in_spanish_and_french(store, catalogue, files, question):
    _, joined = files
    record = ask(store, catalogue, question)
    assert record.status == "answered", record.answer
    assert record.facts.layers == ["user:water_points", "user:camps"]
    assert per_camp(record.answer) == counts(joined, joined["functional"].notna())


def test_the_total_of_a_field_is_its_sum_not_a_count(store, catalogue, files):
    _, joined = files
    chosen = (joined["camp"] == "Bravo") & (joined["functional"] == "yes")
    expected = int(joined.loc[chosen, "capacity_l"].sum())
    assert expected != int(chosen.sum())
    record = ask(store, catalogue, "What is the total capacity of the functional water points in camp Bravo?")
    assert record.status == "answered", record.answer
    (total,) = record.structured.totals()
    assert total.value == expected
    entries = {e.id: e for e in user_entries(catalogue)}
    facts = prepass("total capacity of the water points", layers=catalogue)
    said = [(c.kind, c.value) for c in question_constraints(facts, entries=entries)]
    assert ("measure", "sum") in said  # a count of the water points would be reported as not what was asked


def test_the_area_of_each_camp_is_one_row_per_camp(store, catalogue):
    record = ask(store, catalogue, "What is the area of each camp in hectares?")
    assert record.status == "answered", record.answer
    rows = {
        m[1]: float(m[2])
        for m in re.finditer(r"\|\s*(Alpha|Bravo|Charlie)\s*\|[^|]*\|\s*([\d,.]+)\s*\|", record.answer)
    }
    assert rows == {"Alpha": 300.0, "Bravo": 150.0, "Charlie": 100.0}, record.answer  # boxes drawn in UTM 37N


def _buildings_and_flood(folder, years: bool = False):
    """3,000 points with a damage field (``years``: and a year_built field) and a flood disc, written as the user's
    layers; the catalogue that has them."""
    import numpy as np
    import shapely

    rng = np.random.default_rng(17)
    xy = rng.uniform(0, 1, (3000, 2))
    buildings = gpd.GeoDataFrame(
        {"bid": [f"B{i}" for i in range(3000)], "damage": rng.choice(["none", "minor", "destroyed"], 3000)},
        geometry=shapely.points(36.7 + 0.3 * xy[:, 0], -1.4 + 0.2 * xy[:, 1]),
        crs=4326,
    )
    if years:
        buildings["year_built"] = np.random.default_rng(3).integers(1900, 2024, len(buildings))
    flood = gpd.GeoDataFrame(geometry=[Point(36.85, -1.3).buffer(0.05)], crs=4326)
    buildings.to_file(folder / "buildings.gpkg")
    flood.to_file(folder / "flood.gpkg")
    c = LayerCatalogue(data_dir())
    c.add_user_layer("buildings", folder / "buildings.gpkg")
    c.add_user_layer("flood", folder / "flood.gpkg")
    return buildings, flood, c


@pytest.mark.parametrize(
    "question",
    [
        "How many of my buildings lie inside the flood zone, broken down by damage?",
        "count my buildings in the flood area by damage level",
    ],
)
def test_a_layer_with_its_own_damage_field_is_counted_by_it(store, tmp_path, question):
    # "by damage" of a layer whose field is damage (not the disasters' damage_class): counted by that field,
    # not replanned into some disaster's damage layer
    buildings, flood, c = _buildings_and_flood(tmp_path)
    inside = buildings[buildings.intersects(flood.geometry.iloc[0])]
    record = ask(store, c, question)
    assert record.status == "answered", record.answer
    rows = {
        m[1]: int(m[2].replace(",", ""))
        for m in re.finditer(r"\|\s*(none|minor|destroyed)\s*\|\s*([\d,]+)\s*\|", record.answer)
    }
    assert rows == inside["damage"].value_counts().to_dict() and sum(rows.values()) == len(inside) > 100
    assert [s.tool for s in record.steps if s.status == "done"][-2:] == ["inside", "count"]


def test_the_nearest_outside_an_area_are_taken_outside_it_first(store, tmp_path):
    buildings, flood, c = _buildings_and_flood(tmp_path)
    metric = buildings.to_crs(32737)
    disc = flood.to_crs(32737).geometry.iloc[0]
    outside = metric[~metric.intersects(disc)]
    expected = outside.assign(d=outside.distance(disc)).sort_values("d").head(5)
    assert expected["d"].min() > 0 and metric.intersects(disc).sum() > 100  # the nearest overall are inside
    record = ask(store, c, "Which 5 of my buildings are closest to the flood zone but outside it?")
    assert record.status == "answered", record.answer
    assert [s.tool for s in record.steps if s.status == "done"][-2:] == ["outside", "nearest"]
    ranked = store.read_vector(record.steps[-1].artifact_id)
    assert ranked["bid"].tolist() == expected["bid"].tolist(), record.answer
    assert ranked["distance_m"].to_numpy() == pytest.approx(expected["d"].to_numpy(), abs=0.5)  # geodesic vs UTM


def _with_years(folder):
    return _buildings_and_flood(folder, years=True)


@pytest.mark.parametrize(
    ("question", "keep"),
    [
        ("How many of my buildings inside the flood zone were built before 1990?", lambda y: y < 1990),
        ("how many buildings of mine in the flood area were built since 2000", lambda y: y >= 2000),
        ("Count my buildings within the flood zone constructed after 1975", lambda y: y > 1975),
        ("Of my buildings in the flood zone, how many are newer than 2000?", lambda y: y > 2000),
    ],
)
def test_a_year_compared_is_applied_to_the_layers_year_field(store, tmp_path, question, keep):
    buildings, flood, c = _with_years(tmp_path)
    inside = buildings[buildings.intersects(flood.geometry.iloc[0])]
    want = int(keep(inside["year_built"]).sum())
    assert 0 < want < len(inside)
    record = ask(store, c, question)
    assert record.status == "answered", record.answer
    assert [s.tool for s in record.steps if s.status == "done"][-3:] == ["filter_where", "inside", "count"]
    assert re.search(rf"(?<![\d,]){want:,}(?![\d,])", record.answer) and "year_built" in record.answer, record.answer


def test_a_year_compared_of_a_layer_without_years_is_said_not_applied_and_not_replanned_elsewhere(store, tmp_path):
    # the condition cannot be applied: the answer says so; a replan would only have picked some disaster's layers
    _, _, c = _buildings_and_flood(tmp_path)
    model = ScriptedModel({"planner": [{"template": "count_damage", "event_id": 1}] * 4})
    record = Orchestrator(store, LLM(model), layers=c).run(
        "How many of my buildings inside the flood zone were built before 1990?"
    )
    assert record.status == "partial" and model.calls == [], record.answer
    assert "Not answered as asked" in record.answer and "before 1990" in record.answer
    assert "load_event_layer" not in [s.tool for s in record.steps] and "Saint Louis" not in record.answer
    assert any("no analysis applies this question as asked to your layers" in n for n in record.notes)


@pytest.mark.parametrize(
    ("question", "condition"),
    [
        ("How many of my buildings in the flood zone were built between 1950 and 1980?", "between 1950 and 1980"),
        ("How many of my buildings in the flood zone are older than 50 years?", "older than 50 years"),
        ("how many of my buildings in the flood zone are over 50 years old", "50 years old"),
    ],
)
def test_a_range_or_an_age_of_a_layer_is_said_not_applied_never_dropped(store, tmp_path, question, condition):
    # one filter compares one bound, and no field holds an age: the count of all buildings inside is not the answer
    _, _, c = _with_years(tmp_path)
    record = ask(store, c, question)
    assert record.status == "partial", record.answer
    assert "Not answered as asked" in record.answer and f"“{condition}”" in record.answer
    assert record.answer.count(f"“{condition}”") == 1


@pytest.mark.parametrize(
    ("question", "inside"),
    [
        ("How many of my destroyed buildings are outside the flood zone?", False),
        ("How many of my buildings with damage destroyed are inside the flood zone?", True),
    ],
)
def test_a_damage_word_that_is_a_value_of_your_layer_filters_your_layer(store, tmp_path, question, inside):
    # "destroyed" is a value of the layer's own damage field, not a disaster's damage class to fetch
    buildings, flood, c = _buildings_and_flood(tmp_path)
    within = buildings.intersects(flood.geometry.iloc[0])
    want = int(((buildings["damage"] == "destroyed") & (within if inside else ~within)).sum())
    record = ask(store, c, question)
    assert record.status == "answered", record.answer
    assert [s.tool for s in record.steps if s.status == "done"][-3:] == [
        "filter_values",
        "inside" if inside else "outside",
        "count",
    ]
    assert re.search(rf"(?<![\d,]){want:,}(?![\d,])", record.answer), record.answer


def test_a_grade_of_a_layer_without_grades_is_said_not_applied(store, catalogue):
    # water points have no damage grades: "destroyed" is not applied, and no disaster's layer is fetched for it
    model = ScriptedModel({"planner": [{"template": "count_damage", "event_id": 1}] * 4})
    record = Orchestrator(store, LLM(model), layers=catalogue).run("how many of my water points were destroyed?")
    assert record.status == "partial" and model.calls == [], record.answer
    assert "Not answered as asked" in record.answer and "only damage class destroyed" in record.answer
    assert "load_event_layer" not in [s.tool for s in record.steps]


def test_a_replan_of_a_question_about_your_layers_names_their_values_instead_of_another_disaster(catalogue):
    from geofaham_plugin.core.errors import NoOtherPlan
    from geofaham_plugin.core.planning.planner import Planner

    model = ScriptedModel({"planner": [{"template": "count_damage", "event_id": 1}] * 4})
    facts = prepass("how many of my water points were destroyed?", layers=catalogue)
    with pytest.raises(
        NoOtherPlan, match="hint: say which values of their fields to keep, e.g. water points: functional"
    ):
        Planner(LLM(model), layers=catalogue).plan(facts, None, failures=["only damage class destroyed"])
    assert model.calls == []


def test_grades_said_of_your_layer_filter_its_field_of_grades(store, tmp_path):
    # the layer's damage field holds none / minor / destroyed: "damaged", "not destroyed", "no damage" filter it
    buildings, flood, c = _buildings_and_flood(tmp_path)
    inside = buildings[buildings.intersects(flood.geometry.iloc[0])]
    for question, kept in [
        ("how many of my buildings are damaged in the flood zone", ("minor", "destroyed")),
        ("How many of my buildings inside the flood zone are not destroyed?", ("none", "minor")),
        ("How many of my buildings in the flood zone, excluding the destroyed ones?", ("none", "minor")),
        ("How many of my buildings inside the flood zone have no damage?", ("none",)),
    ]:
        want = int(inside["damage"].isin(kept).sum())
        record = ask(store, c, question)
        assert record.status == "answered", record.answer
        assert re.search(rf"(?<![\d,]){want:,} in total", record.answer), (question, record.answer)
        assert f"(damage: {', '.join(sorted(kept, key=['none', 'minor', 'destroyed'].index))})" in record.answer
