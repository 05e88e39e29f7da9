"""Issue 15: the exploits an adversarial run found against the code sandbox, each reproduced as
generated code and shown contained.

- The confused deputy: code saves a GDAL/OGR VRT (pointing to the parent's /proc/self/environ, a file
  outside the session, a /vsi path) under a .tif/.gpkg name; the parent must refuse it and register
  nothing. The parent's own check (``sandbox_outputs.vet``) is also tested alone on crafted files.
- The in-process layers switched off in one line (``typing.sys.modules`` reaches the audit hook's
  policy, ``builtins.exec``, a pickle through ``np.load(allow_pickle=True)``): the code proves the
  hook is off (a ctypes call it would refuse), then every effect is still blocked by the OS: no
  write outside, no secret planted in the parent's environment, no UNIX/abstract/TCP socket, no
  process.
- A ``setsid`` grandchild holding the verdict pipe: killed at the deadline and on cancel, with each
  process-tree layer alone (seccomp refusing the fork; the PID namespace; the subreaper supervisor
  with the /proc walk); no process of the run is left (checked in /proc).
- Fork / memory fan-out, and the output quota.
- No Landlock: refused with one line and a hint, unless opted in; opted in, the rest still holds.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
import rasterio
from affine import Affine

from geofaham_plugin.core.agents import TOOLS
from geofaham_plugin.core.config import settings_from_env
from geofaham_plugin.core.engines.raster import landlock, sandbox, sandbox_outputs
from geofaham_plugin.core.engines.raster.cgroup import _own_groups, parent_group
from geofaham_plugin.core.errors import ToolFailed

ROOT = Path(__file__).resolve().parents[1]
SECRET = "sk-geofaham-adversarial-" + uuid.uuid4().hex  # pragma: allowlist secret
PG_SOCKET = Path("/var/run/postgresql/.s.PGSQL.5432")
HAS_LANDLOCK = landlock.abi_version() > 0
needs_landlock = pytest.mark.skipif(not HAS_LANDLOCK, reason="this kernel has no Landlock")

# the one-line switch-off: the audit hook's policy is reachable from an allowed module
FLIP = """import typing
sys = typing.sys
sys.modules['__main__'].POLICY['busy'] = True
"""
# what the code tries once the in-process layers are off; each attempt prints 'LOST <what>' or 'contained <what>'
PAYLOAD = """
SECRET = REVERSED[::-1]
os = sys.modules['os']
importlib = sys.modules['importlib']
ctypes = importlib.import_module('ctypes')
ctypes.CDLL(None).getpid()
print('HOOK OFF', flush=True)
socket = importlib.import_module('socket')

def attempt(what, fn):
    try:
        print('LOST' if fn() else 'contained', what, flush=True)
    except BaseException as exc:
        print('contained', what, repr(exc)[:160], flush=True)

def write():
    with open(OUTSIDE_FILE, 'w') as fh:
        fh.write('escaped')
    return True

def secret():
    found = []
    for p in os.listdir('/proc'):
        if p.isdigit():
            try:
                with open('/proc/' + p + '/environ', 'rb') as fh:
                    found.append(SECRET.encode() in fh.read())
            except OSError:
                pass
    return any(found) or SECRET in str(dict(os.environ))

def unix(path):
    def go():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect(path)
        return True
    return go

def tcp():
    s = socket.socket()
    s.settimeout(2)
    s.connect(('127.0.0.1', 5432))
    return True

def spawn():
    pid = os.fork()
    if pid == 0:
        os.kill(os.getpid(), 9)
    return True

attempt('write', write)
attempt('secret', secret)
attempt('unix', unix(UNIX_PATH))
attempt('abstract', unix(ABSTRACT))
attempt('postgres', unix(PG_SOCKET))
attempt('tcp', tcp)
attempt('spawn', spawn)
"""
EFFECTS = ("write", "secret", "unix", "abstract", "postgres", "tcp", "spawn")


def payload(outside: Path, unix_path: Path, abstract: str) -> str:
    values = {
        "OUTSIDE_FILE": str(outside),
        "REVERSED": SECRET[::-1],  # the code never holds the secret as one string: no false alarm from an echo
        "UNIX_PATH": str(unix_path),
        "ABSTRACT": abstract,
        "PG_SOCKET": str(PG_SOCKET),
    }
    return "".join(f"{k} = {v!r}\n" for k, v in values.items()) + PAYLOAD


def exploit(how: str, body: str) -> str:
    """Generated code that switches the in-process layers off ``how``, then runs ``body``."""
    if how == "typing.sys.modules":
        return FLIP + body
    source = "import sys\nsys.modules['__main__'].POLICY['busy'] = True\n" + body
    if how == "builtins.exec":
        return f"import typing\ntyping.sys.modules['builtins'].exec({source!r}, {{}})\n"
    assert how == "np.load pickle"
    escaped = source.replace("\\", "\\u005c").replace("\n", "\\u000a")
    pickle = b"cbuiltins\nexec\n(V" + escaped.encode("raw_unicode_escape") + b"\n}tR."
    return f"open('p.pkl', 'wb').write({pickle!r})\nnp.load('p.pkl', allow_pickle=True)\n"


# The parent of these runs has the secret in its real environment (the block /proc/PID/environ
# shows), as a QGIS started with GEOFAHAM_LLM_API_KEY would: a test process cannot plant it there.
DRIVER = """
import json, sys
from geofaham_plugin.core.engines.raster import sandbox
kw = json.loads(sys.argv[1])
code, session = kw.pop('code'), kw.pop('session')
limits = sandbox.Limits(cpu_s=20, wall_s=60, memory_mb=kw.pop('memory_mb', 3072))
r = sandbox.run_code(code, session_dir=session, limits=limits, **kw)
sandbox.cleanup(r)
print(json.dumps({'kind': r.kind, 'message': r.message, 'stdout': r.stdout, 'stderr': r.stderr,
                  'isolation': r.isolation}))
"""


def run_with_secret(code: str, session: Path, **kw) -> dict:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GEOFAHAM_LLM_API_KEY": SECRET}
    args = json.dumps({"code": code, "session": str(session), **kw})
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture()
def session(tmp_path):
    path = tmp_path / "session"
    path.mkdir()
    (path / "inside.txt").write_text("session data")
    return path


@pytest.fixture()
def listeners(tmp_path):
    """A UNIX socket outside the session and an abstract one, both listening."""
    unix_path = tmp_path / "outside.sock"
    abstract = "\0geofaham-test-" + uuid.uuid4().hex
    socks = []
    for address in (str(unix_path), abstract):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(address)
        s.listen(4)
        s.settimeout(0.3)
        socks.append(s)
    yield unix_path, abstract, socks
    for s in socks:
        s.close()


def nobody_connected(socks: list[socket.socket]) -> bool:
    for s in socks:
        try:
            conn, _ = s.accept()
        except TimeoutError:
            continue
        conn.close()
        return False
    return True


def leftovers(marker: str) -> list[int]:
    """Processes whose command line names this run's folder (the run's whole tree has it)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
                state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            if marker.encode() in cmd and state != b"Z":
                pids.append(int(entry))
    return pids


def _raster(path: Path) -> Path:
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        width=8,
        height=4,
        count=1,
        dtype="float32",
        crs="EPSG:32611",
        transform=Affine(20, 0, 380_000, 0, -20, 3_800_000),
    ) as dst:
        dst.write(np.ones((4, 8), "float32"), 1)
    return path


# ------------------------------------------------------------------------ 1. the confused deputy
def raw_vrt(source: str) -> str:
    return (
        '<VRTDataset rasterXSize="256" rasterYSize="4"><SRS>EPSG:32611</SRS>'
        "<GeoTransform>380000,20,0,3800000,0,-20</GeoTransform>"
        '<VRTRasterBand dataType="Byte" band="1" subClass="VRTRawRasterBand">'
        f'<SourceFilename relativeToVRT="0">{source}</SourceFilename>'
        "<ImageOffset>0</ImageOffset><PixelOffset>1</PixelOffset><LineOffset>256</LineOffset>"
        "</VRTRasterBand></VRTDataset>"
    )


def ogr_vrt(source: str) -> str:
    return (
        '<OGRVRTDataSource><OGRVRTLayer name="leak">'
        f'<SrcDataSource relativeToVRT="0">{source}</SrcDataSource><SrcLayer>outside</SrcLayer>'
        '<GeometryType>wkbPoint</GeometryType><LayerSRS>EPSG:4326</LayerSRS><GeometryField encoding="PointFromColumns" '
        'x="x" y="y"/></OGRVRTLayer></OGRVRTDataSource>'
    )


@pytest.mark.parametrize("target", ["environ", "outside", "vsi", "ogr", "symlink"])
def test_a_vrt_saved_as_an_output_is_refused_and_nothing_is_read_into_the_store(ctx, store, tmp_path, target):
    outside = tmp_path / "outside.csv"
    outside.write_text(f"x,y,secret\n1,2,{SECRET}\n")
    name, content = "out.tif", None
    if target == "environ":  # the parent's own environment, read by the parent
        content = raw_vrt("/proc/self/environ")
    elif target == "outside":
        content = raw_vrt(str(outside))
    elif target == "vsi":
        content = raw_vrt(f"/vsisubfile/0_200,{outside}")
    elif target == "ogr":
        name, content = "out.gpkg", ogr_vrt(str(outside))
    if content is not None:
        code = f"open({name!r}, 'w').write({content!r})\nRESULT = {name!r}\n"
    else:  # a link to a real GeoTIFF outside the session, made once the audit hook is off
        real = _raster(tmp_path / "outside.tif")
        code = FLIP + f"sys.modules['os'].symlink({str(real)!r}, 'out.tif')\nRESULT = 'out.tif'\n"
    before = store.ids()
    with pytest.raises(ToolFailed) as err:
        TOOLS["run_python"].run(ctx, {"code": code, "timeout_s": 60}, {})
    message = str(err.value)
    assert "refused" in message and name in message, message
    assert "\n" not in message.split("the code failed")[-1].strip()
    assert store.ids() == before
    stored = b"".join(p.read_bytes() for p in store.session_dir.rglob("*") if p.is_file())
    assert SECRET.encode() not in stored


def test_the_parent_check_alone_refuses_crafted_outputs(tmp_path):
    """``vet`` is the parent's last line even if the converter were subverted: each crafted file is
    refused before GDAL sniffs it, and a genuine GeoTIFF passes."""
    outside = tmp_path / "outside.csv"
    outside.write_text(f"x,y,secret\n1,2,{SECRET}\n")

    def folder(name: str) -> Path:
        path = tmp_path / name
        path.mkdir()
        return path

    cases: dict[str, Path] = {}
    f = folder("vrt")
    (f / "a.tif").write_text(raw_vrt("/proc/self/environ"))
    cases["not a GeoTIFF"] = f
    f = folder("ogrvrt")
    (f / "a.gpkg").write_text(ogr_vrt(str(outside)))
    cases["not a GeoPackage"] = f
    for kind, sql in (("view", "CREATE VIEW v AS SELECT 1"), ("trigger", None)):
        f = folder(kind)
        gpkg = f / "a.gpkg"
        db = sqlite3.connect(gpkg)
        db.execute("PRAGMA application_id = 1196444487")  # 'GPKG'
        db.execute("CREATE TABLE t (x)")
        db.execute(sql or "CREATE TRIGGER g AFTER INSERT ON t BEGIN SELECT 1; END")
        db.commit()
        db.close()
        cases[f"holds a {kind}"] = f
    f = folder("symlink")
    (f / "a.tif").symlink_to(_raster(tmp_path / "real.tif"))
    cases["symbolic link"] = f
    f = folder("hardlink")
    os.link(_raster(tmp_path / "real2.tif"), f / "a.tif")
    cases["hard link"] = f
    for why, path in cases.items():
        with pytest.raises(ToolFailed, match=f"refused: .*{why}"):
            sandbox_outputs.vet(path)
    good = folder("good")
    _raster(good / "a.tif")
    assert sandbox_outputs.vet(good) == [(good / "a.tif", "raster")]


# ------------------------------------------------ 2. the in-process layers off; the OS still holds
@pytest.mark.parametrize("how", ["typing.sys.modules", "builtins.exec", "np.load pickle"])
@needs_landlock
def test_switching_the_in_process_layers_off_gains_nothing(session, listeners, how):
    unix_path, abstract, socks = listeners
    outside = session.parent / "escaped.txt"
    result = run_with_secret(exploit(how, payload(outside, unix_path, abstract)), session)
    out = result["stdout"]
    assert "HOOK OFF" in out, (result["message"], result["stderr"][-1500:])  # the switch-off did work
    for what in EFFECTS:
        assert f"contained {what}" in out and f"LOST {what}" not in out, (what, out)
    assert not outside.exists()
    assert SECRET not in json.dumps(result)
    assert nobody_connected(socks)


def test_the_postgres_socket_is_reachable_from_the_test_itself():
    """The target of the 'postgres' attempt above is real: the same connect works outside the sandbox."""
    if not PG_SOCKET.exists():
        pytest.skip("no local PostgreSQL socket")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(PG_SOCKET))
    s.close()


# -------------------------------------------------------------- 3. a setsid grandchild, 4. fan-out
SETSID = (
    FLIP
    + """os = sys.modules['os']
time = sys.modules['importlib'].import_module('time')
try:
    pid = os.fork()
except OSError as exc:
    print('fork refused:', exc, flush=True)
    pid = None
if pid == 0:
    os.setsid()
    time.sleep(40)
    os.kill(os.getpid(), 9)
print('grandchild', pid, flush=True)
time.sleep(40)
"""
)


@pytest.mark.parametrize("stop", ["deadline", "cancel"])
@pytest.mark.parametrize(
    "layers",
    [{}, {"seccomp": False}, {"seccomp": False, "namespaces": False}],
    ids=["all", "no-seccomp", "no-seccomp-no-namespaces"],
)
def test_a_setsid_grandchild_dies_with_the_run(session, stop, layers):
    cancel = threading.Event()
    if stop == "cancel":
        threading.Timer(6.0, cancel.set).start()
    t0 = time.monotonic()
    result = sandbox.run_code(
        SETSID, session_dir=session, limits=sandbox.Limits(cpu_s=30, wall_s=8.0), cancel=cancel, **layers
    )
    elapsed = time.monotonic() - t0
    marker = str(getattr(result, "_run_dir", "no run folder: the code was not run"))
    try:
        assert result.kind == ("timeout" if stop == "deadline" else "cancelled"), (result.kind, result.message)
        assert elapsed < 20, elapsed  # not the grandchild's 40 s
        assert ("fork refused" in result.stdout) == ("seccomp" not in layers), result.stdout
        if "seccomp" in layers:
            assert "grandchild" in result.stdout  # it did fork: the tree kill is what stopped it
        assert leftovers(marker) == []
    finally:
        for pid in leftovers(marker):
            os.kill(pid, 9)
        sandbox.cleanup(result)


@needs_landlock
def test_fork_and_thread_fan_out_stay_under_one_memory_limit(session):
    code = (
        FLIP
        + """os = sys.modules['os']
importlib = sys.modules['importlib']
time = importlib.import_module('time')
for i in range(4):
    try:
        pid = os.fork()
    except OSError as exc:
        print('fork refused:', exc, flush=True)
        break
    if pid == 0:
        a = np.ones(600 * 1024 * 1024, dtype=np.uint8)
        print('child allocated', flush=True)
        time.sleep(20)
        os.kill(os.getpid(), 9)
try:
    importlib.import_module('multiprocessing').Process(target=print).start()
    print('multiprocessing started', flush=True)
except OSError as exc:
    print('multiprocessing refused:', exc, flush=True)
threading = importlib.import_module('threading')
got = []
def grab():
    try:
        got.append(np.ones(600 * 1024 * 1024, dtype=np.uint8))
    except MemoryError:
        pass
threads = [threading.Thread(target=grab) for _ in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
print('threads allocated', len(got), flush=True)
"""
    )
    result = sandbox.run_code(code, session_dir=session, limits=sandbox.Limits(cpu_s=20, memory_mb=1536, wall_s=60))
    sandbox.cleanup(result)
    out = result.stdout
    assert "fork refused" in out and "child allocated" not in out, (result.message, out, result.stderr[-800:])
    assert "multiprocessing refused" in out
    threads = int(out.split("threads allocated ")[1].split()[0])
    assert threads * 600 < 1536  # 4 × 600 MB asked in threads: at most two fit under one 1536 MB limit


@pytest.mark.parametrize(
    "code",
    [
        "open('big.bin', 'wb').write(bytes(100 * 1024 * 1024))",
        "for i in range(3):\n    open(f'part{i}.bin', 'wb').write(bytes(40 * 1024 * 1024))",
        "for i in range(400):\n    open(f'f{i}.csv', 'w').write('x')",
        "for i in range(3):\n    print('x' * 40 * 1024 * 1024)",
    ],
    ids=["one-big-file", "many-files-over-quota", "too-many-files", "stdout-flood"],
)
def test_the_run_folder_has_a_quota(session, code):
    limits = sandbox.Limits(cpu_s=20, wall_s=60, max_output_mb=64, max_files=200)
    result = sandbox.run_code(code, session_dir=session, limits=limits)
    sandbox.cleanup(result)
    assert not result.ok and result.kind == "quota", (result.kind, result.message, result.stderr[-500:])
    assert result.outputs == []


# -------------------------------------------------------------------------------- 5. no Landlock
def test_without_landlock_generated_code_is_refused_unless_opted_in(ctx, store, tmp_path, monkeypatch):
    monkeypatch.setattr(landlock, "abi_version", lambda: 0)  # a kernel without Landlock
    result = sandbox.run_code("print('ran')", session_dir=tmp_path, work_dir=tmp_path / "staging")
    assert result.kind == "unavailable" and "not run" in result.message
    assert "GEOFAHAM_SANDBOX_ALLOW_NO_LANDLOCK=1" in result.message and "\n" not in result.message
    assert not (tmp_path / "staging").exists()  # nothing started
    before = store.ids()
    with pytest.raises(ToolFailed) as err:
        TOOLS["run_python"].run(ctx, {"code": "gr.save_text('note', 'ran')"}, {})
    assert "no Landlock" in str(err.value) and "GEOFAHAM_SANDBOX_ALLOW_NO_LANDLOCK" in (err.value.hint or "")
    assert store.ids() == before
    # opted in (the setting, read from the environment like every other): it runs, and says so
    monkeypatch.setenv("GEOFAHAM_SANDBOX_ALLOW_NO_LANDLOCK", "1")
    ctx.settings = settings_from_env()
    rec = TOOLS["run_python"].run(ctx, {"code": "gr.save_text('note', 'ran')"}, {})
    assert "landlock unavailable" in rec.extra["isolation"]


def test_opted_in_without_landlock_the_other_layers_still_hold(session, listeners):
    """Landlock off (what an older kernel gives): writes outside the session are possible - that is
    what the user opted into - but the secret, the sockets and new processes stay out of reach."""
    unix_path, abstract, socks = listeners
    outside = session.parent / "escaped.txt"
    result = run_with_secret(
        exploit("typing.sys.modules", payload(outside, unix_path, abstract)), session, landlock=False
    )
    out = result["stdout"]
    assert "HOOK OFF" in out and "landlock off" in result["isolation"], result
    for what in ("secret", "unix", "abstract", "postgres", "tcp", "spawn"):
        assert f"contained {what}" in out and f"LOST {what}" not in out, (what, out)
    assert SECRET not in json.dumps(result)
    assert nobody_connected(socks)


# ---------------------------------------------------------- 6. run as root: the child holds no privilege
ROOT_PAYLOAD = """
os = sys.modules['os']
importlib = sys.modules['importlib']
ctypes = importlib.import_module('ctypes')
fcntl = importlib.import_module('fcntl')
struct = importlib.import_module('struct')
libc = ctypes.CDLL(None, use_errno=True)
ctypes.CDLL(None).getpid()
print('HOOK OFF', flush=True)

def attempt(what, fn):
    try:
        print('LOST' if fn() else 'contained', what, flush=True)
    except BaseException as exc:
        print('contained', what, repr(exc)[:160], flush=True)

def status(field):
    with open('/proc/self/status') as fh:
        return next(int(line.split()[1], 16) for line in fh if line.startswith(field + ':'))

def hostname():  # the name it already has: allowed, nothing would change; the call alone is the escape
    name = os.uname().nodename.encode()
    return libc.sethostname(name, len(name)) == 0

def domainname():
    buf = ctypes.create_string_buffer(256)
    libc.getdomainname(buf, 256)
    return libc.setdomainname(buf.value, len(buf.value)) == 0

def kernel_log():
    buf = ctypes.create_string_buffer(4096)
    return libc.klogctl(3, buf, 4096) >= 0  # SYSLOG_ACTION_READ_ALL

def fifo():
    os.mkfifo('pipe')
    return True

def memfd():  # memory outside RLIMIT_AS: 1 MiB is proof enough
    fd = os.memfd_create('hoard')
    os.write(fd, bytes(1 << 20))
    return True

def set_id():
    for name, mode in (('suid', 0o4755), ('sgid', 0o2755)):
        open(name, 'w').close()
        try:
            os.chmod(name, mode)
        except OSError:
            pass
        fd = os.open(name, os.O_RDONLY)
        try:
            os.fchmod(fd, mode)
        except OSError:
            pass
        if os.stat(name).st_mode & 0o6000:
            return True
    return False

def immutable():  # FS_IOC_SETFLAGS with FS_IMMUTABLE_FL, taken off again at once when it worked
    fd = os.open('frozen', os.O_CREAT | os.O_RDONLY)
    fcntl.ioctl(fd, 0x40086602, struct.pack('l', 0x10))
    fcntl.ioctl(fd, 0x40086602, struct.pack('l', 0))
    return True

attempt('hostname', hostname)
attempt('domainname', domainname)
attempt('kernel log', kernel_log)
attempt('fifo', fifo)
attempt('memfd', memfd)
attempt('set-id bit', set_id)
attempt('immutable', immutable)
open('plain', 'w').close()
os.chmod('plain', 0o600)
print('plain chmod', oct(os.stat('plain').st_mode & 0o777), flush=True)
print('caps', status('CapEff'), status('CapPrm'), status('CapBnd'), flush=True)
for ns in ('user', 'uts', 'ipc'):
    print('ns', ns, os.readlink('/proc/self/ns/' + ns), flush=True)
"""
ROOT_EFFECTS = ("hostname", "domainname", "kernel log", "fifo", "memfd", "set-id bit", "immutable")


@pytest.mark.skipif(os.geteuid() != 0, reason="the cases of a GeoFaham run as root")
@needs_landlock
def test_run_as_root_the_child_holds_no_privilege(session):
    """Run as root (containers, lab VMs), with the in-process layers switched off: no capability, its own user,
    UTS and IPC namespaces, and seccomp refuses the host's names, the kernel log, device nodes, memfd, set-id bits
    and the immutable flag; nothing of the run survives the cleanup."""
    hostname = socket.gethostname()
    result = run_with_secret(FLIP + ROOT_PAYLOAD, session)
    out = result["stdout"]
    assert "HOOK OFF" in out, (result["message"], result["stderr"][-1500:])
    for what in ROOT_EFFECTS:
        assert f"contained {what}" in out and f"LOST {what}" not in out, (what, out)
    assert "plain chmod 0o600" in out  # the filter refuses set-id bits, not chmod
    assert "caps 0 0 0" in out, out
    for ns in ("user", "uts", "ipc"):
        assert f"ns {ns} {os.readlink(f'/proc/self/ns/{ns}')}" not in out and f"ns {ns} {ns}:[" in out, out
    assert socket.gethostname() == hostname
    left = [p for p in session.rglob("*") if p.is_file() and p.name != "inside.txt"]
    assert left == [], left  # the cleanup removed everything the run made


MEMFD_HOARD = """
os = sys.modules['os']
fd = os.memfd_create('hoard')
chunk = bytes(64 << 20)
for i in range(16):
    os.write(fd, chunk)
print('stored 1 GiB', flush=True)
"""


@pytest.mark.skipif(parent_group() is None, reason="no writable memory cgroup on this machine")
@needs_landlock
def test_shared_memory_counts_against_the_memory_limit(session):
    """memfd_create stored 1 GiB under a 512 MB limit: a memfd's pages are outside RLIMIT_AS. With seccomp (which
    refuses memfd_create) and the in-process layers switched off, the run's memory group counts them: the tree is
    killed and the run says the memory limit was exceeded; without the group the same code stores its gigabyte."""
    held = run_with_secret(FLIP + MEMFD_HOARD, session, seccomp=False, memory_mb=512)
    assert held["kind"] == "memory" and "shared memory counted" in held["message"], held
    assert "stored 1 GiB" not in held["stdout"] and any("memory group (cgroup v" in i for i in held["isolation"])
    lost = run_with_secret(FLIP + MEMFD_HOARD, session, seccomp=False, memory_mb=512, memory_group=False)
    assert lost["kind"] == "ok" and "stored 1 GiB" in lost["stdout"], lost
    folder, _ = parent_group()
    assert not list(folder.glob("geofaham-sandbox-*"))  # each run's group removed with it


def test_the_memory_group_is_found_in_either_cgroup_version():
    v2 = "0::/user.slice/user-1000.slice/session-2.scope\n"
    hybrid = "4:memory:/process_api/c44\n1:cpu:/\n0::/\n"
    assert _own_groups(v2) == ("/user.slice/user-1000.slice/session-2.scope", None)
    assert _own_groups(hybrid) == ("/", "/process_api/c44")
    assert _own_groups("12:cpu,cpuacct:/x\n") == (None, None)
