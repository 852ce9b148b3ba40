"""A fake Gemini API (generativelanguage `v1beta`) on 127.0.0.1 that scripts the model for the real Gemini CLI.

`FakeGemini(script)` serves `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` (SSE) and
`:generateContent` (JSON), records every request body in `.requests`, and answers the host's main loop from
`script`: step *i* (the number of `model` turns already in the request's `contents`) is `script[i]`, a list
of parts — `function_call(name, args)` or `text(...)` — or a callable `(request_body) -> parts`. Past the end
of the script it answers "done". A request without `tools` (the host's side calls: routing, next-speaker
checks, summaries) gets a short text answer, or `{}` when it asks for JSON. `:countTokens` answers 1.

    with FakeGemini([[function_call('run_shell_command', {'command': 'ls'})]]) as api:
        env = api.env()            # GOOGLE_GEMINI_BASE_URL / GEMINI_API_KEY for the host
        ...
        api.main_requests()        # the recorded bodies of the main loop, in order
"""
import json, threading
from http.server import BaseHTTPRequestHandler

from _fake_api import LoopbackServer


def function_call(name: str, args: dict) -> dict:
    "A scripted `functionCall` part."
    return {'functionCall': {'name': name, 'args': args}}


def text(s: str) -> dict:
    "A scripted text part."
    return {'text': s}


def function_responses(body: dict) -> list[dict]:
    "Every `functionResponse` of a request body, in order (`{name, response, id?}`)."
    out = []
    for c in body.get('contents', []):
        out += [p['functionResponse'] for p in c.get('parts', []) if isinstance(p, dict) and 'functionResponse' in p]
    return out


def _chunk(parts: list[dict]) -> dict:
    return {'candidates': [{'content': {'role': 'model', 'parts': parts}, 'finishReason': 'STOP', 'index': 0}],
            'usageMetadata': {'promptTokenCount': 1, 'candidatesTokenCount': 1, 'totalTokenCount': 2},
            'modelVersion': 'gemini-2.5-flash'}


class FakeGemini(LoopbackServer):
    "The fake API server; a context manager that runs it on a free 127.0.0.1 port in a daemon thread."
    def __init__(self, script=()):
        self.script = list(script)
        self.requests: list[dict] = []      # every POST body, in arrival order
        self.paths: list[str] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'
            def log_message(self, *a): pass
            def _send(self, code, body: bytes, ctype='application/json'):
                self.send_response(code)
                self.send_header('content-type', ctype)
                self.send_header('content-length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def do_GET(self): self._send(404, b'{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}')
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get('content-length') or 0))
                try: body = json.loads(raw)
                except ValueError: body = {}
                with fake.lock: fake.requests.append(body); fake.paths.append(self.path)
                if ':countTokens' in self.path: return self._send(200, b'{"totalTokens":1}')
                parts = fake.answer(body)
                if ':streamGenerateContent' in self.path:
                    return self._send(200, f'data: {json.dumps(_chunk(parts))}\r\n\r\n'.encode(), 'text/event-stream')
                self._send(200, json.dumps(_chunk(parts)).encode())

        self.serve_with(Handler, '')

    def answer(self, body: dict) -> list[dict]:
        "The parts answering one request: the script step for the main loop, a side answer otherwise."
        if not body.get('tools'):
            cfg = body.get('generationConfig') or {}
            if cfg.get('responseMimeType') == 'application/json' or cfg.get('responseJsonSchema') or cfg.get('responseSchema'):
                return [text('{}')]
            return [text('ok')]
        step = sum(1 for c in body.get('contents', []) if c.get('role') == 'model')
        if step >= len(self.script): return [text('done')]
        s = self.script[step]
        return s(body) if callable(s) else s

    def main_requests(self) -> list[dict]:
        "The recorded request bodies of the host's main loop (those that carry tools), in order."
        with self.lock: return [b for b in self.requests if b.get('tools')]

    def env(self) -> dict:
        "Environment variables pointing a Gemini CLI process at this server."
        return {'GOOGLE_GEMINI_BASE_URL': self.url, 'GEMINI_API_KEY': 'fake-gemini-key'}
