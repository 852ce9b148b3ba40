"""Raw-line helpers shared by the MCP framing, method and fuzz tests.

Three servers speak the same framing:
- `echo`: `tests/_echo_server.py`, caveman's transport and JSON-RPC layer around a toy dispatch;
- `caveman-mcp`: the installed console script, unmodified (in-memory store unless a test passes one);
- `caveman-mcp+faults`: `tests/_caveman_faults.py`, the real server with planted faults (`boom`,
  `exit`, `noisy` methods; a raising `caveman_stats`; a printing `caveman_toon_encode`).
"""
import json, os, queue, subprocess, sys, threading
from pathlib import Path

from conftest import server_command, child_env

HERE = Path(__file__).resolve().parent
CAP_ENV = 'CAVEMAN_MCP_MAX_INBOUND_BYTES'
RESULT_CAP_ENV = 'CAVEMAN_MCP_MAX_RESULT_BYTES'
MIB16 = 16 * 1024 * 1024
CLEARED = (CAP_ENV, RESULT_CAP_ENV, 'CAVEMAN_LOG_LEVEL', 'CAVEMAN_MCP_EPHEMERAL', 'CAVEMAN_CCR_DB', 'CAVEMAN_HOME')


def command(kind: str) -> list[str]:
    if kind == 'echo': return [sys.executable, str(HERE / '_echo_server.py')]
    if kind == 'caveman-mcp': return server_command()
    if kind == 'caveman-mcp+faults': return [sys.executable, str(HERE / '_caveman_faults.py')]
    raise ValueError(kind)


def server_env(kind: str, **extra) -> dict:
    "The test process's environment without caveman settings; caveman servers get an in-memory store unless `extra` names one."
    ephemeral = {'CAVEMAN_MCP_EPHEMERAL': '1'} if kind != 'echo' and 'CAVEMAN_CCR_DB' not in extra else {}
    return child_env(**{**ephemeral, **extra})


def run(kind: str, data: bytes, timeout=180, **env) -> subprocess.CompletedProcess:
    "Feed `data` to a fresh server of `kind`, close stdin, wait for exit status 0."
    r = subprocess.run(command(kind), input=data, capture_output=True, env=server_env(kind, **env), timeout=timeout)
    assert r.returncode == 0, r.stderr.decode(errors='replace')[-3000:]
    r.sent = data
    return r


def _request_ids(data: bytes) -> list:
    "The id of each request line of `data` in order (None for lines that are not one request with an id)."
    out = []
    for line in data.split(b'\n'):
        try: msg = json.loads(line.decode('utf-8', 'replace').strip().lstrip('\ufeff'))   # as the server salvages an id
        except (ValueError, RecursionError): msg = None
        out.append(json.dumps(msg['id']) if isinstance(msg, dict) and msg.get('id') is not None else None)
    return out


def in_request_order(out: list, sent: bytes) -> list:
    "Replies with an id put in the order their requests were sent; tool calls run concurrently, so their replies may come later than those to lines read after them. Replies without an id (answered as lines are read) keep their places."
    ids, used = _request_ids(sent), set()
    def position(m):
        key = json.dumps(m['id'])
        i = next((i for i, k in enumerate(ids) if k == key and i not in used), len(ids))
        used.add(i)
        return i
    slots = [k for k, m in enumerate(out) if isinstance(m, dict) and m.get('id') is not None]
    ordered = sorted((out[k] for k in slots), key=position)
    out = list(out)
    for k, m in zip(slots, ordered): out[k] = m
    return out


def replies(r: subprocess.CompletedProcess) -> list:
    "stdout as parsed JSON lines, in request order (`in_request_order`); every line must be JSON and the stream must end with a newline."
    assert r.stdout == b'' or r.stdout.endswith(b'\n'), r.stdout[-200:]
    out = [json.loads(line) for line in r.stdout.split(b'\n')[:-1]]
    return in_request_order(out, getattr(r, 'sent', b''))


def ok(rid, result=None) -> dict: return {'jsonrpc': '2.0', 'id': rid, 'result': {} if result is None else result}
def err(code, message, rid=None) -> dict: return {'jsonrpc': '2.0', 'id': rid, 'error': {'code': code, 'message': message}}
def req(rid, method='ping', **kw) -> bytes: return json.dumps({'jsonrpc': '2.0', 'id': rid, 'method': method, **kw}).encode()
def call(rid, tool, arguments=None) -> bytes:
    params = {'name': tool} if arguments is None else {'name': tool, 'arguments': arguments}
    return req(rid, 'tools/call', params=params)

PARSE = err(-32700, 'parse error')


def tool_text(reply: dict) -> tuple[str, bool]:
    "(text, isError) of a tools/call reply, checking the envelope shape of reference §7.3."
    res = reply['result']
    assert set(res) == {'content', 'isError'} and len(res['content']) == 1 and res['content'][0]['type'] == 'text', res
    return res['content'][0]['text'], res['isError']


class Live:
    "A running server: write lines, read parsed replies one at a time; closing stdin must end it with status 0."
    def __init__(self, kind: str, stderr=subprocess.DEVNULL, **env):
        self.p = subprocess.Popen(command(kind), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                  env=server_env(kind, **env))
        self.lines = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in iter(self.p.stdout.readline, b''): self.lines.put(line)
        self.lines.put(None)

    def send(self, *lines: bytes):
        self.p.stdin.write(b''.join(l + b'\n' for l in lines)); self.p.stdin.flush()

    def raw(self, timeout=60) -> bytes | None:
        return self.lines.get(timeout=timeout)

    def reply(self, timeout=60):
        line = self.raw(timeout)
        assert line is not None, f'server exited before EOF (status {self.p.wait()})'
        assert line.endswith(b'\n')
        return json.loads(line)

    def close(self, timeout=60) -> int:
        "Close stdin; the server may still send replies to tool calls it was running (each a whole JSON-RPC response line), then must exit."
        self.p.stdin.close()
        while (rest := self.lines.get(timeout=timeout)) is not None:
            assert rest.endswith(b'\n') and 'id' in json.loads(rest), f'unexpected output after the last reply: {rest[:200]!r}'
        return self.p.wait(timeout=timeout)

    def __enter__(self): return self
    def __exit__(self, *exc):
        if self.p.poll() is None: self.p.kill(); self.p.wait()
