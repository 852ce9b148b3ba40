"""What the fake model APIs (tests/_fake_anthropic.py, _fake_gemini.py, _fake_openai.py) share: a threaded HTTP
server on a free loopback port, started and stopped as a context manager."""
import threading
from http.server import ThreadingHTTPServer


class LoopbackServer:
    "Serves `Handler` (a `BaseHTTPRequestHandler` class) on 127.0.0.1:`port` while used as a context manager."
    def serve_with(self, handler, path: str = ''):
        self.httpd = ThreadingHTTPServer(('127.0.0.1', 0), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f'http://127.0.0.1:{self.port}{path}'

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown(); self.httpd.server_close()
