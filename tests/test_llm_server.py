"""The embedded llama.cpp server for real, with the tiny SmolLM2 model: start, structured output through
LLM.structured (grammar-constrained JSON), server-reported token counts, clean stop."""

from __future__ import annotations

import os
import socket
import time
from typing import Literal

import pytest
from pydantic import BaseModel

from geofaham_plugin.core.config import settings_from_env
from geofaham_plugin.core.llm import LLM, EmbeddedChatModel, EmbeddedServer, Message

pytestmark = [pytest.mark.llm, pytest.mark.slow]

TIMINGS: dict[str, float] = {}


class Event(BaseModel):
    event: Literal["flood", "wildfire", "earthquake"]
    distance_m: float


@pytest.fixture(scope="session")
def smol_server():
    path = settings_from_env().test_model_path
    if not path.is_file():
        pytest.skip(f"{path} not installed (make setup)")
    server = EmbeddedServer(path, "smollm2-135m", n_ctx=2048)
    start = time.monotonic()
    server.start()
    TIMINGS["startup_s"] = round(time.monotonic() - start, 2)
    yield server
    server.stop()


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_structured_output_from_the_real_server(smol_server):
    assert os.environ.get("GEOFAHAM_BLOCK_REAL_MODELS") is None
    llm = LLM({"vector": EmbeddedChatModel(smol_server, max_tokens=128)}, max_retries=2)
    messages = [
        Message(role="system", content="You extract facts as JSON."),
        Message(
            role="user",
            content="A river flooded the town 250 metres from the school. Give the event and the distance in metres.",
        ),
    ]
    start = time.monotonic()
    result = llm.structured("vector", messages, Event, step="s1")
    TIMINGS["structured_s"] = round(time.monotonic() - start, 2)
    assert isinstance(result, Event)
    (rec,) = llm.usage.records
    assert rec.ok and rec.prompt_tokens > 0 and rec.completion_tokens > 0 and rec.model == "smollm2-135m"
    print(f"\nSmolLM2: {result!r}, {rec.model_dump()}, {TIMINGS}")


def test_free_text_from_the_real_server(smol_server):
    llm = LLM(EmbeddedChatModel(smol_server, max_tokens=16))
    assert llm.text("planner", [Message(role="user", content="Say hello.")]).strip()
    assert llm.usage.totals()["planner"]["prompt"] > 0


def test_stop_ends_the_process_and_closes_the_port(smol_server):
    process, port = smol_server.process, smol_server.port
    assert process is not None and port_open(port)
    smol_server.stop()
    assert process.poll() is not None and not smol_server.running
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)
    assert not port_open(port)
    smol_server.stop()  # idempotent
