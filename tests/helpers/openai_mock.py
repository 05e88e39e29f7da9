"""An OpenAI-compatible /v1/chat/completions mock for tests (no network beyond 127.0.0.1)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class MockOpenAI:
    """An OpenAI-compatible /v1/chat/completions that records request bodies and replies as told."""

    def __init__(self):
        self.requests: list[dict] = []
        self.status, self.content = 200, '{"event": "flood", "distance_m": 12.5}'
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                if owner.status != 200:
                    payload = {"error": {"message": "boom", "type": "server_error"}}
                else:
                    payload = {
                        "id": "c1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": owner.content},
                            }
                        ],
                        "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49},
                    }
                data = json.dumps(payload).encode()
                self.send_response(owner.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
