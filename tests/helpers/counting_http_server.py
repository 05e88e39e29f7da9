"""An HTTP server in a process of its own (GDAL holds the GIL while it fetches: a server thread in the test's
process would never answer) that appends every request it gets to a file and answers each with a small CSV.

Run: ``python counting_http_server.py HITS_FILE``; it prints its port on the first line of stdout."""

from __future__ import annotations

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BODY = b"x,y,secret\n-118.1,34.2,FETCHED\n"


class Handler(BaseHTTPRequestHandler):
    def _answer(self, body: bool) -> None:
        with open(sys.argv[1], "a", encoding="utf-8") as hits:
            hits.write(f"{self.command} {self.path}\n")
        self.send_response(200)
        self.send_header("Content-Type", "text/csv")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        if body:
            self.wfile.write(BODY)

    def do_GET(self) -> None:  # noqa: N802
        self._answer(True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(False)

    def log_message(self, *args: object) -> None:
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
