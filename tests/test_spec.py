"""Composable analysis specs: questions → specs → plans of typed tools, and end to end on the sample data with
expected values computed here independently (geopandas in a metric CRS, no product code)."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
import shapely
from shapely.geometry import box

from geofaham_plugin.core.aoi import register_aoi
from geofaham_plugin.core.engines.layers import data_dir, default_catalogue
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator
from geofaham_plugin.core.planning.planner import Planner
from geofaham_plugin.core.planning.prepass import prepass
from geofaham_plugin.core.planning.spec_compile import compile_specs
from geofaham_plugin.core.planning.spec_read import spec_from_facts
from geofaham_plugin.core.planning.spec_schema import AnalysisSpec, Relation, SetRef, SpecError

EATON_DINS = "eaton-2025/DINS_2025_Eaton_Public_View_2025-01-14.geojson"
ALTADENA_BOX = (-118.16, 34.17, -118.10, 34.20)


def tools_for(question: str, aoi: str | None = None) -> list[str]:
    draft = spec_from_facts(prepass(question), aoi_artifact_id=aoi, layers=default_catalogue())
    assert not draft.gaps, draft.gaps
    return [s.tool for s in compile_specs(draft.specs).steps]


@pytest.mark.parametrize(
    "question,tools",
    [
        # a count of damage, with a class filter and a grouping
        (
            "how many homes got destroyed in the palisades fire, by type of structure",
            ["load_event_layer", "filter_values", "select_damage", "count"],  # homes: the residential types
        ),
        # features inside the hazard (Spanish)
        (
            "¿Cuántas escuelas quedaron dentro de la zona inundada de Valencia?",
            ["load_event_layer", "get_features", "inside", "count"],
        ),
        # features within a distance of damage: the reference is the damage, not the hazard
        (
            "hospitals less than 1 km from damaged buildings of the Eaton fire",
            ["load_event_layer", "select_damage", "get_features", "within_distance"],
        ),
        # damage near features: the features are fetched around the damage
        (
            "count destroyed houses no more than 600 m from a school, Eaton fire",
            ["load_event_layer", "filter_values", "select_damage", "get_features", "within_distance", "count"],
        ),
        # beyond a distance: buffer the hazard, keep what lies outside it
        (
            "How many schools lie more than 2 km from the Valencia flood?",
            ["load_event_layer", "get_features", "buffer", "outside", "count"],
        ),
        # an area in "square km" of the hazard itself
        ("how many square km did the Lahaina fire burn?", ["load_event_layer", "measure"]),
        # the k nearest, k said as a word before "closest" (French)
        (
            "Quels sont les deux hôpitaux les plus proches de l'incendie de Lahaina ?",
            ["load_event_layer", "get_features", "nearest"],
        ),
    ],
)
def test_questions_compile_to_composed_plans(question, tools):
    assert tools_for(question) == tools


def test_the_user_area_restricts_the_subject_before_anything_else():
    steps = compile_specs(
        spec_from_facts(
            prepass("How many buildings were destroyed in the Eaton fire?"), aoi_artifact_id="a_0000aaaa"
        ).specs
    ).steps
    assert [s.tool for s in steps] == ["load_event_layer", "inside", "select_damage", "count"]
    assert steps[1].inputs == {"features": "step:1", "mask": "a_0000aaaa"}


def test_a_comparison_computes_the_same_analysis_for_each_disaster():
    draft = spec_from_facts(prepass("Compare destroyed homes between the Eaton and the Palisades fires"))
    assert [s.subject.event_id for s in draft.specs] == [11, 14]
    plan = compile_specs(draft.specs)
    assert [s.tool for s in plan.steps].count("count") == 2


def test_k_nearest_reads_a_number_word_and_a_plural_gets_three_with_a_note():
    two = spec_from_facts(prepass("Name the two schools closest to the Eaton burn scar")).specs[0]
    assert two.relation is not None and two.relation.k == 2
    plural = spec_from_facts(prepass("closest hospitals to the Lahaina fire")).specs[0]
    assert plural.relation is not None and plural.relation.k == 3 and plural.implied


def test_an_ambiguous_disaster_is_a_gap_for_the_model_not_a_guess():
    draft = spec_from_facts(prepass("How many buildings were destroyed in the fire?"))
    assert draft.specs == [] and draft.gaps[0].field == "event_id" and 11 in draft.gaps[0].candidates


def test_questions_that_are_not_set_analyses_are_left_to_the_templates():
    with pytest.raises(SpecError):
        spec_from_facts(prepass("Show me Sentinel-2 imagery of the Eaton fire"))
    with pytest.raises(SpecError, match="no hazard-area layer"):
        spec_from_facts(prepass("List the shelters near the Porto Alegre flood"), layers=default_catalogue())


def test_spec_validation_rejects_incoherent_specs():
    with pytest.raises(ValueError, match="needs a disaster event"):
        SetRef(kind="damage")
    with pytest.raises(ValueError, match="needs a distance"):
        Relation(kind="within", reference=SetRef(kind="hazard", event_id=11))
    with pytest.raises(ValueError, match="not defined"):
        AnalysisSpec(subject=SetRef(kind="damage", event_id=11), measure="area")
    with pytest.raises(ValueError, match="none is set"):
        AnalysisSpec(
            subject=SetRef(kind="features", feature_class="healthcare"),
            relation=Relation(kind="inside", reference=SetRef(kind="aoi")),
        )


def test_the_planner_uses_specs_without_a_model_call_and_falls_back_to_templates(store):
    planner = Planner(LLM(ScriptedModel({})), layers=default_catalogue())
    result = planner.plan(prepass("How many schools are inside the Valencia flood extent?"), store)
    assert result.specs and not result.model_called and result.template is None
    imagery_model = ScriptedModel({"planner": [{"template": "burn_severity"}]})
    imagery = Planner(LLM(imagery_model)).plan(prepass("Map the burn severity of the Eaton fire with dNBR"), store)
    assert imagery.template == "burn_severity" and not imagery.specs


def test_an_ambiguous_disaster_is_chosen_by_the_model_from_a_narrowed_enum(store):
    model = ScriptedModel({"planner": [{"event_id": 14}]})
    result = Planner(LLM(model), layers=default_catalogue()).plan(
        prepass("How many buildings were destroyed in the fire?"), store
    )
    assert result.model_called and result.specs[0].subject.event_id == 14
    schema = str(model.calls[0].schema)
    assert "14" in schema and "11" in schema and "template" not in schema


# ------------------------------------------------------------------------------------ end to end
def _orchestrator(store):
    return Orchestrator(store, LLM(ScriptedModel({})))


def test_e2e_the_area_of_interest_restricts_a_damage_count(store):
    dins = gpd.read_file(data_dir() / EATON_DINS)
    inside = dins.intersects(box(*ALTADENA_BOX))
    expected = int((inside & (dins["DAMAGE"] == "Destroyed (>50%)")).sum())
    assert 0 < expected < int((dins["DAMAGE"] == "Destroyed (>50%)").sum())  # the AOI makes a difference
    aoi = register_aoi(store, gpd.GeoDataFrame(geometry=[box(*ALTADENA_BOX)], crs=4326))
    record = _orchestrator(store).run("how many structures did the Eaton fire destroy?", aoi_artifact_id=aoi.id)
    assert record.status == "answered", record.answer
    assert f"{expected:,}" in record.answer
    applied = {c.kind: c.applied for c in record.constraints}
    assert applied["area_of_interest"] and applied["damage_class"]


def test_e2e_spanish_hospitals_within_a_distance_of_the_flood(store):
    flood = gpd.read_file(data_dir() / "valencia-2024/emsr773_observed_flood_merged.geojson").to_crs(25830)
    health = gpd.read_file(data_dir() / "valencia-2024/valencia_city_health_facilities.geojson").to_crs(25830)
    distances = health.geometry.distance(flood.union_all()).to_numpy()
    assert not np.any(np.abs(distances - 1500) < 10)  # no facility on the edge: the CRS cannot flip the count
    expected = int((distances <= 1500).sum())
    record = _orchestrator(store).run(
        "¿Cuántos centros de salud hay a menos de 1,5 km de la zona inundada de Valencia?"
    )
    assert record.status == "answered", record.answer
    assert f": {expected:,} " in record.answer  # (the answer is in Spanish)
    assert [s.tool for s in record.steps] == ["load_event_layer", "get_features", "within_distance", "count"]


def test_e2e_a_comparison_states_each_disaster(store):
    record = _orchestrator(store).run("Destroyed homes: Eaton fire versus Palisades fire?")
    assert record.status == "answered", record.answer
    # homes: the residential structure types (single- and multi-family residences, mobile homes, mixed
    # commercial/residential), counted from the DINS files in tests/test_coverage.py's way: 1,859 and 5,543 of
    # 2,722 and 6,823 destroyed structures
    assert "1,859" in record.answer and "5,543" in record.answer
    assert all(c.applied for c in record.constraints if c.kind == "event")


# ------------------------------------------------------------------------------------ the user's own layers
@pytest.fixture()
def user_catalogue(tmp_path):
    """Two layers a user brought: field clinics (points, beds with a gap) and evacuation zones (polygons)."""
    from shapely.geometry import Point

    clinics = gpd.GeoDataFrame(
        {"name": [f"clinic {i}" for i in range(6)], "beds": [10, 20, 5, None, 40, 8]},
        geometry=[
            Point(-0.40, 39.40),
            Point(-0.42, 39.42),
            Point(-0.38, 39.45),
            Point(-0.35, 39.48),
            Point(-0.45, 39.38),
            Point(-0.30, 39.36),
        ],
        crs=4326,
    )
    zones = gpd.GeoDataFrame(
        {"zone": ["north", "south", "east"]},
        geometry=[box(-0.44, 39.41, -0.36, 39.49), box(-0.46, 39.35, -0.36, 39.41), box(-0.2, 39.3, -0.1, 39.4)],
        crs=4326,
    )
    clinics.to_file(tmp_path / "clinics.gpkg")
    zones.to_file(tmp_path / "zones.gpkg")
    catalogue = default_catalogue().__class__(data_dir())
    catalogue.add_user_layer("field_clinics", tmp_path / "clinics.gpkg")
    catalogue.add_user_layer("evacuation zones", tmp_path / "zones.gpkg")
    return catalogue, clinics, zones


def _run(store, catalogue, question):
    orch = Orchestrator(store, LLM(ScriptedModel({})), layers=catalogue)
    record = orch.run(question)
    assert record.status == "answered", record.answer
    return record


def test_e2e_counts_of_a_user_layer_in_each_zone_list_every_zone(store, user_catalogue):
    catalogue, clinics, zones = user_catalogue
    record = _run(store, catalogue, "How many of my field clinics are there per evacuation zone?")
    assert [s.tool for s in record.steps][-1] == "count_in_zones"
    table = store.read_table(record.cited_artifacts[0]).set_index("value")["count"].to_dict()
    expected = {z: int(clinics.intersects(g).sum()) for z, g in zip(zones["zone"], zones.geometry, strict=True)}
    assert table == expected and expected["east"] == 0
    assert "| north | 2 |" in record.answer and "| east | 0 |" in record.answer
    assert all(c.applied for c in record.constraints if c.kind == "layer")


def test_e2e_a_named_numeric_field_is_summed_not_counted(store, user_catalogue):
    catalogue, clinics, zones = user_catalogue
    record = _run(store, catalogue, "how many beds do the field clinics inside the evacuation zones have?")
    assert [s.tool for s in record.steps][-1] == "stats"
    inside = clinics[clinics.intersects(zones.union_all())]
    assert f"sum of beds: {int(inside['beds'].sum())}" in record.answer  # 75, not the 4 clinics


def test_e2e_mean_of_the_only_numeric_field_and_a_layer_within_a_distance_of_a_flood(store, user_catalogue):
    catalogue, clinics, _ = user_catalogue
    mean = _run(store, catalogue, "What is the average number of beds in my field clinics?")
    assert f"mean of beds: {clinics['beds'].mean():.3g}" in mean.answer
    flood = gpd.read_file(data_dir() / "valencia-2024/emsr773_observed_flood_merged.geojson").to_crs(25830)
    distances = clinics.to_crs(25830).geometry.distance(flood.union_all())
    assert not np.any(np.abs(distances - 2000) < 20)
    near = _run(store, catalogue, "Which of my field clinics lie within 2 km of the Valencia flood?")
    assert [s.tool for s in near.steps] == ["load_event_layer", "load_layer", "within_distance"]
    assert store.get(near.cited_artifacts[0]).metadata.feature_count == int((distances <= 2000).sum())


def test_e2e_an_area_of_interest_names_the_disaster_and_can_be_the_reference(store):
    dins = gpd.read_file(data_dir() / EATON_DINS)
    destroyed = int((dins.intersects(box(*ALTADENA_BOX)) & (dins["DAMAGE"] == "Destroyed (>50%)")).sum())
    aoi = register_aoi(store, gpd.GeoDataFrame(geometry=[box(*ALTADENA_BOX)], crs=4326))
    orch = _orchestrator(store)
    mine = orch.run("how many buildings were destroyed in my area?", aoi_artifact_id=aoi.id)
    assert mine.status == "answered" and f"{destroyed:,}" in mine.answer
    assert "taken from your area of interest: Eaton Fire" in mine.answer  # an assumption is said
    hospitals = gpd.read_file(data_dir() / "poi/hifld-hospitals/hospitals_la_county_maui_county.geojson")
    area = gpd.GeoSeries([box(*ALTADENA_BOX)], crs=4326).to_crs(32611).iloc[0]
    distances = hospitals.to_crs(32611).distance(area).to_numpy()
    assert not np.any(np.abs(distances - 5000) < 20)
    near = orch.run("how many hospitals are within 5 km of my area?", aoi_artifact_id=aoi.id)
    assert [s.tool for s in near.steps] == ["get_features", "within_distance", "count"]  # no event needed
    assert near.steps[1].inputs["reference"] == aoi.id
    assert f"{int((distances <= 5000).sum())} in total" in near.answer


# ------------------------------------------------------------------------------------ attribute filters
PALISADES_DINS = "palisades-2025/DINS_2025_Palisades_Public_View.geojson"


@pytest.mark.parametrize(
    "question,prefix",
    [
        ("How many mobile homes were destroyed in the Palisades fire?", "Mobile Home"),
        ("how many schools got destroyed in the palisades fire", "School"),
    ],
)
def test_e2e_a_kind_of_structure_filters_the_damage_layer_by_its_value_domain(store, question, prefix):
    dins = gpd.read_file(data_dir() / PALISADES_DINS)
    kind = dins["STRUCTURETYPE"].str.startswith(prefix)
    expected = int((kind & (dins["DAMAGE"] == "Destroyed (>50%)")).sum())
    assert 0 < expected < int((dins["DAMAGE"] == "Destroyed (>50%)").sum())
    record = _orchestrator(store).run(question)
    assert record.status == "answered", record.answer
    assert [s.tool for s in record.steps] == ["load_event_layer", "filter_values", "select_damage", "count"]
    assert sorted(record.steps[1].args["values"]) == sorted(dins.loc[kind, "STRUCTURETYPE"].unique())
    assert f"{expected:,}" in record.answer and f"STRUCTURETYPE: {prefix}" in record.answer


def test_a_class_word_with_a_relation_stays_a_feature_class():
    # schools near destroyed buildings are schools (OSM / local layers), not DINS records of schools
    assert tools_for("How many schools are within 1 km of destroyed buildings in the Palisades fire?")[:4] == [
        "load_event_layer",
        "select_damage",
        "get_features",
        "within_distance",
    ]


def test_e2e_a_share_inside_the_hazard_takes_every_structure_inside_as_its_base(store):
    dins = gpd.read_file(data_dir() / EATON_DINS)
    perimeter = gpd.read_file(data_dir() / "eaton-2025/eaton_adjusted_fire_perimeter.geojson").to_crs(dins.crs)
    inside = dins.intersects(perimeter.union_all())
    part, base = int((inside & (dins["DAMAGE"] == "Destroyed (>50%)")).sum()), int(inside.sum())
    record = _orchestrator(store).run("What share of the Eaton structures inside the fire perimeter were destroyed?")
    assert record.status == "answered", record.answer
    assert [s.tool for s in record.steps][-2:] == ["select_damage", "share"]
    assert f"{part:,} of {base:,} ({100 * part / base:.1f} %)" in record.answer


def test_an_incomplete_spec_run_does_not_label_what_it_did_not_compute(store):
    # no fire stations offline for Maui: the features step fails; the hazard layer is no "fire stations" answer
    orch = Orchestrator(store, LLM(ScriptedModel({"progress": [{"action": "finish", "reason": "no data"}] * 3})))
    record = orch.run("list the fire stations that lie less than two miles from the Lahaina burn area")
    assert record.status == "partial"
    assert "emergency_services features within" not in record.answer.split("How it was computed")[0]


def test_e2e_a_comparison_asking_by_how_many_computes_the_difference(store):
    counts = {}
    for name, path in (("Eaton", EATON_DINS), ("Palisades", PALISADES_DINS)):
        dins = gpd.read_file(data_dir() / path)
        counts[name] = int((dins["DAMAGE"] == "Destroyed (>50%)").sum())
    record = _orchestrator(store).run("Which fire destroyed more structures, Palisades or Eaton, and by how many?")
    assert record.status == "answered", record.answer
    assert record.steps[-1].tool == "difference"
    diff = counts["Palisades"] - counts["Eaton"]
    palisades, eaton = counts["Palisades"], counts["Eaton"]
    assert f"Palisades Fire: {palisades:,}; Eaton Fire: {eaton:,} — Palisades Fire has {diff:,} more" in record.answer
    assert sorted(v.value for v in record.structured.values) == sorted([eaton, palisades, diff])
    assert all(c.applied for c in record.constraints)


def test_e2e_which_types_and_how_much_of_each_is_a_breakdown_by_the_class_key(store):
    from pyproj import Geod

    flood = gpd.read_file(data_dir() / "valencia-2024/emsr773_observed_flood_merged.geojson").to_crs(4326)
    landuse = gpd.read_file(data_dir() / "valencia-2024/osm-catarroja/poligonos.geojson").to_crs(4326)
    landuse = landuse[landuse["landuse"].notna()]
    cut = gpd.clip(landuse, flood.union_all().buffer(0))
    geod = Geod(ellps="WGS84")
    farmland_ha = abs(geod.geometry_area_perimeter(cut[cut["landuse"] == "farmland"].union_all())[0]) / 1e4
    record = _orchestrator(store).run("Which land-use types in Catarroja were flooded, and how many hectares of each?")
    assert record.status == "answered", record.answer
    assert [s.tool for s in record.steps][-2:] == ["clip", "measure"] and record.steps[-1].args["by"] == "landuse"
    table = store.read_table(record.cited_artifacts[0]).set_index("value")
    assert abs(table.loc["farmland", "area_ha"] - farmland_ha) < 0.005 * farmland_ha
    assert {c.kind: c.applied for c in record.constraints}["group_by"]


def test_e2e_counts_on_a_grid_aligned_to_the_utm_zone(store):
    dins = gpd.read_file(data_dir() / PALISADES_DINS).to_crs(32611)
    destroyed = dins[dins["DAMAGE"] == "Destroyed (>50%)"].geometry.representative_point()
    cells = (
        gpd.GeoDataFrame({"i": np.floor(destroyed.x / 250), "j": np.floor(destroyed.y / 250)}).value_counts().to_numpy()
    )
    record = _orchestrator(store).run(
        "How many 250 m grid cells hold destroyed Palisades structures, and how many does the densest one hold?"
    )
    assert record.status == "answered", record.answer
    assert [s.tool for s in record.steps] == ["load_event_layer", "select_damage", "grid_counts"]
    assert f"{len(cells):,} grid cells of 250 m contain them; the densest holds {cells.max():,}" in record.answer
    assert all(c.applied for c in record.constraints)


def test_e2e_a_kind_narrower_than_its_class_is_selected_not_widened(store):
    flood = gpd.read_file(data_dir() / "valencia-2024/emsr773_observed_flood_merged.geojson").to_crs(25830)
    health = gpd.read_file(data_dir() / "valencia-2024/valencia_city_health_facilities.geojson").to_crs(25830)
    near = health[health.geometry.distance(flood.union_all()) <= 1000]
    hospitals = sorted(near.loc[near["equipamien"].str.contains("HOSPITAL"), "equipamien"])
    assert 0 < len(hospitals) < len(near)  # the class is wider than the kind
    record = _orchestrator(store).run("Which hospitals in València lie within 1 km of the DANA flood?")
    assert record.status == "answered", record.answer
    assert "select_kind" in [s.tool for s in record.steps]
    assert sorted(store.read_vector(record.cited_artifacts[0])["equipamien"]) == hospitals
    assert f"{len(hospitals)} hospital features within 1,000 m" in record.answer
    # a kind the source never lists is no zero: the run says it could not tell
    orch = Orchestrator(store, LLM(ScriptedModel({"progress": [{"action": "finish", "reason": "no data"}] * 3})))
    pharmacies = orch.run("list the pharmacies inside the Valencia flood")
    assert pharmacies.status == "partial" and "names no pharmacy" in pharmacies.answer


def test_e2e_a_reference_qualified_by_the_hazard_and_a_named_place(store):
    catarroja = data_dir() / "valencia-2024/osm-catarroja"
    flood = gpd.read_file(data_dir() / "valencia-2024/emsr773_observed_flood_merged.geojson").to_crs(25830)
    points = gpd.read_file(catarroja / "puntos.geojson").to_crs(25830)
    poles = points[points["power"] == "pole"]
    buildings = gpd.read_file(catarroja / "poligonos.geojson").to_crs(25830)
    buildings = buildings[buildings["building"].notna()]
    water = flood.union_all()
    shapely.prepare(water)  # (a large polygon: prepared, or the test takes a minute)
    flooded = buildings[shapely.intersects(water, buildings.geometry.values)]
    near_flooded = int((poles.distance(flooded.union_all()) <= 100).sum())
    near_any = int((poles.distance(buildings.union_all()) <= 100).sum())
    assert near_flooded < near_any  # "flooded" changes the answer
    orch = _orchestrator(store)
    for question, expected in (
        ("How many power poles in Catarroja stand within 100 m of a flooded building?", near_flooded),
        ("How many power poles in Catarroja stand within 100 m of a building?", near_any),
    ):
        record = orch.run(question)
        assert record.status == "answered", record.answer
        assert record.steps[0].tool == "get_features_at" and record.steps[0].args["place"] == "Catarroja"
        assert f": {expected} in total" in record.answer, (question, record.answer)
    # the share of a place's buildings has all of the place's buildings as its base
    share = orch.run("What share of Catarroja's building footprints intersect the EMSR773 observed flood extent?")
    assert f"{len(flooded):,} of {len(buildings):,} ({100 * len(flooded) / len(buildings):.1f} %)" in share.answer


def test_e2e_inside_and_outside_asked_together_are_both_computed(store):
    labels = gpd.read_file(data_dir() / "lahaina-2023/Maui_Wildfires_August_0.geojson")
    burn = gpd.read_file(data_dir() / "lahaina-2023/lahaina_burn_area.geojson").to_crs(labels.crs)
    damaged = labels[labels.astype(str).apply(lambda c: c.str.fullmatch("Damaged Building")).any(axis=1)]
    hit = damaged.intersects(burn.geometry.make_valid().union_all())
    record = _orchestrator(store).run(
        "How many of the labelled damaged buildings in Lahaina lie inside the 2023 burn area, and how many outside it?"
    )
    assert record.status == "answered", record.answer
    assert [s.tool for s in record.steps].count("count") == 2
    assert f"inside its hazard area: {int(hit.sum())} in total" in record.answer
    assert f"outside its hazard area: {int((~hit).sum())} in total" in record.answer


def test_e2e_a_named_area_of_the_catalogue_bounds_the_hazard(store):
    from pyproj import Geod

    flood = gpd.read_file(data_dir() / "valencia-2024/emsr773_observed_flood_merged.geojson").to_crs(4326)
    aoi03 = gpd.read_file(data_dir() / "valencia-2024/emsr773_aoi03_extent.geojson").to_crs(4326)
    part = flood.union_all().intersection(aoi03.union_all())
    km2 = abs(Geod(ellps="WGS84").geometry_area_perimeter(part)[0]) / 1e6
    record = _orchestrator(store).run(
        "What area of the EMSR773 observed flood extent falls within the Horta Sud area of interest (AOI03), in km²?"
    )
    assert record.status == "answered", record.answer
    assert [s.tool for s in record.steps] == ["load_layer", "load_event_layer", "clip", "measure"]
    assert f"area: {km2:.1f} km²" in record.answer


def test_e2e_terse_follow_ups_continue_the_disaster_and_narrow_the_kind(store):
    flood = gpd.read_file(data_dir() / "valencia-2024/emsr773_observed_flood_merged.geojson").to_crs(25830)
    health = gpd.read_file(data_dir() / "valencia-2024/valencia_city_health_facilities.geojson").to_crs(25830)
    distance = health.geometry.distance(flood.union_all())
    orch = _orchestrator(store)
    first = orch.run("Valencia city health facilities inside the DANA flood?")
    second = orch.run("Within 1 km of the flood?", previous=first)  # "the flood": the same one, not any flood
    third = orch.run("hospitals only?", previous=second)
    assert [r.status for r in (first, second, third)] == ["answered"] * 3
    assert second.follow_up_of == first.run_id and second.facts.event_id == 6
    hospitals = int(((distance <= 1000) & health["equipamien"].str.contains("HOSPITAL")).sum())
    for record, n, what in (
        (first, int((distance == 0).sum()), "healthcare"),
        (second, int((distance <= 1000).sum()), "healthcare"),
        (third, hospitals, "hospital"),
    ):
        assert f": {n} {what} features" in record.answer, record.answer


@pytest.mark.parametrize(
    "question,last_tool",
    [
        (
            "Palisades destroyed structures on a 250 m UTM 11N grid: number of occupied cells and max per cell?",
            "grid_counts",
        ),
        ("Grid the Palisades destroyed structures at 250 m and tell me the worst cell", "grid_counts"),
        ("palisades vs eaton, wich one destoryed more structures and whats the diference", "difference"),
        ("Palisades and Eaton: which destroyed more structures, and what is the gap between them?", "difference"),
        ("Km of drivable road in Catarroja inside the DANA flood?", "measure"),
        ("how do the structures inside the Eaton fire perimeter split across the damage categories?", "count"),
        ("Quel incendie a détruit le plus de structures, Palisades ou Eaton, et avec quel écart ?", "difference"),
        ("Bin the destroyed Palisades structures into 250-metre square cells; how many cells hold one?", "grid_counts"),
        ("Count Palisades destroyed homes per 500 m square.", "grid_counts"),
        ("Quantos edifícios danificados em Lahaina estão dentro da área queimada, e quantos estão fora dela?", "count"),
    ],
)
def test_paraphrases_the_suite_found_read_the_same_analysis(question, last_tool):
    steps = compile_specs(
        (d := spec_from_facts(prepass(question), layers=default_catalogue())).specs, difference=d.difference
    ).steps
    assert steps[-1].tool == last_tool
    if "fora dela" in question:  # inside and outside: both counted
        assert [s.tool for s in steps].count("count") == 2 and "outside" in [s.tool for s in steps]
    elif last_tool == "count":  # every damage class, grouped by it (not only "no damage" and "destroyed")
        assert (
            steps[-1].args["by"] == "damage_class"
            and len(next(s for s in steps if s.tool == "select_damage").args["damage_classes"]) == 5
        )


def test_a_question_that_says_yes_no_gets_a_yes_or_a_no():
    from geofaham_plugin.core.orchestrator.synthesis import asks_yes_no

    assert asks_yes_no("Catarroja fire station (Parc de Bombers) flooded by the DANA? yes/no")
    assert asks_yes_no("¿La estación quedó inundada? sí o no") and not asks_yes_no("How many schools flooded?")


def test_a_question_led_by_its_subject_or_a_french_inversion_is_a_yes_no_question():
    from geofaham_plugin.core.orchestrator.synthesis import asks_yes_no

    assert asks_yes_no("¿El parque de bomberos de Catarroja quedó dentro de la zona inundada por la DANA?")
    assert asks_yes_no("La caserne de pompiers de Catarroja était-elle dans la zone inondée ?")
    assert asks_yes_no("O quartel de bombeiros de Catarroja ficou dentro da zona inundada?")
    assert not asks_yes_no("¿Qué puentes de Catarroja estaban en la zona inundada?")
    assert not asks_yes_no("Les écoles de Catarroja : combien ont été inondées ?")
    # an English question that opens with "After ...", "As ...", "Other ...": not an article leading a subject
    assert not asks_yes_no("After the DANA flood, which schools in Catarroja are cut off from the fire station?")
    assert not asks_yes_no("As of today, which hospitals lie inside the Eaton fire perimeter?")


def test_e2e_bridges_open_to_vehicles_are_the_road_bridges_not_every_bridge(store):
    catarroja = data_dir() / "valencia-2024/osm-catarroja"
    flood = gpd.read_file(data_dir() / "valencia-2024/emsr773_observed_flood_merged.geojson").to_crs(25830)
    lines = gpd.read_file(catarroja / "lineas.geojson").to_crs(25830)
    bridges = lines[lines["highway"].notna() & lines["bridge"].notna() & (lines["bridge"] != "no")]
    water = flood.union_all()
    shapely.prepare(water)
    hit = bridges[shapely.intersects(water, bridges.geometry.values)]
    not_for_cars = {"footway", "path", "cycleway", "steps", "pedestrian", "bridleway", "construction"}
    drivable = hit[~hit["highway"].isin(not_for_cars)]
    assert 0 < len(drivable) < len(hit)  # "open to vehicles" changes the answer
    orch = _orchestrator(store)
    for question, expected in (
        ("Which Catarroja bridges open to vehicles were in the flooded area?", len(drivable)),
        ("¿Cuántos puentes de Catarroja abiertos al tráfico rodado quedaron en la zona inundada?", len(drivable)),
        ("How many bridges in Catarroja were in the flooded area?", len(hit)),
    ):
        record = orch.run(question)
        assert record.status == "answered", record.answer
        assert [v.value for v in record.structured.totals()] == [expected], (question, record.answer)
        assert ("select_kind" in [s.tool for s in record.steps]) == (expected == len(drivable)), question


def test_e2e_a_breakdown_said_loosely_groups_the_damage_by_structure_type(store):
    dins = gpd.read_file(data_dir() / EATON_DINS)
    destroyed = dins[dins["DAMAGE"] == "Destroyed (>50%)"]["STRUCTURETYPE"].value_counts()
    record = _orchestrator(store).run("Break the destroyed Eaton fire structures down, please")
    assert record.status == "answered", record.answer
    table = store.read_table(record.cited_artifacts[0])
    assert dict(zip(table.iloc[:, 0], table["count"], strict=True)) == destroyed.to_dict()
    assert "taken as by structure type" in record.answer  # the reading is said, not hidden


def test_examples_in_parentheses_filter_nothing_and_the_fire_names_no_hazard_area():
    breakdown = tools_for(
        "A breakdown of the structures the Palisades fire destroyed, grouped by kind of structure "
        "(single-family homes, mobile homes and so on), with a count for each."
    )
    assert breakdown == ["load_event_layer", "select_damage", "count"]  # no filter_values on the examples
    # "damaged by the fire ... inside the file's area": the area of interest, not the fire's hazard area
    question = "Quantas estruturas danificadas pelo incêndio de Palisades estão dentro da área do arquivo?"
    assert tools_for(question, aoi="a_0123abcd") == ["load_event_layer", "inside", "select_damage", "count"]


def test_a_bare_distance_is_read_as_within_and_the_answer_says_so():
    draft = spec_from_facts(prepass("Eaton fire hospitals, 5 km"), layers=default_catalogue())
    assert draft.specs[0].relation is not None and draft.specs[0].relation.kind == "within"
    assert any("taken as 'within 5,000 m'" in note for note in draft.specs[0].implied)
    said = spec_from_facts(prepass("hospitals within 5 km of the Eaton fire"), layers=default_catalogue())
    assert not any("taken as" in note for note in said.specs[0].implied)


def test_a_polite_request_is_no_yes_no_question():
    from geofaham_plugin.core.orchestrator.synthesis import asks_yes_no

    assert not asks_yes_no("Could you tell me how many buildings suffered any level of damage in the Eaton fire?")
    assert not asks_yes_no("¿Podría decirme cuántos edificios destruyó el incendio?")
    assert asks_yes_no("Can you tell me whether the fire station flooded?") and asks_yes_no("Could it be reached?")


def test_e2e_a_length_in_your_area_is_of_the_parts_inside_it(store):
    """Streets crossing the edge of your area count only their part inside (they were measured whole: 16.0 km of
    residential streets for 13.2 inside the Catarroja sketch)."""
    lines = gpd.read_file(data_dir() / "valencia-2024/osm-catarroja/lineas.geojson").to_crs(25830)
    area = gpd.GeoSeries([_sketch()], crs=4326).to_crs(25830).union_all()
    streets = lines[lines["highway"] == "residential"]
    inside_km = gpd.clip(streets, area).length.sum() / 1000
    whole_km = streets[streets.intersects(area)].length.sum() / 1000
    assert whole_km - inside_km > 1  # the cut makes a difference
    aoi = register_aoi(store, gpd.GeoDataFrame(geometry=[_sketch()], crs=4326))
    record = _orchestrator(store).run("Residential streets in my area: total length in km?", aoi_artifact_id=aoi.id)
    assert record.status == "answered", record.answer
    assert f"{inside_km:.1f} km" in record.answer and [s.tool for s in record.steps][-2] == "clip"


def _sketch():
    from bench.aoi_files import aoi_polygon

    return aoi_polygon("catarroja_east_sketch.geojson")
