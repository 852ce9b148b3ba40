"""What the fake model APIs (tests/_fake_anthropic.py, _fake_gemini.py, _fake_openai.py) share: a threaded HTTP
server on a free loopback port, started and stopped as a context manager, that records every POST body and
answers the host's main loop from a script.

A subclass says only what differs between the wire protocols: `steps_taken(body)` (how many model turns the
request already holds, which picks the script step), `is_main(body, path)` (which requests belong to the
main loop), `on_post(handler, body)` (the answer) and, optionally, `on_get(handler)`.
"""
import json, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LoopbackServer:
    "A scripted fake API served on 127.0.0.1:`port` while used as a context manager; `url` ends with `path`."
    not_found = b'{"error":{"message":"not found"}}'

    def __init__(self, script=(), path: str = ''):
        self.script = list(script)
        self.requests: list[dict] = []      # every POST body, in arrival order
        self.paths: list[str] = []          # the path of each, in the same order
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'
            def log_message(self, *a): pass
            def send(self, code, body: bytes, ctype='application/json'):
                self.send_response(code)
                self.send_header('content-type', ctype)
                self.send_header('content-length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def do_GET(self): fake.on_get(self)
            def do_HEAD(self): fake.on_get(self)
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get('content-length') or 0))
                try: body = json.loads(raw)
                except ValueError: body = {}
                with fake.lock: fake.requests.append(body); fake.paths.append(self.path)
                fake.on_post(self, body)

        self.httpd = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f'http://127.0.0.1:{self.port}{path}'

    def on_get(self, handler): handler.send(404, self.not_found)

    def scripted(self, body: dict, done: list) -> list:
        "The script step for this main-loop request (`steps_taken(body)`), `done` past the script's end."
        step = self.steps_taken(body)
        if step >= len(self.script): return done
        s = self.script[step]
        return s(body) if callable(s) else s

    def main_requests(self) -> list[dict]:
        "The recorded request bodies of the host's main loop, in order."
        with self.lock: return [b for b, p in zip(self.requests, self.paths) if self.is_main(b, p)]

    def is_main(self, body: dict, path: str) -> bool: return bool(body.get('tools'))

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown(); self.httpd.server_close()
