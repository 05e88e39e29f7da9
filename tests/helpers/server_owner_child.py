"""Child process for the lifecycle tests: starts an embedded model server the way the CLI does and
waits to be killed.

    python server_owner_child.py dummy|smol [thread]

``dummy``: the real launcher (wrapper, parent-death signal, owner lock) around ``dummy_model_server.py``.
``smol``: the real llama.cpp server with the small test model. ``thread``: started from a worker thread
that then ends (as a QGIS run does). Prints ``up <wrapper pid> <server pid> <folder> <port>`` once the
server answers."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from geofaham_plugin.core.config import settings_from_env
from geofaham_plugin.core.llm import EmbeddedServer

DUMMY = Path(__file__).with_name("dummy_model_server.py")


class DummyServer(EmbeddedServer):
    def command(self, port: int) -> list[str]:
        return [self.python, str(DUMMY), str(port)]


def main() -> None:
    kind = sys.argv[1]
    if kind == "dummy":
        server: EmbeddedServer = DummyServer(Path(__file__), "dummy", startup_timeout=60)
    else:
        server = EmbeddedServer(settings_from_env().test_model_path, "smollm2-135m", n_ctx=512, startup_timeout=300)
    if sys.argv[2:] == ["thread"]:
        worker = threading.Thread(target=server.start)
        worker.start()
        worker.join()
    else:
        server.start()
    assert server.process is not None and server.log_path is not None
    wrapper = server.process.pid
    children = Path(f"/proc/{wrapper}/task/{wrapper}/children").read_text().split()
    print("up", wrapper, children[0], server.log_path.parent, server.port, flush=True)
    while True:
        time.sleep(1)
        if not server.running:
            print("server ended", flush=True)


if __name__ == "__main__":
    main()
