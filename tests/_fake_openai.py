"""A fake OpenAI Responses API on 127.0.0.1 that scripts the model for the real Codex CLI.

`FakeOpenAI(script)` serves `POST /v1/responses` (streaming SSE), records every request body in `.requests`,
and answers from `script`: step *i* (the number of `function_call_output` items already in the request's
`input`) is `script[i]`, a list of output items — `function_call(name, arguments)` or `message(text)` — or a
callable `(request_body) -> items`. Past the end of the script it answers "done". Anything else
(`GET /v1/models`, …) gets an empty answer.

    with FakeOpenAI([[function_call('exec_command', {'cmd': 'ls'})]]) as api:
        api.provider_toml()        # the [model_providers.fake] table pointing Codex here
        api.main_requests()        # the recorded bodies of /v1/responses, in order
"""
import itertools, json

from _fake_api import LoopbackServer

_ids = itertools.count(1)
ENV_KEY = 'CAVEMAN_FAKE_OPENAI_KEY'


def function_call(name: str, arguments: dict, call_id: str | None = None, namespace: str | None = None) -> dict:
    "A scripted `function_call` output item (`namespace`: the tool namespace, e.g. `mcp__<server>` for an MCP tool)."
    item = {'type': 'function_call', 'id': f'fc_{next(_ids):06d}', 'call_id': call_id or f'call_{next(_ids):06d}',
            'name': name, 'arguments': json.dumps(arguments), 'status': 'completed'}
    return dict(item, namespace=namespace) if namespace else item


def message(text: str) -> dict:
    "A scripted assistant message item."
    return {'type': 'message', 'id': f'msg_{next(_ids):06d}', 'role': 'assistant', 'status': 'completed',
            'content': [{'type': 'output_text', 'text': text, 'annotations': []}]}


def call_outputs(body: dict) -> dict[str, str]:
    "call_id -> the output text of every `function_call_output` item of a request body."
    out = {}
    for it in body.get('input', []):
        if isinstance(it, dict) and it.get('type') in ('function_call_output', 'custom_tool_call_output'):
            o = it.get('output')
            if isinstance(o, list): o = ''.join(p.get('text', '') for p in o if isinstance(p, dict))
            elif isinstance(o, dict): o = o.get('content', json.dumps(o))
            out[it['call_id']] = o
    return out


def _sse(items: list[dict], model: str) -> bytes:
    rid = f'resp_{next(_ids):06d}'
    ev = []
    def add(kind, data): ev.append(f'event: {kind}\ndata: {json.dumps(dict(data, type=kind))}\n\n')
    base = {'id': rid, 'object': 'response', 'model': model, 'status': 'in_progress', 'output': []}
    add('response.created', {'response': base})
    for i, it in enumerate(items):
        add('response.output_item.added', {'output_index': i, 'item': it})
        add('response.output_item.done', {'output_index': i, 'item': it})
    add('response.completed', {'response': dict(base, status='completed', output=items,
                                                usage={'input_tokens': 1, 'input_tokens_details': {'cached_tokens': 0},
                                                       'output_tokens': 1, 'output_tokens_details': {'reasoning_tokens': 0},
                                                       'total_tokens': 2})})
    return ''.join(ev).encode()


class FakeOpenAI(LoopbackServer):
    "The fake Responses API; a context manager that runs it on a free 127.0.0.1 port in a daemon thread."
    def __init__(self, script=()): super().__init__(script, '/v1')

    def on_get(self, h): h.send(200, b'{"object":"list","data":[],"models":[]}')

    def on_post(self, h, body: dict):
        if not self.is_main(body, h.path): return h.send(404, self.not_found)
        h.send(200, _sse(self.answer(body), body.get('model', 'fake')), 'text/event-stream')

    def is_main(self, body: dict, path: str) -> bool: return path.rstrip('/').endswith('/responses')

    def steps_taken(self, body: dict) -> int:
        return sum(1 for it in body.get('input', []) if isinstance(it, dict) and it.get('type') in ('function_call_output', 'custom_tool_call_output'))

    def answer(self, body: dict) -> list[dict]:
        "The output items answering one request: the script step for the main loop."
        return self.scripted(body, [message('done')])

    def provider_toml(self) -> str:
        "config.toml lines selecting a model provider that points at this server."
        return (f'model = "gpt-5-codex"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
                f'base_url = "{self.url}"\nwire_api = "responses"\nenv_key = "{ENV_KEY}"\n'
                f'request_max_retries = 0\nstream_max_retries = 0\n')

    def env(self) -> dict:
        return {ENV_KEY: 'sk-fake-openai-key'}
