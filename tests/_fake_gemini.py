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
import json

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
    "The fake Gemini API; a context manager that runs it on a free 127.0.0.1 port in a daemon thread."
    not_found = b'{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}'

    def on_post(self, h, body: dict):
        if ':countTokens' in h.path: return h.send(200, b'{"totalTokens":1}')
        parts = self.answer(body)
        if ':streamGenerateContent' in h.path:
            return h.send(200, f'data: {json.dumps(_chunk(parts))}\r\n\r\n'.encode(), 'text/event-stream')
        h.send(200, json.dumps(_chunk(parts)).encode())

    def steps_taken(self, body: dict) -> int: return sum(1 for c in body.get('contents', []) if c.get('role') == 'model')

    def answer(self, body: dict) -> list[dict]:
        "The parts answering one request: the script step for the main loop, a side answer otherwise."
        if not body.get('tools'):
            cfg = body.get('generationConfig') or {}
            if cfg.get('responseMimeType') == 'application/json' or cfg.get('responseJsonSchema') or cfg.get('responseSchema'):
                return [text('{}')]
            return [text('ok')]
        return self.scripted(body, [text('done')])

    def env(self) -> dict:
        "Environment variables pointing a Gemini CLI process at this server."
        return {'GOOGLE_GEMINI_BASE_URL': self.url, 'GEMINI_API_KEY': 'fake-gemini-key'}
