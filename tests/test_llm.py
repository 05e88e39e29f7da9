"""Model layer without a model: the router's structured output and retries over ScriptedModel, and
OpenAIChatModel's wire format against a mock OpenAI-compatible server."""

from __future__ import annotations

import json
import shutil
import time
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from geofaham_plugin.core.config import ModelEndpoint, settings_from_env
from geofaham_plugin.core.domain.names import Role
from geofaham_plugin.core.errors import GeoFahamBug, ModelHTTPError, ModelOutputError, ModelRetry, RealModelBlocked
from geofaham_plugin.core.llm import (
    LLM,
    EmbeddedServer,
    Message,
    ModelFileMissing,
    OpenAIChatModel,
    ScriptedModel,
    UsageLedger,
    build_llm,
    extract_json,
)
from geofaham_plugin.core.llm.embedded import EmbeddedChatModel, free_port


class Event(BaseModel):
    event: Literal["flood", "wildfire", "earthquake"]
    distance_m: float = Field(ge=0)


ASK = [Message(role="system", content="Extract the event."), Message(role="user", content="Flood 300 m away")]


# --- structured output over ScriptedModel ---------------------------------------------------------------------


def test_structured_happy_path_sends_the_schema_and_records_usage():
    model = ScriptedModel({"vector": ['```json\n{"event": "flood", "distance_m": 300}\n```']})
    llm = LLM({"vector": model})
    assert llm.structured(Role.vector, ASK, Event, step="s1") == Event(event="flood", distance_m=300)
    (call,) = model.calls
    assert call.role == "vector" and call.schema == Event.model_json_schema() and call.messages == ASK
    (rec,) = llm.usage.records
    assert rec.ok and rec.attempts == 1 and rec.step == "s1" and rec.model == "scripted" and rec.prompt_tokens > 0


def test_responses_may_be_dicts_models_callables_or_a_function():
    seen = []
    model = ScriptedModel(
        {
            "maps": [
                {"event": "flood", "distance_m": 1},
                Event(event="wildfire", distance_m=2),
                lambda msgs, schema: seen.append(schema["title"]) or {"event": "earthquake", "distance_m": 3},
            ]
        }
    )
    llm = LLM(model)  # one model for every role
    assert [llm.structured("maps", ASK, Event).event for _ in range(3)] == ["flood", "wildfire", "earthquake"]
    assert seen == ["Event"]
    model.assert_exhausted()
    by_function = ScriptedModel(lambda role, msgs, schema: {"event": "flood", "distance_m": len(role)})
    assert LLM(by_function).structured("planner", ASK, Event).distance_m == 7


def test_malformed_json_is_retried_with_the_error_visible():
    model = ScriptedModel({"vector": ['{"event": "flood", "distance_m": ', '{"event": "flood", "distance_m": 5}']})
    llm = LLM({"vector": model})
    assert llm.structured("vector", ASK, Event).distance_m == 5
    retry = model.calls[1]
    assert retry.messages[-2] == Message(role="assistant", content='{"event": "flood", "distance_m": ')
    assert "not usable JSON" in retry.last_user and "invalid JSON" in retry.last_user
    assert llm.usage.records[0].attempts == 2 and llm.usage.records[0].ok


def test_schema_errors_name_the_field_and_the_retry_bound_holds():
    bad = '{"event": "tsunami", "distance_m": -4}'
    model = ScriptedModel({"stac": [bad] * 3})
    llm = LLM({"stac": model}, max_retries=2)
    with pytest.raises(ModelOutputError) as err:
        llm.structured("stac", ASK, Event, step="s2")
    assert err.value.attempts == 3 and err.value.role == "stac" and err.value.last_output == bad
    hint = model.calls[1].last_user
    assert "- event: Input should be 'flood', 'wildfire' or 'earthquake' (got 'tsunami')" in hint
    assert "- distance_m: Input should be greater than or equal to 0" in hint
    assert len(hint) < 400  # short: small models drown in long error dumps
    assert len(model.calls[2].messages) == len(ASK) + 4  # both bad answers and both hints are in the conversation
    (rec,) = llm.usage.records
    assert not rec.ok and rec.attempts == 3 and rec.completion_tokens == 3 * (len(bad) // 4)


def test_validate_raising_model_retry_feeds_the_hint_back():
    model = ScriptedModel({"raster": [{"event": "wildfire", "distance_m": 10}, {"event": "flood", "distance_m": 10}]})

    def only_floods(e: Event) -> None:
        if e.event != "flood":
            raise ModelRetry("the layer 'rivers' shows a flood, not a wildfire")

    assert LLM(model).structured("raster", ASK, Event, validate=only_floods).event == "flood"
    assert "the layer 'rivers' shows a flood, not a wildfire" in model.calls[1].last_user


def test_usage_ledger_totals_per_role_and_step():
    model = ScriptedModel({"planner": ["x" * 40, '{"event": "flood", "distance_m": 1}'], "vector": ["y" * 80]})
    llm = LLM(model)
    llm.structured("planner", [Message(role="user", content="z" * 40)], Event, step="s1")
    assert llm.text("vector", [{"role": "user", "content": "w" * 20}], step="s2") == "y" * 80
    totals = llm.usage.totals()
    retry_prompt = sum(len(m.content) for m in model.calls[1].messages) // 4
    assert totals["planner"] == {"prompt": 10 + retry_prompt, "completion": 10 + 8, "calls": 1}
    assert totals["vector"] == {"prompt": 5, "completion": 20, "calls": 1}
    assert set(llm.usage.by_step()) == {"s1", "s2"} and llm.usage.total_tokens == 10 + retry_prompt + 18 + 25
    dumped = llm.usage.model_dump()
    assert UsageLedger.model_validate(dumped).totals() == totals and dumped["records"][0]["attempts"] == 2


def test_scripted_model_running_out_names_the_role():
    llm = LLM(ScriptedModel({"maps": ['{"event": "flood", "distance_m": 1}']}))
    llm.structured("maps", ASK, Event)
    with pytest.raises(GeoFahamBug, match=r"role 'maps' ran out: all 1 responses used"):
        llm.structured("maps", ASK, Event)
    with pytest.raises(GeoFahamBug, match=r"no script for role 'stac'"):
        llm.text("stac", ASK)


def test_extract_json_takes_the_outermost_object():
    assert json.loads(extract_json('Sure! {"a": {"b": [1, 2]}} hope this helps {"c": 1}')) == {"a": {"b": [1, 2]}}
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json("I cannot do that.")


def test_unknown_role_is_our_bug():
    with pytest.raises(GeoFahamBug, match="no model for role 'stac'"):
        LLM({"vector": ScriptedModel({})}).text("stac", ASK)


# --- OpenAIChatModel --------------------------------------------------------------------------------------------


def test_real_requests_are_blocked_before_any_network_io():
    port = free_port()  # nothing listens here: a connection attempt would be a ModelHTTPError instead
    model = OpenAIChatModel(ModelEndpoint(base_url=f"http://127.0.0.1:{port}/v1", model="m"))
    with pytest.raises(RealModelBlocked):
        model.chat(ASK, schema=Event.model_json_schema())
    assert model._client is None


def test_unreachable_server_is_a_model_http_error(real_models_allowed):
    model = OpenAIChatModel(ModelEndpoint(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m"), http_retries=0)
    with pytest.raises(ModelHTTPError, match="cannot connect") as err:
        model.chat(ASK)
    assert err.value.status_code is None


def test_llamacpp_mode_sends_json_object_with_the_schema(mock_openai):
    endpoint = ModelEndpoint(base_url=mock_openai.base_url, model="qwen-local")
    llm = LLM({"vector": OpenAIChatModel(endpoint)})  # auto: not api.openai.com -> llamacpp
    assert llm.structured("vector", ASK, Event, step="s1") == Event(event="flood", distance_m=12.5)
    (req,) = mock_openai.requests
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer none"
    body = req["body"]
    assert body["response_format"] == {"type": "json_object", "schema": Event.model_json_schema()}
    assert body["model"] == "qwen-local" and body["temperature"] == 0.0 and body["max_tokens"] == 1024
    assert body["messages"] == [m.model_dump() for m in ASK]
    rec = llm.usage.records[0]
    assert (rec.prompt_tokens, rec.completion_tokens, rec.model) == (42, 7, "qwen-local")


def test_openai_mode_sends_json_schema_and_free_text_sends_none(mock_openai):
    from pydantic import SecretStr

    endpoint = ModelEndpoint(base_url=mock_openai.base_url, model="gpt-x", api_key=SecretStr("sk-test"))
    model = OpenAIChatModel(endpoint, json_mode="openai")
    model.chat(ASK, schema=Event.model_json_schema())
    model.chat(ASK)
    fmt = mock_openai.requests[0]["body"]["response_format"]
    assert fmt == {
        "type": "json_schema",
        "json_schema": {"name": "Event", "schema": Event.model_json_schema(), "strict": False},
    }
    assert "response_format" not in mock_openai.requests[1]["body"]
    assert mock_openai.requests[0]["auth"] == "Bearer sk-test"


def test_auto_json_mode_picks_openai_only_for_api_openai_com():
    assert OpenAIChatModel(ModelEndpoint(base_url="https://api.openai.com/v1")).json_mode == "openai"
    assert OpenAIChatModel(ModelEndpoint(base_url="http://gpu-box:8000/v1")).json_mode == "llamacpp"


def test_http_500_becomes_model_http_error(mock_openai):
    mock_openai.status = 500
    model = OpenAIChatModel(ModelEndpoint(base_url=mock_openai.base_url, model="m"), http_retries=0)
    with pytest.raises(ModelHTTPError) as err:
        LLM(model).structured("stac", ASK, Event)
    assert err.value.status_code == 500 and "boom" in err.value.body
    assert len(mock_openai.requests) == 1


# --- build_llm and the embedded server, without starting it ----------------------------------------------------


def test_build_llm_shares_one_lazy_embedded_server(tmp_path):
    env = {"GEOFAHAM_CACHE": str(tmp_path), "GEOFAHAM_LLM_PLANNER_BASE_URL": "http://gpu-box:8000/v1"}
    llm = build_llm(settings_from_env(env))
    assert isinstance(llm.model_for("planner"), OpenAIChatModel)
    embedded = {id(llm.model_for(r)) for r in Role if r is not Role.planner}
    assert len(embedded) == 1
    model = llm.model_for("vector")
    assert isinstance(model, EmbeddedChatModel) and not model.server.running  # nothing started at construction
    assert model.server.model_path == tmp_path / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    with pytest.raises(RealModelBlocked):
        llm.text("vector", ASK)
    assert not model.server.running


def test_missing_model_file_names_make_setup(tmp_path):
    with pytest.raises(ModelFileMissing, match="make setup") as err:
        EmbeddedServer(tmp_path / "nope.gguf", "x").start()
    assert isinstance(err.value, FileNotFoundError)


@pytest.mark.slow
def test_server_that_dies_reports_its_log(tmp_path):
    fake = tmp_path / "broken.gguf"
    fake.write_bytes(b"not a gguf")
    server = EmbeddedServer(fake, "broken", startup_timeout=60)
    start = time.monotonic()
    with pytest.raises(ModelHTTPError, match="exited with code") as err:
        server.start()
    assert "Failed to load model" in err.value.body and time.monotonic() - start < 60 and not server.running
    assert server.log_path is not None and server.log_path.is_file()  # kept after a failure, for the user
    shutil.rmtree(server.log_path.parent)
