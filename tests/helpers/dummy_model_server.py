"""A stand-in for ``llama_cpp.server`` in the lifecycle tests: answers ``GET /v1/models`` on the given
port and nothing else, until it is killed. It ignores SIGTERM for a moment (as a server busy loading a
model would), so the wrapper's SIGKILL escalation is exercised too.

    python dummy_model_server.py PORT"""

from __future__ import annotations

import json
import signal
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"object": "list", "data": [{"id": "dummy", "object": "model"}]}).encode()
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
