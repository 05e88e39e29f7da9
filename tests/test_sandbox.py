"""The code sandbox: generated code that opens a socket, reads /etc/passwd or a file outside the
session, spawns a process, allocates 10 GB, loops forever or imports a forbidden module is contained
with a clear error, the parent process stays alive, and nothing is registered. Where the pre-check
would already refuse the code, the test also runs it with the pre-check off to prove the runtime
layers (audit hook, restricted imports, Landlock, network namespace, rlimits) hold on their own."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import rasterio
from affine import Affine

from geofaham_plugin.core.agents import TOOLS
from geofaham_plugin.core.engines.raster import sandbox
from geofaham_plugin.core.errors import ToolFailed

FAST = sandbox.Limits(cpu_s=2, memory_mb=2048, wall_s=20)


def contained(result: sandbox.SandboxResult, kind: str, *words: str) -> None:
    assert not result.ok and result.kind == kind, (result.kind, result.message, result.stderr[-500:])
    for word in words:
        assert word in result.message, result.message
    assert result.outputs == []
    if result.pid is not None:  # the child is gone, with its whole process group; we are still here
        with pytest.raises(ProcessLookupError):
            os.killpg(result.pid, 0)


def run(code: str, session: Path, **kw) -> sandbox.SandboxResult:
    result = sandbox.run_code(code, session_dir=session, limits=kw.pop("limits", FAST), **kw)
    sandbox.cleanup(result)
    return result


@pytest.fixture()
def session(tmp_path):
    path = tmp_path / "session"
    path.mkdir()
    (path / "inside.txt").write_text("session data")
    (tmp_path / "outside.txt").write_text("not yours")
    return path


def test_the_precheck_refuses_forbidden_constructs_before_anything_runs():
    problems = sandbox.check_code(
        "import os\nfrom subprocess import run\nx = ().__class__\neval('1')\nimport numpy._core"
    )
    text = " | ".join(problems)
    for needle in (
        "'os' is not allowed",
        "'subprocess' is not allowed",
        "'.__class__'",
        "'eval' is not allowed",
        "'numpy._core' is not allowed",
    ):
        assert needle in text
    assert (
        sandbox.check_code("import numpy as np\nimport rasterio\nfrom shapely.geometry import box\nx = np.ones(3)")
        == []
    )


def test_forbidden_import_is_refused_by_the_precheck_and_at_run_time(session):
    contained(run("import socket\nsocket.socket()", session), "rejected", "import of 'socket' is not allowed")
    contained(
        run("import importlib\nimportlib.import_module('os')", session, precheck=False),
        "violation",
        "import of 'importlib' is not allowed",
    )
    contained(run("from numpy import _core", session, precheck=False), "violation", "private name")


def test_generated_code_gets_no_jit_compiler_and_no_secrets():
    from geofaham_plugin.core.config import ComputeSettings

    env = sandbox._env()
    assert ComputeSettings.from_env(env).raster_jit is False  # numpy's band math, no LLVM in the sandbox
    assert not [k for k in env if "KEY" in k or "DSN" in k or k.startswith("GEOFAHAM_LLM")]


def test_a_socket_is_refused(session):
    # numpy-only code cannot name socket; give it the module to prove the runtime layers stop it
    result = run(
        "import socket\ns = socket.socket()\ns.connect(('1.1.1.1', 80))",
        session,
        precheck=False,
        allowed_modules=sandbox.ALLOWED_MODULES + ("socket",),
    )
    contained(result, "violation", "network access is not allowed")
    # an allowed library reaching for the network is stopped too
    contained(run("import pandas as pd\npd.read_csv('http://example.com/data.csv')", session), "violation", "network")


def test_reading_etc_passwd_or_outside_the_session_is_refused(session):
    contained(run("print(open('/etc/passwd').read())", session), "violation", "reading /etc/passwd is not allowed")
    outside = session.parent / "outside.txt"
    contained(run(f"open({str(outside)!r}).read()", session), "violation", "is not allowed")
    contained(run(f"import pandas as pd\npd.read_csv({str(outside)!r})", session), "violation", "is not allowed")
    contained(run("open('/tmp/escape.txt', 'w').write('x')", session), "violation", "writing /tmp/escape.txt")
    # C code (GDAL) opens files without Python's audit hooks: the kernel (Landlock) refuses instead
    if "landlock ABI" in " ".join(run("x = 1", session).isolation):
        contained(run(f"import rasterio\nrasterio.open({str(outside)!r})", session), "violation", "Permission denied")
    ok = run("print(open(inputs['a']['path']).read())", session, inputs={"a": {"path": str(session / "inside.txt")}})
    assert ok.ok and "session data" in ok.stdout


def test_spawning_a_process_is_refused(session):
    contained(run("import subprocess\nsubprocess.run(['id'])", session), "rejected", "'subprocess' is not allowed")
    contained(
        run(
            "import subprocess\nsubprocess.run(['id'])",
            session,
            precheck=False,
            allowed_modules=sandbox.ALLOWED_MODULES + ("subprocess",),
        ),
        "violation",
        "starting processes",
    )
    contained(
        run("import os\nos.system('id')", session, precheck=False, allowed_modules=sandbox.ALLOWED_MODULES + ("os",)),
        "violation",
        "starting processes",
    )


def test_allocating_10_gb_hits_the_memory_limit(session):
    contained(
        run("a = np.ones(10 * 1024 ** 3, dtype=np.uint8)\nprint(a.sum())", session),
        "memory",
        "memory limit of 2048 MB exceeded",
    )


def test_an_infinite_loop_hits_the_cpu_limit_and_a_sleeper_the_wall_clock(session):
    t0 = time.monotonic()
    contained(run("while True:\n    pass", session), "cpu", "CPU time limit of 2 s exceeded")
    assert time.monotonic() - t0 < 10
    sleepy = "import time\nwhile True:\n    time.sleep(0.05)"
    t0 = time.monotonic()
    contained(
        run(
            sleepy,
            session,
            precheck=False,
            allowed_modules=sandbox.ALLOWED_MODULES + ("time",),
            limits=sandbox.Limits(cpu_s=30, wall_s=1.0),
        ),
        "timeout",
        "wall-clock limit of 1 s",
    )
    assert time.monotonic() - t0 < 5


def test_cancel_kills_the_process_group(session):
    cancel = threading.Event()
    threading.Timer(0.8, cancel.set).start()
    t0 = time.monotonic()
    result = run("while True:\n    pass", session, cancel=cancel, limits=sandbox.Limits(cpu_s=60, wall_s=60))
    contained(result, "cancelled", "cancelled")
    assert time.monotonic() - t0 < 5


def test_isolation_layers_are_reported(session):
    result = run("x = 1", session)
    assert result.ok
    layers = " ".join(result.isolation)
    assert "process tree" in layers and "rlimits" in layers and "quota" in layers
    if os.geteuid() == 0:  # root on Linux: a user namespace too where the kernel allows one, and no capability
        assert "pid net uts ipc" in layers and "capabilities: none" in layers, layers
    if "landlock ABI" in layers:
        assert "seccomp: no processes, sockets" in layers


# ------------------------------------------------------------------------- the tool, end to end
def _raster(path: Path) -> Path:
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        width=30,
        height=20,
        count=2,
        dtype="float32",
        crs="EPSG:32611",
        transform=Affine(20, 0, 380_000, 0, -20, 3_800_000),
    ) as dst:
        dst.write(np.full((20, 30), 3000, "float32"), 1)
        dst.write(np.full((20, 30), 1000, "float32"), 2)
        dst.descriptions = ("B08", "B04")
    return path


def test_run_python_registers_outputs_with_computed_metadata(ctx, store, tmp_path):
    scene = store.register_raster_file(_raster(tmp_path / "scene.tif"), source="test", summary="scene")
    code = (
        "import pandas as pd\n"
        "bands, grid = gr.read_raster(inputs['a'])\n"
        "ndvi = gr.normalized_difference(bands['nir'], bands['red'])\n"
        "gr.save_table('stats', pd.DataFrame({'mean': [float(np.nanmean(ndvi))]}))\n"
        "gr.save_raster('ndvi', ndvi, grid)\n"
        "RESULT = 'ndvi.tif'\n"
        "print('done')\n"
    )
    before = len(store)
    rec = TOOLS["run_python"].run(ctx, {"code": code}, {"a": scene})
    assert rec.kind.value == "raster" and rec.inputs == [scene.id] and rec.source == "raster.run_python:ndvi.tif"
    assert rec.metadata.crs == "EPSG:32611" and rec.metadata.bands[0].mean == pytest.approx(0.5)
    assert rec.metadata.pixel_area_m2 == pytest.approx(400)
    assert rec.extra["stdout"].strip() == "done" and len(rec.extra["also_registered"]) == 1
    table = store.get(rec.extra["also_registered"][0])
    assert store.read_table(table.id)["mean"].iloc[0] == pytest.approx(0.5)
    assert len(store) == before + 2
    assert not list((store.session_dir / ".staging").glob("sandbox-*"))  # the run folder is gone


@pytest.mark.parametrize(
    "code,kind",
    [
        ("import socket\nsocket.socket()", "invalid_input"),
        ("open('/etc/passwd').read()", "invalid_input"),
        ("gr.save_text('partial', 'half done')\nimport os", "invalid_input"),
        ("gr.save_text('partial', 'half done')\na = np.ones(10 * 1024 ** 3, dtype=np.uint8)", "error"),
        ("gr.save_text('partial', 'half done')\nraise ValueError('model bug')", "error"),
    ],
    ids=["socket", "passwd", "import", "memory", "exception"],
)
def test_a_failed_run_registers_nothing(ctx, store, code, kind):
    ctx.settings = ctx.settings.updated(sandbox={"memory_mb": 2048})
    before = store.ids()
    with pytest.raises(ToolFailed) as err:
        TOOLS["run_python"].run(ctx, {"code": code}, {})
    assert err.value.kind == kind and "the code failed" in str(err.value)
    assert store.ids() == before
    assert not list((store.session_dir / ".staging").glob("sandbox-*"))
    assert os.getpid() > 0  # still here


def test_sandbox_limits_are_read_when_the_tool_runs(store, monkeypatch):
    """The limits come from the run's settings, read when the run starts, not when the module was imported."""
    from geofaham_plugin.core.agents import ToolContext
    from geofaham_plugin.core.config import settings_from_env
    from geofaham_plugin.core.engines.layers import default_catalogue

    def run_context() -> ToolContext:
        return ToolContext(store=store, layers=default_catalogue(), settings=settings_from_env())

    monkeypatch.setenv("GEOFAHAM_SANDBOX_CPU_S", "7")
    monkeypatch.setenv("GEOFAHAM_SANDBOX_MEMORY_MB", "1536")
    rec = TOOLS["run_python"].run(run_context(), {"code": "gr.save_text('note', 'limits')"}, {})
    assert "rlimits cpu=7s as=1536MB" in rec.extra["isolation"]
    monkeypatch.setenv("GEOFAHAM_SANDBOX_CPU_S", "2")  # and they act: a busy loop dies on the CPU limit
    with pytest.raises(ToolFailed, match=r"CPU time limit of 2 s exceeded"):
        TOOLS["run_python"].run(run_context(), {"code": "x = 0\nwhile True:\n    x += 1", "timeout_s": 60}, {})
