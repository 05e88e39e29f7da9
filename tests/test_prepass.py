"""The deterministic question pre-pass: event table and the facts read from questions by code."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from geofaham_plugin.core.domain.damage import DamageClass
from geofaham_plugin.core.domain.events import get_event, load_events, load_gazetteer
from geofaham_plugin.core.planning.facts import PrepassFacts
from geofaham_plugin.core.planning.prepass import (
    DAMAGE_RE,
    DAMAGE_TYPO_FORMS,
    DEFAULT_POST_DAYS,
    DEFAULT_PRE_DAYS,
    TYPE_TYPO_FORMS,
    closest_word,
    edit_distance,
    extract_dates,
    extract_distances,
    extract_types,
    normalise,
    prepass,
    typo_vocabulary,
)

ANY = ["affected", "minor", "major", "destroyed"]
FIRES = [11, 14, 13, 12, 16]  # fire events, latest first (Eaton and the Palisades snapshots, then Lahaina)
EMPTY = PrepassFacts(question="").model_dump(mode="json", exclude={"question"})


def window(start: str, end: str, label: str) -> dict[str, str]:
    return {"start": start, "end": end, "label": label}


# question -> every fact that is not empty (all others must stay empty); JSON form: dates are ISO strings.
CASES: list[tuple[str, dict]] = [
    (
        "Which hospitals are within 5 km of the Eaton fire perimeter?",
        {"event_id": 11, "event_candidates": FIRES, "distances_m": [5000.0], "target_entities": ["healthcare"]},
    ),
    (
        "How many buildings were destroyed in the Palisades fire on January 9, 2025?",
        {
            "event_id": 13,
            "event_candidates": [13, 14, 12, 11, 16],
            "dates": ["2025-01-09"],
            "damage_classes": ["destroyed"],
            "target_entities": ["buildings"],
            "wants_count": True,
        },
    ),
    (
        "Palisades fire damage on 2025-01-08",
        {"event_id": 12, "event_candidates": [12, 14, 13, 11, 16], "dates": ["2025-01-08"], "damage_classes": ANY},
    ),
    ("the Palisades", {"event_id": 14, "event_candidates": [14, 13, 12]}),
    (
        "Show damaged buildings from the Maui wildfire",
        {
            "event_id": 16,
            "event_candidates": [16, 11, 14, 13, 12],
            "damage_classes": ANY,
            "target_entities": ["buildings"],
            "places": ["Maui"],
        },
    ),
    (
        "Hurricane Melissa in Montego Bay: destroyed homes within 500 m of the coast",
        {
            "event_id": 3,
            "event_candidates": [3, 2, 7],
            "distances_m": [500.0],
            "damage_classes": ["destroyed"],
            "target_entities": ["buildings"],
            "places": ["Montego Bay"],
        },
    ),
    (
        "Top 10 schools near Black River",  # "River" is part of a place name, not a waterway
        {"event_id": 2, "event_candidates": [2], "k": 10, "target_entities": ["education"], "places": ["Black River"]},
    ),
    (
        "Hurricane Melissa damage in Jamaica",  # two Melissa records and no place to decide
        {"event_candidates": [3, 2, 7], "damage_classes": ANY, "places": ["Jamaica"]},
    ),
    (
        "DANA floods in Valencia: schools within 1.5 kilometers of the flood extent",
        {
            "event_id": 6,
            "event_candidates": [6, 17, 8, 4, 10, 9],
            "distances_m": [1500.0],
            "target_entities": ["education"],
            "places": ["Valencia"],
        },
    ),
    (
        "Bridges in Paiporta within 300 metres of the river",
        {
            "event_id": 6,
            "event_candidates": [6],
            "distances_m": [300.0],
            "target_entities": ["bridges", "waterways"],
            "places": ["Paiporta"],
        },
    ),
    (
        "Which is the nearest hospital to Paiporta?",
        {"event_id": 6, "event_candidates": [6], "k": 1, "target_entities": ["healthcare"], "places": ["Paiporta"]},
    ),
    (
        "Roads inside the Lahaina 2023 burn area",
        {
            "event_id": 16,
            "event_candidates": FIRES[-1:] + FIRES[:-1],
            "target_entities": ["roads"],
            "places": ["Lahaina"],
        },
    ),
    (
        "The Mandalay earthquake: 3 nearest hospitals",
        {"event_id": 15, "event_candidates": [15], "k": 3, "target_entities": ["healthcare"], "places": ["Mandalay"]},
    ),
    (
        "Burma quake: heavily damaged buildings",
        {
            "event_id": 15,
            "event_candidates": [15],
            "damage_classes": ["major", "destroyed"],
            "target_entities": ["buildings"],
            "places": ["Myanmar"],
        },
    ),
    (
        "St. Louis tornado: damaged houses within 2 miles",
        {
            "event_id": 1,
            "event_candidates": [1],
            "distances_m": [3218.688],
            "damage_classes": ANY,
            "target_entities": ["buildings"],
            "places": ["Saint Louis"],
        },
    ),
    (
        "Cyclone Chido: where are the shelters?",
        {"event_id": 5, "event_candidates": [5, 17, 8], "target_entities": ["shelters"]},
    ),
    (
        "Porto Alegre floods: which roads and bridges were flooded?",
        {
            "event_id": 4,
            "event_candidates": [4, 17, 8, 6, 10, 9],
            "target_entities": ["roads", "bridges"],
            "places": ["Porto Alegre"],
        },
    ),
    (
        "Minor damage in Busia, Kenya, within 300 metres of the canal",
        {
            "event_id": 10,
            "event_candidates": [10, 9],
            "distances_m": [300.0],
            "damage_classes": ["minor"],
            "target_entities": ["waterways"],
            "places": ["Busia", "Kenya"],
        },
    ),
    (
        "Altadena buildings that were not destroyed",
        {
            "event_id": 11,
            "event_candidates": [11],
            "damage_classes": ["none", "affected", "minor", "major"],
            "target_entities": ["buildings"],
            "places": ["Altadena"],
        },
    ),
    (
        "Buildings that were not damaged in the Eaton fire",
        {"event_id": 11, "event_candidates": FIRES, "damage_classes": ["none"], "target_entities": ["buildings"]},
    ),
    (
        "Severely damaged or intact homes in Altadena",
        {
            "event_id": 11,
            "event_candidates": [11],
            "damage_classes": ["major", "destroyed", "none"],
            "target_entities": ["buildings"],
            "places": ["Altadena"],
        },
    ),
    (
        "The five closest fire stations to Pasadena",  # "fire station" is no fire
        {
            "event_id": 11,
            "event_candidates": [11],
            "k": 5,
            "target_entities": ["emergency_services"],
            "places": ["Pasadena"],
        },
    ),
    (
        "Satellite imagery two weeks before the Eaton fire",
        {"event_id": 11, "event_candidates": FIRES, "windows": [window("2024-12-27", "2025-01-09", "pre")]},
    ),
    (
        "Sentinel-2 imagery a month after the Lahaina fire",
        {
            "event_id": 16,
            "event_candidates": FIRES[-1:] + FIRES[:-1],
            "windows": [window("2023-08-08", "2023-09-07", "post")],
            "places": ["Lahaina"],
        },
    ),
    (
        "Before and after imagery of the Palisades fire",  # defaults around the latest snapshot (2025-01-10)
        {
            "event_id": 14,
            "event_candidates": [14, 13, 12, 11, 16],
            "windows": [window("2024-12-11", "2025-01-09", "pre"), window("2025-01-10", "2025-02-09", "post")],
        },
    ),
    (
        "Eaton fire imagery two weeks before and after",
        {
            "event_id": 11,
            "event_candidates": FIRES,
            "windows": [window("2024-12-27", "2025-01-09", "pre"), window("2025-01-10", "2025-01-24", "post")],
        },
    ),
    (
        "Eaton fire imagery the week before and a fortnight after",
        {
            "event_id": 11,
            "event_candidates": FIRES,
            "windows": [window("2025-01-03", "2025-01-09", "pre"), window("2025-01-10", "2025-01-24", "post")],
        },
    ),
    (
        "Colombo floods after Cyclone Ditwah: pre-event and post-event imagery",
        {
            "event_id": 17,
            "event_candidates": [17, 8, 5, 6, 4, 10, 9],
            "places": ["Colombo"],
            "windows": [window("2025-10-31", "2025-11-29", "pre"), window("2025-11-30", "2025-12-30", "post")],
        },
    ),
    (
        "Nairobi flood extent 30 days after, by damage class",
        {
            "event_id": 9,
            "event_candidates": [9, 17, 8, 6, 4, 10],
            "places": ["Nairobi"],
            "group_by": "damage class",
            "windows": [window("2024-05-01", "2024-05-31", "post")],
        },
    ),
    (
        "How many structures were destroyed by structure type in the Palisades fire?",
        {
            "event_id": 14,
            "event_candidates": [14, 13, 12, 11, 16],
            "damage_classes": ["destroyed"],
            "target_entities": ["buildings"],
            "wants_count": True,
            "group_by": "structure type",
        },
    ),
    (
        "Number of clinics per neighbourhood in Valencia",
        {
            "event_id": 6,
            "event_candidates": [6],
            "target_entities": ["healthcare"],
            "places": ["Valencia"],
            "wants_count": True,
            "group_by": "neighbourhood",
        },
    ),
    (
        "Count water towers, substations and cell towers in Aceh after Cyclone Senyar",
        {
            "event_id": 8,
            "event_candidates": [8, 17, 5],
            "windows": [window("2025-11-29", "2025-12-29", "post")],
            "target_entities": ["water", "power", "telecom"],
            "places": ["Aceh"],
            "wants_count": True,
        },
    ),
    (
        "Buildings in Pacific Palisades affected by the fire, by damage class",  # "affected by" is no class
        {
            "event_id": 14,
            "event_candidates": [14, 13, 12, 11, 16],
            "target_entities": ["buildings"],
            "places": ["Pacific Palisades"],
            "group_by": "damage class",
        },
    ),
    (
        "How many buildings were destroyed within 2 km of the river?",  # no event named
        {
            "distances_m": [2000.0],
            "damage_classes": ["destroyed"],
            "target_entities": ["buildings", "waterways"],
            "wants_count": True,
        },
    ),
    ("Los Angeles fire", {"event_candidates": FIRES, "places": ["Los Angeles"]}),  # Eaton or Palisades
    ("Where did the earthquake hit?", {"event_candidates": [15]}),  # a type alone names no event
    (
        "What happened between 2025-01-01 and 2025-01-20 near the fire?",
        {
            "event_candidates": FIRES,
            "dates": ["2025-01-01", "2025-01-20"],
            "windows": [window("2025-01-01", "2025-01-20", "explicit")],
        },
    ),
    (
        "Buffers of a mile, half a kilometre, 1,000 m and 1.5 kilometers around a 10 km2 area",
        {"distances_m": [1609.344, 500.0, 1000.0, 1500.0]},
    ),
]


@pytest.mark.parametrize(("question", "expected"), CASES, ids=[q[:60] for q, _ in CASES])
def test_prepass_resolves_exact_facts(question: str, expected: dict) -> None:
    facts = prepass(question)
    assert facts.question == question
    assert facts.model_dump(mode="json", exclude={"question"}) == EMPTY | expected


def test_event_table_has_the_17_bench_records() -> None:
    events = load_events()
    assert [e.id for e in events] == list(range(1, 18))
    table = {e.id: (e.type, e.place, e.country, e.event_date.isoformat(), e.available_data) for e in events}
    assert table[1] == ("tornado", "Saint Louis", "USA", "2025-05-16", ["building damage"])
    assert table[6] == ("flood", "Valencia", "Spain", "2024-10-31", ["flood map"])
    assert table[8] == ("cyclone", "Aceh", "Indonesia", "2025-11-29", ["building damage", "flood map"])
    assert table[17] == ("cyclone", "Colombo", "Sri Lanka", "2025-11-30", ["building damage", "flood map"])
    assert [(e.name, e.event_date.day) for e in events if e.id in (12, 13, 14)] == [
        ("Palisades Fire", 8),
        ("Palisades Fire", 9),
        ("Palisades Fire", 10),
    ]
    for event in events:
        assert event.aliases and all(a == a.lower() for a in event.aliases)
        minx, miny, maxx, maxy = event.bbox_4326
        assert -180 <= minx < maxx <= 180 and -90 <= miny < maxy <= 90
    assert {"eaton", "altadena", "pasadena"} <= set(get_event(11).aliases)
    assert {"valencia", "dana", "paiporta", "catarroja", "horta sud", "emsr773"} <= set(get_event(6).aliases)
    assert get_event(99) is None
    assert load_gazetteer()["st. louis"] == "Saint Louis"


def test_every_record_is_found_by_its_own_name() -> None:
    for event in load_events():
        expected = 14 if event.name == "Palisades Fire" else event.id  # the latest snapshot by default
        assert prepass(f"Damage of the {event.name}").event_id == expected, event.name


def test_event_table_copies_are_independent() -> None:
    load_events()[0].aliases.append("mutated")
    assert "mutated" not in get_event(1).aliases


def test_prepass_against_a_given_event_list() -> None:
    eaton = get_event(11)
    assert prepass("Lahaina fire", events=[eaton]).model_dump(exclude={"question"}) == (
        PrepassFacts(question="", event_candidates=[11]).model_dump(exclude={"question"})
    )
    assert prepass("Altadena", events=[eaton]).places == ["Altadena"]


def test_default_windows_use_the_documented_constants() -> None:
    facts = prepass("pre- and post-event imagery for Lahaina")
    event_date = get_event(16).event_date
    assert [(w.label, w.start, w.end) for w in facts.windows] == [
        ("pre", event_date - timedelta(days=DEFAULT_PRE_DAYS), event_date - timedelta(days=1)),
        ("post", event_date, event_date + timedelta(days=DEFAULT_POST_DAYS)),
    ]


def test_windows_need_a_resolved_event() -> None:
    assert prepass("imagery two weeks before the fire").windows == []


@pytest.mark.parametrize(
    ("text", "metres"),
    [
        ("5km", [5000.0]),
        ("500m buffer", [500.0]),
        ("within a mile", [1609.344]),
        ("300 metres", [300.0]),
        ("half a kilometre", [500.0]),
        ("a quarter mile", [402.336]),
        ("100 ft", [30.48]),
        ("two miles", [3218.688]),
        ("10-km radius", [10000.0]),
        ("2 km² and 3 km2", []),
        ("3 months, 5 min, 10 am", []),
    ],
)
def test_distances(text: str, metres: list[float]) -> None:
    assert extract_distances(normalise(text)) == metres


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("2025-01-07", [date(2025, 1, 7)]),
        ("January 7, 2025", [date(2025, 1, 7)]),
        ("7 January 2025", [date(2025, 1, 7)]),
        ("Jan 7 2025", [date(2025, 1, 7)]),
        ("Jan. 7th, 2025 and 8th of January 2025", [date(2025, 1, 7), date(2025, 1, 8)]),
        ("7/1/2025", []),
        ("2025-02-30", []),  # ambiguous numeric forms and impossible dates are not read
    ],
)
def test_dates(text: str, dates: list[date]) -> None:
    assert [d for d, _ in extract_dates(normalise(text))] == dates


@pytest.mark.parametrize(
    ("text", "k"),
    [
        ("3 nearest shelters", 3),
        ("five closest clinics", 5),
        ("top 10 schools", 10),
        ("the nearest hospital", 1),
        ("the nearest 4 schools", 4),
        ("nearest hospitals within 2 km", None),
    ],
)
def test_k(text: str, k: int | None) -> None:
    assert prepass(text).k == k


@pytest.mark.parametrize(
    ("text", "entities"),
    [
        ("pharmacies and universities", ["healthcare", "education"]),
        ("a health facility", ["healthcare"]),
        ("police and shelters", ["emergency_services", "shelters"]),
        ("streets, highways and bridges", ["roads", "bridges"]),
        ("power lines and a water treatment plant", ["power", "water"]),
        ("cell towers", ["telecom"]),
        ("streams and canals", ["waterways"]),
        ("nursing homes", ["healthcare"]),
        ("houses and homes", ["buildings"]),
    ],
)
def test_target_entities(text: str, entities: list[str]) -> None:
    assert prepass(f"Show {text}").target_entities == entities


@pytest.mark.parametrize(
    ("text", "group_by"),
    [
        ("by structure type", "structure type"),
        ("per building category", "structure category"),
        ("per neighbourhood", "neighbourhood"),
        ("by neighborhood", "neighbourhood"),
        ("by damage class", "damage class"),
        ("for each city", "city"),
        ("by community", "community"),
        ("destroyed by the fire", None),
        ("divididas por classe de dano", "damage class"),
        ("por clase de daño", "damage class"),
        ("par niveau de dommages", "damage class"),
        ("por tipo de estructura", "structure type"),
        ("par type de bâtiment", "structure type"),
    ],
)
def test_group_by(text: str, group_by: str | None) -> None:
    assert prepass(f"Count buildings {text}").group_by == group_by


@pytest.mark.parametrize(
    ("text", "classes"),
    [
        ("destroyed", [DamageClass.destroyed]),
        ("damaged", ANY),
        ("any damage", ANY),
        ("not destroyed", ["none", "affected", "minor", "major"]),
        ("weren't destroyed", ["none", "affected", "minor", "major"]),
        ("major damage", ["major"]),  # the DINS grade by its name
        ("severe damage", ["major", "destroyed"]),
        ("minor damage", ["minor"]),
        ("classed as affected", ["affected"]),
        ("undamaged", ["none"]),
        ("no damage", ["none"]),
        ("damaged or destroyed", ANY),
        ("destroyed or damaged", ["destroyed", "affected", "minor", "major"]),
        ("damage assessment", []),
        ("dano grave (26-50%)", ["major"]),  # the grade's percentages say which grade, whatever the word
        ("minor (10-25%) or major (26-50%) damage", ["minor", "major"]),
        ("destroyed (>50%)", ["destroyed"]),
    ],
)
def test_damage_classes(text: str, classes: list[str]) -> None:
    assert prepass(text).damage_classes == [DamageClass(c) for c in classes]


@pytest.mark.parametrize(
    "question, entities, damage, count",
    [
        ("¿Cuántos hospitales hay a menos de 5 km del incendio de Eaton?", ["healthcare"], [], True),
        ("¿Cuántos edificios fueron destruidos por el incendio de Palisades?", ["buildings"], ["destroyed"], True),
        ("Combien de bâtiments ont été détruits dans l'incendie d'Eaton ?", ["buildings"], ["destroyed"], True),
        ("Quels hôpitaux se trouvent à moins de 2 km du périmètre de l'incendie d'Eaton ?", ["healthcare"], [], False),
        ("Quantas escolas estão dentro da área inundada em Valência?", ["education"], [], True),
        (
            "Quantos edifícios danificados há em Lahaina?",
            ["buildings"],
            ["affected", "minor", "major", "destroyed"],
            True,
        ),
        ("¿Qué puentes están en la zona inundada de Valencia?", ["bridges"], [], False),
        ("Combien d'écoles et de pharmacies près du fleuve ?", ["education", "healthcare", "waterways"], [], True),
        ("Edificios sin daños en Lahaina", ["buildings"], ["none"], False),
    ],
)
def test_spanish_french_and_portuguese_words(question, entities, damage, count):
    facts = prepass(question)
    assert sorted(facts.target_entities) == sorted(entities)
    assert [c.value for c in facts.damage_classes] == damage
    assert facts.wants_count is count


# -- typos, damage verbs and count words in four languages


@pytest.mark.parametrize(
    ("question", "facts"),
    [
        (
            "need hosptials less then 5km away from the eaton fire perimiter, names + distnace pls",
            {"target_entities": ["healthcare"], "event_id": 11, "damage_classes": [], "wants_count": False},
        ),
        ("how many strucutres did the palisades fire destroy", {"target_entities": ["buildings"], "event_id": 14}),
        ("catarroja brigdes that cars can cross", {"target_entities": ["bridges"], "event_id": 6}),
        ("eaton fire - total of damged bildings?", {"target_entities": ["buildings"], "damage_classes": ANY}),
        ("how many destoryed homes in altadena", {"damage_classes": ["destroyed"], "target_entities": ["buildings"]}),
        ("did the flood reach the fire staton?", {"target_entities": ["emergency_services"]}),
        ("shleters near Porto Alegre", {"target_entities": ["shelters"], "event_id": 4}),
        ("damaged buildings in altadna", {"event_id": 11, "places": ["Altadena"]}),
        ("the palisdes fire", {"event_id": 14}),
        ("¿Cuántas esceulas hay en Valencia?", {"target_entities": ["education"], "wants_count": True}),
        ("hospitalles cerca del incendio de Eaton", {"target_entities": ["healthcare"], "event_id": 11}),
        (
            "Combien de batimens détruits à Lahaina ?",
            {"target_entities": ["buildings"], "damage_classes": ["destroyed"]},
        ),
        ("Quelle pharmacei près de Lahaina ?", {"target_entities": ["healthcare"], "event_id": 16}),
        ("Quantos edificos destruídos em Lahaina?", {"target_entities": ["buildings"], "wants_count": True}),
        ("Quantas escloas inundadas em Porto Alegre?", {"target_entities": ["education"], "event_id": 4}),
    ],
)
def test_typos_are_read_as_the_vocabulary_word(question: str, facts: dict) -> None:
    found = prepass(question)
    assert found.corrections, "a correction is recorded"
    assert {k: v for k, v in found.model_dump(mode="json").items() if k in facts} == facts


def test_corrections_say_what_was_read() -> None:
    assert prepass("eaton fire - total of damged bildings?").corrections == {
        "damged": "damaged",
        "bildings": "buildings",
    }
    assert prepass("did the dana flood reach catarrojas fire staton?").corrections == {
        "catarrojas": "catarroja",
        "staton": "station",
    }


@pytest.mark.parametrize(
    "word",
    [
        "hostels",  # no hostel is a class word
        "schooling",
        "policies",  # one letter from "polices" (police)
        "policy",
        "shelf",  # too short to be read as a typo
        "horses",  # one letter from "houses"
        "called",  # from "calles"
        "situation",  # two from "station"
        "detroit",  # from "detruit"
        "granada",  # from Grenada
        "violencia",  # from Valencia
        "canoes",  # from Canoas
        "rivera",  # from "rivers"
        "healthy",
        "supplied",  # "water supplied" is no "water supply"
        "destructive",
    ],
)
def test_real_words_are_not_corrected(word: str) -> None:
    facts = prepass(f"show me the {word} and the water {word} please")
    assert facts.corrections == {}
    assert (facts.target_entities, facts.damage_classes, facts.places, facts.event_candidates) == ([], [], [], [])


def test_no_guess_without_a_unique_closest_word() -> None:
    vocabulary = typo_vocabulary(load_events())
    assert closest_word("hosptials", vocabulary) == "hospitals"
    assert closest_word("hospitals", vocabulary) is None  # exact: nothing to correct
    assert closest_word("clinic", vocabulary) is None
    assert closest_word("ospital", vocabulary) is None  # the first letter must be right
    assert closest_word("hsopital", vocabulary) == "hospital"  # ... or swapped with the second
    assert closest_word("hpsptials", vocabulary) == "hospitals"  # two edits for 9 letters or more
    assert closest_word("hpsptial", vocabulary) is None  # one for 6 to 8
    assert closest_word("hosptl", vocabulary) is None


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("hospitals", "hospitals", 0),
        ("hosptials", "hospitals", 1),  # a transposition is one edit
        ("hospitl", "hospital", 1),
        ("hospitall", "hospital", 1),
        ("hosbital", "hospital", 1),
        ("hsoptial", "hospital", 2),
        ("school", "hospital", 3),  # capped at limit + 1
    ],
)
def test_edit_distance(a: str, b: str, distance: int) -> None:
    assert edit_distance(a, b, limit=2) == distance


def test_typo_forms_are_read_by_the_patterns() -> None:
    for form in DAMAGE_TYPO_FORMS:
        assert DAMAGE_RE.fullmatch(form), form
    for form, kind in TYPE_TYPO_FORMS.items():
        assert extract_types(form) >= {kind}, form


NOT_DESTROYED = ["none", "affected", "minor", "major"]


@pytest.mark.parametrize(
    ("text", "classes"),
    [
        # Spanish
        ("¿Cuántas estructuras destruyó el incendio?", ["destroyed"]),
        ("las llamas destruyeron 300 casas", ["destroyed"]),
        ("viviendas destruidas", ["destroyed"]),
        ("edificios destruidos", ["destroyed"]),
        ("el incendio dañó 50 casas", ANY),
        ("casas dañadas", ANY),
        ("los daños dañaron", ANY),
        ("casas que no fueron destruidas", NOT_DESTROYED),
        ("casas no destruidas", NOT_DESTROYED),
        ("edificios no dañados", ["none"]),
        ("daños graves", ["major", "destroyed"]),
        ("daños leves", ["minor"]),
        # French
        ("bâtiments détruits", ["destroyed"]),
        ("maisons détruites", ["destroyed"]),
        ("l'incendie a détruit des maisons", ["destroyed"]),
        ("bâtiments endommagés", ANY),
        ("maisons endommagées", ANY),
        ("maisons qui n'ont pas été détruites", NOT_DESTROYED),
        ("bâtiments non détruits", NOT_DESTROYED),
        ("bâtiments non endommagés", ["none"]),
        ("pas de dégâts", ["none"]),
        ("gravement endommagés", ["major", "destroyed"]),
        # Portuguese
        ("o incêndio destruiu casas", ["destroyed"]),
        ("casas destruídas", ["destroyed"]),
        ("edifícios destruídos", ["destroyed"]),
        ("o furacão danificou casas", ANY),
        ("casas danificadas", ANY),
        ("casas não destruídas", NOT_DESTROYED),
        ("edifícios que não foram danificados", ["none"]),
        ("dano grave", ["major", "destroyed"]),
        # a grouping is no damage filter
        ("divididas por classe de dano", []),
        ("par niveau de dommages", []),
    ],
)
def test_damage_verbs_in_spanish_french_and_portuguese(text: str, classes: list[str]) -> None:
    assert prepass(text).damage_classes == [DamageClass(c) for c in classes]


def test_the_palisades_question_in_spanish() -> None:
    facts = prepass("¿Cuántas estructuras destruyó el incendio de Palisades?")
    assert (facts.event_id, facts.target_entities, facts.damage_classes, facts.wants_count) == (
        14,
        ["buildings"],
        [DamageClass.destroyed],
        True,
    )
    assert 11 in facts.event_candidates  # "incendio" is a fire


@pytest.mark.parametrize(
    ("question", "count"),
    [
        ("¿Cuántos hospitales hay?", True),
        ("¿Cuántas escuelas hay?", True),
        ("Combien d'écoles ?", True),
        ("Quantos hospitais?", True),
        ("Quantas escolas?", True),
        ("Número de escuelas inundadas", True),
        ("número de hospitais", True),
        ("le nombre de bâtiments détruits", True),
        ("le nombre d'écoles", True),
        ("el nombre de los hospitales", False),  # Spanish: their names
        ("¿Dónde están los hospitales?", False),
        ("Où sont les écoles ?", False),
    ],
)
def test_count_words(question: str, count: bool) -> None:
    assert prepass(question).wants_count is count


@pytest.mark.parametrize(
    ("question", "taken_out"),
    [
        ("Palisades motor-homes only (not the mobile homes): how many were destroyed?", ["mobile homes"]),
        ("Single- and double-wides, not motor homes", ["motor homes"]),
        (", no las iglesias", ["iglesias"]),
        # what follows the negation counts what was said before it: nothing is taken out (the batch suite's
        # "flooded in only one of the two years, 2023 or 2024, not both" was sent to a model that was not there)
        ("Show me the land flooded in only one of the two years, 2023 or 2024, not both.", []),
        ("Inundado en 2023 o en 2024, no los dos.", []),
        ("Inondé en 2023 ou en 2024, pas les deux.", []),
    ],
)
def test_a_negation_opening_a_clause_takes_out_a_set_never_a_count_of_what_came_before(question, taken_out):
    from geofaham_plugin.core.planning.prepass import EXCLUDED, normalise

    assert [m["what"] for m in EXCLUDED.finditer(normalise(question))] == taken_out


def test_a_field_only_one_disaster_s_data_has_names_that_disaster():
    """No disaster named, but 'val_dany' (a field of the Catarroja public buildings, as the data spells it): the
    València flood, never 'could not identify the disaster'."""
    from geofaham_plugin.core.engines.layers import default_catalogue

    layers = default_catalogue()
    facts = prepass("Plan buildings the water never reached: the largest val_dany, and where?", layers=layers)
    assert facts.event_id == 6
    assert prepass("Which buildings were never reached by the water?", layers=layers).event_id is None


@pytest.mark.parametrize(
    "question",
    [
        "Multi-storey SFRs lost to fire: the Eaton number and the Palisades number?",
        "Daño grave por incendio: dame la cifra de Eaton y la de Palisades por separado.",
    ],
)
def test_disasters_named_by_name_are_not_refused_for_a_capitalised_word(question):
    """'SFRs' holds no place 'Rs'; a capitalised word opening a sentence ('Daño', a town somewhere) is no place
    that contradicts disasters the question names by their own names."""
    from geofaham_plugin.core.planning.identify import check_identified

    check_identified(prepass(question), has_aoi=False)  # raises InputError when refused


@pytest.mark.parametrize(
    ("question", "metres"),
    [
        ("¿Qué hospitales hay a 25 millas o menos de la zona quemada de Lahaina?", 25 * 1609.344),
        ("Hospitales a 2 kilómetros del incendio Eaton", 2000.0),
        ("Hospitais a 3 quilômetros do incêndio Eaton", 3000.0),
        ("Quels hôpitaux à moins de 5 milles du feu Eaton ?", 5 * 1609.344),
        ("Centros de salud a 500 metros de la inundación de Valencia", 500.0),
        ("Farmacias a 800 pies del agua en Valencia", 800 * 0.3048),
    ],
)
def test_distances_in_the_units_of_four_languages(question, metres):
    """Units are a closed class in every language the product reads: '25 millas' was no distance at all (the
    hospitals within 25 miles of Lahaina were counted inside the burn: 0)."""
    assert prepass(question).distances_m == [pytest.approx(metres)]


def test_square_metres_in_spanish_are_an_area_not_a_distance():
    assert prepass("Parcelas de más de 500 metros cuadrados inundadas en Valencia").distances_m == []


def test_aparte_de_takes_out_what_follows_like_excepto():
    """'Aparte del Maui Memorial' (Spanish 'apart from': the exclusion words are a closed class in four languages)
    takes the hospital out; unread, the answer listed it among the others."""
    from geofaham_plugin.core.planning.prepass import EXCLUDED

    said = [m["what"] for m in EXCLUDED.finditer(normalise("Aparte del Maui Memorial, ¿qué hospitales hay cerca?"))]
    assert said and said[0].startswith("maui memorial")
