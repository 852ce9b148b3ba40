"""Property test: no line of bytes can stop or corrupt the serve loop.

Thousands of generated lines — valid requests mutated byte-wise, random bytes, random JSON, batches,
huge and odd ids, deep nesting, lone surrogates, BOMs and CRs, lines over the cap, and tool calls
with random arguments — go into ONE server process: the real `caveman-mcp`, and separately
`tests/_echo_server.py` (the same layers around a toy dispatch). After each line a `ping` with a
fresh id is sent and awaited, so each example checks that the server is still running and that
everything it wrote meanwhile is well-formed JSON-RPC. At the end a last `ping` is answered and
closing stdin ends the process with status 0.
"""
import json, queue, subprocess, threading

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from _mcp_lines import CAP_ENV, command, server_env

CAP = 8192                       # small, so over-long lines are cheap to generate; deep nesting still fits
EXAMPLES = 2200
METHODS = ['ping', 'echo', 'boom', 'exit', 'noisy', 'tools/list', 'tools/call', 'initialize', 'server/discover',
           'notifications/initialized', '']

# --- strategies --------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)

def _lexeme(sign, digits, frac, exp):
    return f'{sign}{digits}{"." + frac if frac else ""}{"e" + exp if exp else ""}'

number_lexemes = st.builds(_lexeme, st.sampled_from(['', '-']),
                           st.one_of(st.just('0'), st.integers(1, 10**30).map(str), st.integers(1, 6000).map(lambda n: '9' * n)),
                           st.one_of(st.just(''), st.from_regex(r'[0-9]{1,12}', fullmatch=True)),
                           st.one_of(st.just(''), st.from_regex(r'[+-]?[0-9]{1,4}', fullmatch=True)))
lone_surrogates = st.sampled_from(['"\\ud800"', '"\\udfff"', '"a\\ud83d"', '"\\ude00b"', '"\\ud800\\ud800"'])
ids = st.one_of(st.integers(-10**20, 10**20).map(str), number_lexemes, st.text(max_size=12).map(json.dumps),
                lone_surrogates, st.sampled_from(['null', 'true', '[]', '{}', '""', '"7"', '0']))

@st.composite
def requests(draw) -> bytes:
    "A JSON-RPC request (or notification) as text, ids and params spelled in every way JSON allows."
    members = ['"jsonrpc":"2.0"'] if draw(st.booleans()) else []
    if draw(st.integers(0, 4)): members.append('"id":' + draw(ids))
    members.append('"method":' + json.dumps(draw(st.sampled_from(METHODS) | st.text(max_size=10))))
    if draw(st.booleans()):
        members.append('"params":' + draw(json_values.map(json.dumps) | lone_surrogates | number_lexemes))
    members = draw(st.permutations(members))
    return ('{' + ','.join(members) + '}').encode('utf-8', 'surrogatepass')

@st.composite
def mutated(draw) -> bytes:
    "A valid request, then 1-8 byte-level edits: flip a byte, insert one, delete one, or duplicate a span."
    data = bytearray(draw(requests()))
    for _ in range(draw(st.integers(1, 8))):
        op, pos = draw(st.sampled_from(['flip', 'insert', 'delete', 'dup'])), draw(st.integers(0, len(data)))
        b = draw(st.integers(0, 255))
        if op == 'flip' and pos < len(data): data[pos] ^= b or 1
        elif op == 'insert': data[pos:pos] = bytes([b])
        elif op == 'delete': del data[pos:pos + 1]
        elif op == 'dup': data[pos:pos] = data[pos:pos + draw(st.integers(1, 16))]
    return bytes(data)

batches = st.lists(requests() | json_values.map(lambda v: json.dumps(v).encode()), max_size=6).map(lambda xs: b'[' + b','.join(xs) + b']')
deep = st.builds(lambda n, open_, close_, tail: open_ * n + tail + close_ * n * tail.startswith(b'1'),
                 st.integers(1, 2500), st.sampled_from([b'[', b'{"a":']), st.sampled_from([b']', b'}']), st.sampled_from([b'1', b'']))
framing = st.tuples(st.sampled_from([b'', b'\xef\xbb\xbf', b' \t', b'\xef\xbb\xbf\xef\xbb\xbf']), requests() | batches,
                    st.sampled_from([b'', b'\r', b' \r', b'\r\r', b'\x00'])).map(b''.join)
over_long = st.integers(CAP, 3 * CAP).map(lambda n: b'x' * n)
invalid_utf8 = st.builds(lambda pre, bad, post: pre + bad + post, requests().map(lambda r: r[:20]),
                         st.sampled_from([b'\xff', b'\xc3\x28', b'\xed\xa0\x80', b'\xf4\x90\x80\x80', b'\xc0\xaf', b'\xe2\x82']), requests())

TOOLS = ['caveman_compress', 'caveman_retrieve', 'caveman_stats', 'caveman_toon_encode', 'caveman_toon_decode', 'caveman_nope']
ARG_NAMES = ['input', 'content_type', 'type', 'recovery_handle', 'query']
small_text = st.text(max_size=300) | st.sampled_from(['{"a": [1, 2', '[{"id": 1}, {"id": 2}]', 'rows[2]{id}:\n  1\n  2',
                                                      'ccr_' + '0' * 32, '<<ccr:ccr_x>>', 'ccr://', 'json', 'toon', 'log'])
arguments = st.one_of(st.dictionaries(st.sampled_from(ARG_NAMES), small_text | json_values, max_size=4), json_values)

@st.composite
def tool_calls(draw) -> bytes:
    "A tools/call request for one of the five tools (or an unknown one) with random, often wrong, arguments."
    params = {'name': draw(st.sampled_from(TOOLS))}
    if draw(st.integers(0, 5)): params['arguments'] = draw(arguments)
    return json.dumps({'jsonrpc': '2.0', 'id': draw(st.integers(0, 10**6)), 'method': 'tools/call', 'params': params}).encode()

lines = st.one_of(requests(), mutated(), mutated(), st.binary(max_size=200), json_values.map(lambda v: json.dumps(v).encode()),
                  batches, deep, framing, over_long, invalid_utf8, ids.map(str.encode), tool_calls(), tool_calls().map(lambda b: b'[' + b + b']'))

# --- the server --------------------------------------------------------------------------------

def well_formed(msg) -> bool:
    "One JSON-RPC 2.0 response object, or a non-empty array of them."
    if isinstance(msg, list): return bool(msg) and all(isinstance(m, dict) and well_formed(m) for m in msg)
    if not isinstance(msg, dict) or msg.get('jsonrpc') != '2.0' or 'id' not in msg: return False
    if 'result' in msg: return set(msg) == {'jsonrpc', 'id', 'result'}
    e = msg.get('error')
    return set(msg) == {'jsonrpc', 'id', 'error'} and isinstance(e, dict) and isinstance(e.get('code'), int) and isinstance(e.get('message'), str)


@pytest.mark.parametrize('kind', ['caveman-mcp', 'echo'])
def test_no_line_stops_or_corrupts_the_server(kind, tmp_path):
    env = server_env(kind, **{CAP_ENV: str(CAP)})
    with open(tmp_path / 'stderr.log', 'wb') as err:
        p = subprocess.Popen(command(kind), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env)
        out = queue.Queue()
        threading.Thread(target=lambda: [out.put(l) for l in iter(p.stdout.readline, b'')] + [out.put(None)], daemon=True).start()
        fed, answered = [0], [0]

        def sync(tag: str):
            "Send a ping with id `tag`; check every line up to its answer."
            p.stdin.write(b'{"jsonrpc":"2.0","id":"%s","method":"ping"}\n' % tag.encode()); p.stdin.flush()
            while True:
                raw = out.get(timeout=30)
                assert raw is not None, f'server exited before EOF (status {p.wait()})'
                assert raw.endswith(b'\n')
                msg = json.loads(raw, parse_int=lambda s: int(s) if len(s) < 4000 else s)   # valid UTF-8 and JSON (long ids kept as text)
                assert well_formed(msg), raw[:300]
                if msg == {'jsonrpc': '2.0', 'id': tag, 'result': {}}: return
                answered[0] += 1

        @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(lines)
        def feed(line: bytes):
            p.stdin.write(line + b'\n')
            fed[0] += 1
            sync(f'sync-{fed[0]}')
            assert p.poll() is None

        try:
            feed()
            assert fed[0] >= 2000, fed[0]
            assert answered[0] > fed[0] // 2, (answered[0], fed[0])   # the lines were mostly answered, not silently dropped
            sync('final')
            p.stdin.close()
            assert out.get(timeout=30) is None                       # nothing after the final ping
            assert p.wait(timeout=30) == 0
        finally:
            if p.poll() is None: p.kill()
    print(f'\nfuzz ({kind}): {fed[0]} lines, {answered[0]} responses, one server process')
