"""A loopback embedding server: records each request, answers with a scripted function."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Scripted:
    """A loopback server: records each request, answers with ``reply(path, body)``."""

    reply: Callable[[str, dict[str, Any]], tuple[int, Any]]
    requests: list[tuple[str, dict[str, str], dict[str, Any]]] = field(default_factory=list)
    url: str = ""


@contextmanager
def scripted_embedding_server() -> Iterator[Scripted]:
    scripted = Scripted(reply=lambda path, body: (500, {}))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            scripted.requests.append((self.path, dict(self.headers), body))
            status, answer = scripted.reply(self.path, body)
            payload = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    scripted.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield scripted
    httpd.shutdown()
    httpd.server_close()
