"""A fake Anthropic Messages API on 127.0.0.1 that scripts the model for a real agent host (Claude Code).

`FakeAnthropic(script)` serves `POST /v1/messages` (streaming SSE or plain JSON), records every request
body in `.requests`, and answers the host's main loop from `script`: step *i* (the number of assistant
turns already in the request's `messages`) is `script[i]`, a list of blocks — `tool_use(name, input)` or
`text(...)` — or a callable `(request_body) -> blocks`. Past the end of the script it answers "done". A
request without `tools` (the host's side calls: titles, summaries, WebFetch's page digest) gets the text
`side` (default: echo the tail of the last user message).

    with FakeAnthropic([[tool_use('Bash', {'command': 'ls'})]]) as api:
        env = api.env()            # ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY for the host
        ...
        api.main_requests()        # the recorded bodies of the main loop, in order
"""
import itertools, json

from _fake_api import LoopbackServer

_ids = itertools.count(1)


def tool_use(name: str, input: dict, id: str | None = None) -> dict:
    "A scripted `tool_use` block."
    return {'type': 'tool_use', 'id': id or f'toolu_{next(_ids):06d}', 'name': name, 'input': input}


def text(s: str) -> dict:
    "A scripted text block."
    return {'type': 'text', 'text': s}


def tool_results(body: dict) -> list[dict]:
    "Every `tool_result` block of a request body, in order."
    out = []
    for m in body.get('messages', []):
        if isinstance(m.get('content'), list):
            out += [b for b in m['content'] if isinstance(b, dict) and b.get('type') == 'tool_result']
    return out


def result_text(block: dict) -> str:
    "The text of a `tool_result` block (a string, or the text parts of a content list)."
    c = block.get('content', '')
    if isinstance(c, str): return c
    return ''.join(p.get('text', '') for p in c if isinstance(p, dict) and p.get('type') == 'text')


def _sse(blocks: list[dict], model: str) -> bytes:
    ev = []
    def add(kind, data): ev.append(f'event: {kind}\ndata: {json.dumps(data)}\n\n')
    add('message_start', {'type': 'message_start', 'message': {
        'id': f'msg_{next(_ids):06d}', 'type': 'message', 'role': 'assistant', 'model': model, 'content': [],
        'stop_reason': None, 'stop_sequence': None, 'usage': {'input_tokens': 1, 'output_tokens': 1}}})
    for i, b in enumerate(blocks):
        if b['type'] == 'tool_use':
            add('content_block_start', {'type': 'content_block_start', 'index': i,
                                        'content_block': {'type': 'tool_use', 'id': b['id'], 'name': b['name'], 'input': {}}})
            add('content_block_delta', {'type': 'content_block_delta', 'index': i,
                                        'delta': {'type': 'input_json_delta', 'partial_json': json.dumps(b['input'])}})
        else:
            add('content_block_start', {'type': 'content_block_start', 'index': i, 'content_block': {'type': 'text', 'text': ''}})
            add('content_block_delta', {'type': 'content_block_delta', 'index': i, 'delta': {'type': 'text_delta', 'text': b['text']}})
        add('content_block_stop', {'type': 'content_block_stop', 'index': i})
    stop = 'tool_use' if any(b['type'] == 'tool_use' for b in blocks) else 'end_turn'
    add('message_delta', {'type': 'message_delta', 'delta': {'stop_reason': stop, 'stop_sequence': None}, 'usage': {'output_tokens': 1}})
    add('message_stop', {'type': 'message_stop'})
    return ''.join(ev).encode()


class FakeAnthropic(LoopbackServer):
    "The fake Messages API; a context manager that runs it on a free 127.0.0.1 port in a daemon thread."
    not_found = b'{"type":"error","error":{"type":"not_found_error","message":"no"}}'

    def __init__(self, script=(), side=None):
        super().__init__(script)
        self.side = side

    def on_post(self, h, body: dict):
        if not h.path.startswith('/v1/messages') or 'count_tokens' in h.path:
            return h.send(200, json.dumps({'input_tokens': 1}).encode())
        blocks = self.answer(body)
        model = body.get('model', 'fake')
        if body.get('stream'): return h.send(200, _sse(blocks, model), 'text/event-stream')
        stop = 'tool_use' if any(b['type'] == 'tool_use' for b in blocks) else 'end_turn'
        msg = {'id': f'msg_{next(_ids):06d}', 'type': 'message', 'role': 'assistant', 'model': model, 'content': blocks,
               'stop_reason': stop, 'stop_sequence': None, 'usage': {'input_tokens': 1, 'output_tokens': 1}}
        h.send(200, json.dumps(msg).encode())

    def steps_taken(self, body: dict) -> int: return sum(1 for m in body.get('messages', []) if m.get('role') == 'assistant')

    def answer(self, body: dict) -> list[dict]:
        "The blocks answering one request: the script step for the main loop, a side answer otherwise."
        if not body.get('tools'):
            if callable(self.side): return [text(self.side(body))]
            if self.side is not None: return [text(self.side)]
            msgs = body.get('messages') or [{}]
            last = msgs[-1].get('content', '')
            last = last if isinstance(last, str) else ''.join(b.get('text', '') for b in last if isinstance(b, dict))
            return [text(last[-4000:] or 'ok')]
        return self.scripted(body, [text('done')])

    def env(self) -> dict:
        "Environment variables pointing a Claude Code process at this server."
        return {'ANTHROPIC_BASE_URL': self.url, 'ANTHROPIC_API_KEY': 'sk-ant-fake-key'}
