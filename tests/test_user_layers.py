"""Your own layers: a vector file the user brings becomes a catalogue entry (user:<name>) beside the sample
layers, the pre-pass finds it named in a question, ``load_layer`` puts it into the Response Store, and the
CLI's ``ask --layer NAME=FILE`` builds the catalogue."""

from __future__ import annotations

import json

import geopandas as gpd
import pytest
from shapely.geometry import LineString, Point, Polygon

from geofaham_plugin.core import cli
from geofaham_plugin.core.agents import ToolContext, get_tool
from geofaham_plugin.core.config import settings_from_env
from geofaham_plugin.core.domain.layer_names import user_layer_aliases, word_forms
from geofaham_plugin.core.engines.layers import LayerCatalogue, UserLayer
from geofaham_plugin.core.errors import ToolFailed
from geofaham_plugin.core.llm import LLM, ScriptedModel
from geofaham_plugin.core.orchestrator.ledgers import StepStatus
from geofaham_plugin.core.orchestrator.orchestrator import Orchestrator, OrchestratorConfig
from geofaham_plugin.core.planning.prepass import prepass

INSIDE_EATON = (-118.10, 34.19)  # inside the Eaton fire perimeter (Altadena)
FAR_AWAY = (-117.0, 34.0)  # about 100 km east


def clinics() -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(
        {
            "name": ["Altadena field clinic", "Far clinic", "Pasadena post"],
            "status": ["open", "closed", "open"],
            "beds": [12, 4, 8],
            "note": [f"free text {i}" for i in range(3)],
        },
        geometry=[Point(*INSIDE_EATON), Point(*FAR_AWAY), Point(-118.14, 34.15)],
        crs=4326,
    )


@pytest.fixture()
def gpkg(tmp_path):
    """A GeoPackage with two layers: point clinics and polygon shelters zones (EPSG:3310, metres)."""
    path = tmp_path / "mine.gpkg"
    clinics().to_file(path, layer="field_clinics", driver="GPKG")
    zones = gpd.GeoDataFrame(
        {"zone": ["A", "B"], "capacity": [100, 250]},
        geometry=[Polygon([(0, 0), (1000, 0), (1000, 1000)]), Polygon([(2000, 0), (3000, 0), (3000, 900)])],
        crs=3310,
    )
    zones.to_file(path, layer="shelter_zones", driver="GPKG")
    return path


@pytest.fixture()
def catalogue(tmp_path, gpkg):
    c = LayerCatalogue()  # a catalogue of its own: the cached default one is never changed
    c.add_user_layer("Field clinics", gpkg, "field_clinics")
    return c


# ------------------------------------------------------------------------------------- catalogue
def test_a_geopackage_layer_becomes_a_user_entry_described_from_its_data(catalogue, gpkg):
    entry = catalogue.user_layers["user:field_clinics"]
    assert entry.role == "features" and entry.geometry == "point" and entry.crs == "EPSG:4326"
    assert entry.feature_count == 3 and entry.layer == "field_clinics" and entry.path == str(gpkg.resolve())
    assert entry.name_field == "name"
    fields = {f.name: f for f in entry.fields}
    assert fields["status"].type == "text" and fields["status"].values == ["closed", "open"]
    assert fields["beds"].type == "integer" and fields["beds"].values == [4, 8, 12]
    assert fields["note"].distinct == 3
    assert {"field clinics", "field clinic", "clinics", "clinic"} <= set(entry.aliases)
    # beside the sample layers, in the same object; the sample layers (the database's) are untouched
    assert catalogue.entry("user:field_clinics") is entry and "eaton_perimeter" in catalogue.layers
    assert not any(i.startswith("user:") for i in catalogue.layers)

    zones = catalogue.add_user_layer("shelter zones", gpkg, "shelter_zones")
    assert zones.id == "user:shelter_zones" and zones.role == "area" and zones.geometry == "polygon"
    assert zones.crs == "EPSG:3310" and zones.name_field is None
    assert {f.name: f.values for f in zones.fields} == {"zone": ["A", "B"], "capacity": [100, 250]}


def test_geojson_and_csv_with_wkt(tmp_path):
    c = LayerCatalogue(tmp_path)
    roads = tmp_path / "roads.geojson"
    gpd.GeoDataFrame(
        {"road_name": ["Lake Ave", "Fair Oaks"], "kind": ["primary", "primary"]},
        geometry=[LineString([(-118.13, 34.15), (-118.13, 34.2)]), LineString([(-118.15, 34.15), (-118.15, 34.2)])],
        crs=4326,
    ).to_file(roads)
    entry = c.add_user_layer("evacuation_routes", roads)
    assert entry.role == "features" and entry.geometry == "line" and entry.layer is None
    assert entry.name_field == "road_name" and entry.limitations == []
    csv = tmp_path / "wells.csv"
    csv.write_text('id,WKT,depth\n1,"POINT (-118.1 34.2)",12.5\n2,"POINT (-118.2 34.3)",30\n', encoding="utf-8")
    wells = c.add_user_layer("water wells", csv)
    assert wells.id == "user:water_wells" and wells.geometry == "point" and wells.feature_count == 2
    assert {f.name: f.type for f in wells.fields} == {"id": "integer", "depth": "real"}  # types detected
    assert any("names no CRS" in n for n in wells.limitations)  # read as EPSG:4326, and said so
    # the same name from another file gets its own id; the same file again replaces the entry
    again = c.add_user_layer("water wells", csv)
    other = c.add_user_layer("Water-Wells", roads)
    assert again.id == "user:water_wells" and other.id == "user:water_wells_2"


@pytest.mark.parametrize(
    ("path", "layer", "message", "hint"),
    [
        ("missing.gpkg", None, "no such file", "GeoPackage"),
        ("mine.gpkg", None, "holds 2 layers", "field_clinics, shelter_zones"),
        ("mine.gpkg", "roads", "has no layer 'roads'", "field_clinics"),
        ("notes.txt", None, "cannot read notes.txt as a vector layer", "GeoPackage"),
        ("table.csv", None, "has no geometry", "WKT column"),
    ],
)
def test_unreadable_files_are_one_clear_tool_failure(tmp_path, gpkg, path, layer, message, hint):
    (tmp_path / "notes.txt").write_text("not a layer\n", encoding="utf-8")
    (tmp_path / "table.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(ToolFailed) as err:
        LayerCatalogue(tmp_path).add_user_layer("x", tmp_path / path, layer)
    assert message in str(err.value) and "\n" not in str(err.value) and hint in (err.value.hint or "")


def test_aliases_and_word_forms():
    assert word_forms("clinics") == ["clinics", "clinic"] and word_forms("facility") == ["facility", "facilities"]
    assert word_forms("churches") == ["churches", "church"] and word_forms("status") == ["status", "statuses"]
    assert user_layer_aliases("MyFieldClinics_2024")[:3] == ["my field clinics 2024", "field clinics", "field clinic"]
    assert "points" not in user_layer_aliases("water points")  # too general to name a layer alone
    assert user_layer_aliases("Schools")[:2] == ["colegios", "escuelas"]  # longest first
    # the same noun in Spanish, French and Portuguese (core/data/layer_nouns.json)
    assert {"escuelas", "ecoles", "escolas", "colegio"} <= set(user_layer_aliases("Schools"))
    assert "albergues" in user_layer_aliases("shelters") and "shelters" in user_layer_aliases("albergues")
    assert not set(user_layer_aliases("water points")) & {"points", "puntos"}


# -------------------------------------------------------------------------------------- pre-pass
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which of my field clinics are within 2 km of the Eaton fire perimeter?", ["user:field_clinics"]),
        ("Is the Field Clinic at Altadena inside the burn area?", ["user:field_clinics"]),
        ("How many clinics do I have in the Eaton fire?", ["user:field_clinics"]),
        ('Count the features of "field_clinics" by status', ["user:field_clinics"]),
        ("Buffer layer user:field_clinics by 500 m", ["user:field_clinics"]),
        ("Which field clinics lie in my shelter zone?", ["user:field_clinics", "user:shelter_zones"]),
        ("Which hospitals are within 5 km of the Eaton fire perimeter?", []),
        ("How many buildings were destroyed in the Palisades fire?", []),
        ("Which fields of the zoning layer are affected?", []),
    ],
)
def test_the_prepass_finds_the_users_layers_named_in_a_question(catalogue, gpkg, question, expected):
    catalogue.add_user_layer("shelter zones", gpkg, "shelter_zones")
    assert prepass(question, layers=catalogue).layers == expected
    # a list of entries does as well as the catalogue
    assert prepass(question, layers=list(catalogue.user_layers.values())).layers == expected


def test_a_named_layer_is_no_feature_class_and_other_facts_stay(catalogue):
    question = "Which of my field clinics are within 2 km of the Eaton fire perimeter?"
    facts = prepass(question, layers=catalogue)
    assert facts.event_id == 11 and facts.distances_m == [2000.0] and facts.layers == ["user:field_clinics"]
    assert facts.target_entities == []  # the clinics are the user's layer, not OpenStreetMap's
    # without user layers the pre-pass reads the same question as before
    plain = prepass(question)
    assert plain.layers == [] and plain.target_entities == ["healthcare"]
    assert plain.model_dump(exclude={"target_entities"}) == facts.model_dump(exclude={"target_entities", "layers"}) | {
        "layers": []
    }


def test_questions_without_user_layers_read_as_before(catalogue):
    for question in (
        "Which hospitals are within 5 km of the Eaton fire perimeter?",
        "How many buildings were destroyed in the Palisades fire on January 9, 2025 by structure type?",
        "Show the flooded area in Catarroja before and after the October 2024 floods",
    ):
        assert prepass(question, layers=catalogue) == prepass(question)
        assert prepass(question, layers=[]) == prepass(question)


# ------------------------------------------------------------------------------------ load_layer
def test_load_layer_registers_a_user_layer_in_the_response_store(store, catalogue):
    ctx = ToolContext(store=store, layers=catalogue, settings=settings_from_env({}))
    record = get_tool("load_layer").run(ctx, {"layer_id": "user:field_clinics"}, {})
    assert record.kind.value == "vector" and record.metadata.feature_count == 3
    assert record.source == "vector.load_layer:user:field_clinics" and "Field clinics" in record.summary
    extra = record.extra
    assert extra["layer_id"] == "user:field_clinics" and extra["role"] == "features"
    assert extra["name_field"] == "name" and "field_clinics" in extra["attribution"]
    assert {f["name"] for f in extra["fields"]} == {"name", "status", "beds", "note"}
    assert store.read_vector(record.id)["name"].tolist()[0] == "Altadena field clinic"
    # a sample layer loads by id too
    sample = get_tool("load_layer").run(ctx, {"layer_id": "eaton_perimeter"}, {})
    assert sample.extra["role"] == "hazard" and sample.metadata.feature_count >= 1


def test_load_layer_with_an_unknown_id_says_which_ids_exist(store, catalogue):
    ctx = ToolContext(store=store, layers=catalogue, settings=settings_from_env({}))
    with pytest.raises(ToolFailed) as err:
        get_tool("load_layer").run(ctx, {"layer_id": "user:clinics"}, {})
    assert str(err.value) == "no layer 'user:clinics' in the layer catalogue"
    assert "user layers: user:field_clinics" in err.value.hint and len(store) == 0


CLINICS_PLAN = {
    "ledger": {"intent": "user clinics near the Eaton fire", "disaster_event_id": 11},
    "plan": {
        "steps": [
            {
                "id": 1,
                "agent": "vector",
                "goal": "load the user's field clinics",
                "tool": "load_layer",
                "args": {"layer_id": "user:field_clinics"},
                "expected_output": "vector",
            },
            {
                "id": 2,
                "agent": "vector",
                "goal": "load the Eaton perimeter",
                "tool": "load_event_layer",
                "args": {"event_id": 11, "role": "hazard"},
                "expected_output": "vector",
            },
            {
                "id": 3,
                "agent": "vector",
                "goal": "clinics within 2 km",
                "tool": "within_distance",
                "args": {"distance_m": 2000},
                "inputs": {"features": "step:1", "reference": "step:2"},
                "expected_output": "vector",
            },
        ]
    },
}


def test_an_orchestrated_plan_loads_the_users_layer(store, catalogue):
    question = "Which of my field clinics are within 2 km of the Eaton fire perimeter?"
    plan = CLINICS_PLAN
    orch = Orchestrator(
        store, LLM(ScriptedModel({"planner": [plan]})), config=OrchestratorConfig(mode="free"), layers=catalogue
    )
    record = orch.run(question)
    assert record.facts is not None and record.facts.layers == ["user:field_clinics"]
    assert record.status == "answered", record.answer
    loaded = next(s for s in record.steps if s.tool == "load_layer")
    assert loaded.status is StepStatus.done and store.get(loaded.artifact_id).extra["layer_id"] == "user:field_clinics"
    final = store.read_vector(record.cited_artifacts[0])
    assert final["name"].tolist() == ["Altadena field clinic"]  # the one inside; the far clinic is not


# -------------------------------------------------------------------------------------------- CLI
def test_parse_layer_argument(gpkg, tmp_path):
    assert cli.parse_layer_argument(f"field clinics={gpkg}") == ("field clinics", gpkg, None)
    assert cli.parse_layer_argument(f"zones = {gpkg}:shelter_zones") == ("zones", gpkg, "shelter_zones")
    colon = tmp_path / "a:b.geojson"  # a path holding a colon is still a file
    clinics().to_file(colon)
    assert cli.parse_layer_argument(f"x={colon}") == ("x", colon, None)
    for bad in ("clinics.gpkg", "=clinics.gpkg", "clinics="):
        with pytest.raises(cli.LayerArgumentError):
            cli.parse_layer_argument(bad)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("clinics.gpkg", "is not NAME=FILE (hint: write --layer"),
        ("clinics={tmp}/nope.gpkg", "error: --layer: no such file"),
        ("clinics={gpkg}", "holds 2 layers; say which one to read (hint: its layers: field_clinics, shelter_zones)"),
        ("clinics={gpkg}:roads", "has no layer 'roads'"),
    ],
)
def test_ask_with_a_bad_layer_is_one_line_and_exit_2(tmp_path, gpkg, capsys, value, expected):
    value = value.format(tmp=tmp_path, gpkg=gpkg)
    session = tmp_path / "s"
    assert cli.main(["ask", "How many clinics?", "--layer", value, "--session", str(session)]) == 2
    err = capsys.readouterr().err
    assert expected in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not session.exists()  # nothing was started


def test_ask_with_layers_answers_from_the_users_layer(tmp_path, gpkg, capsys, monkeypatch):
    """The --layer files reach the orchestrator's catalogue: the pre-pass names them and load_layer reads them."""
    import geofaham_plugin.core.llm as llm_module

    def script(role, messages, schema):  # the plan; then the answer's phrasing, refused: the findings stand
        return "not an answer" if "Findings:" in messages[-1].content else CLINICS_PLAN

    monkeypatch.setattr(llm_module, "build_llm", lambda settings: LLM(ScriptedModel(script)))
    session = tmp_path / "s"
    question = "Which of my field clinics are within 2 km of the Eaton fire perimeter?"
    args = ["ask", question, "--json", "--session", str(session), "--mode", "free"]
    code = cli.main([*args, "--layer", f"field clinics={gpkg}:field_clinics", "--layer", f"zones={gpkg}:shelter_zones"])
    captured = capsys.readouterr()
    assert captured.out, captured.err
    out = json.loads(captured.out)
    assert code == 0 and "Altadena field clinic" in out["answer"] and "Far clinic" not in out["answer"]
    record = json.loads((session / "runs" / f"{out['run_id']}.json").read_text())
    assert record["facts"]["layers"] == ["user:field_clinics"]
    assert [s["tool"] for s in record["steps"]] == ["load_layer", "load_event_layer", "within_distance"]


def test_user_entries_are_plain_data():
    entry = UserLayer(
        id="user:x", name="x", path="/x.gpkg", role="area", geometry="polygon", crs="EPSG:4326", feature_count=1
    )
    assert UserLayer.model_validate_json(entry.model_dump_json()) == entry
