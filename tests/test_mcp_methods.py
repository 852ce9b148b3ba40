"""MCP method rules of the real `caveman-mcp`, on raw lines (SPEC §8, §13, §14.1–3; reference §7.2–7.10, §10.1, §10.4).

Each test writes JSON-RPC lines to the installed console script and checks the replies. The rules
that need a misbehaving tool run against `tests/_caveman_faults.py` (the real server with a raising
`caveman_stats` and a printing `caveman_toon_encode`). Expected values come from the spec, never
from the server's own output.
"""
import json, math, os, subprocess, time

import pytest

import caveman
from caveman import ccr
from caveman.corpus import corpus_path
from _mcp_lines import MIB16, RESULT_CAP_ENV, Live, call, err, ok, replies, req, run, tool_text
from conftest import server_command

FIVE = ['caveman_compress', 'caveman_retrieve', 'caveman_stats', 'caveman_toon_encode', 'caveman_toon_decode']
INIT_RESULT = {'protocolVersion': '2024-11-05', 'capabilities': {'tools': {}},
               'serverInfo': {'name': 'caveman', 'version': caveman.__version__}}


def tool_error(reply) -> dict:
    text, is_error = tool_text(reply)
    assert is_error, text
    e = json.loads(text)
    assert set(e) == {'error', 'message'} and e['error'].startswith('cave_'), e
    return e


# --- initialize, ping, notifications -----------------------------------------------------------

def test_initialize_twice_and_ping_with_or_without_params():
    "A client may initialize again; 2024-11-05 stays byte-identical to what it always was (the version table is tests/test_mcp_versions.py)."
    r = run('caveman-mcp', b'\n'.join([req(1, 'initialize', params={'protocolVersion': '2024-11-05'}), req(2, 'initialize', params={'protocolVersion': '2025-06-18'}),
                                       req(3), req(4, params={}), req(5, params={'_meta': {'progressToken': 1}})]) + b'\n')
    out = replies(r)
    assert out[0] == ok(1, INIT_RESULT) and out[1]['result']['protocolVersion'] == '2025-06-18'
    assert out[2:] == [ok(3), ok(4), ok(5)]


@pytest.mark.parametrize('method', ['notifications/initialized', 'notifications/cancelled', 'notifications/progress',
                                    'notifications/roots/list_changed', 'notifications/anything'])
def test_notifications_are_never_answered_even_with_an_id(method):
    r = run('caveman-mcp', req(5, method, params={'requestId': 1}) + b'\n' + req(6, method) + b'\n' + req(7) + b'\n')
    assert replies(r) == [ok(7)]


def test_ids_from_zero_as_the_inspector_sends_them():
    "The MCP Inspector numbers its requests from 0: initialize 0, tools/list 1, tools/call 2 …"
    lines = [req(0, 'initialize', params={'protocolVersion': '2024-11-05', 'capabilities': {}, 'clientInfo': {'name': 'i', 'version': '0'}}),
             b'{"jsonrpc":"2.0","method":"notifications/initialized"}', req(1, 'tools/list'),
             call(2, 'caveman_stats', {}), req(3)]
    out = replies(run('caveman-mcp', b'\n'.join(lines) + b'\n'))
    assert [m['id'] for m in out] == [0, 1, 2, 3]
    assert out[0] == ok(0, INIT_RESULT) and out[3] == ok(3)
    assert [t['name'] for t in out[1]['result']['tools']] == FIVE
    assert json.loads(tool_text(out[2])[0])['scope'] == 'session'


def test_server_discover_without_meta_is_refused_at_once():
    """A `server/discover` without the 2026-07-28 `_meta` is malformed: −32602 at once, so a probing client
    falls back to `initialize` without waiting out its timeout (the modern answer is in tests/test_mcp_versions.py)."""
    with Live('caveman-mcp') as s:
        t0 = time.perf_counter()
        s.send(req(0, 'server/discover', params={'protocolVersion': '2026-07-28'}))
        r = s.reply()
        assert (r['id'], r['error']['code']) == (0, -32602) and 'io.modelcontextprotocol/protocolVersion' in r['error']['message']
        secs = time.perf_counter() - t0
        s.send(req(1, 'initialize', params={'protocolVersion': '2024-11-05'}))
        assert s.reply() == ok(1, INIT_RESULT)
        assert s.close() == 0
    assert secs < 3, secs


# --- tools/list --------------------------------------------------------------------------------

def test_tools_list_is_the_five_tools_with_object_schemas():
    out = replies(run('caveman-mcp', req(1, 'tools/list') + b'\n' + req(2, 'tools/list', params={'cursor': 'x'}) + b'\n'))
    assert out[0] == out[1] | {'id': 1}
    tools = out[0]['result']['tools']
    assert set(out[0]['result']) == {'tools'} and [t['name'] for t in tools] == FIVE
    for t in tools:
        assert set(t) == {'name', 'description', 'inputSchema'} and t['description']        # no _meta for these five
        schema = t['inputSchema']
        assert schema['type'] == 'object' and set(schema) <= {'type', 'properties', 'required'}
        assert all(p['type'] == 'string' and p['description'] for p in schema['properties'].values())
        assert set(schema.get('required', [])) <= set(schema['properties'])
    assert 'verified' not in json.dumps(tools).lower()


# --- tools/call params -------------------------------------------------------------------------

@pytest.mark.parametrize('params', [None, [], 'x', 5, {}, {'name': 5}, {'name': None}, {'arguments': {}}, {'name': ['caveman_stats']}])
def test_undecodable_tools_call_params_are_invalid_params(params):
    line = req(1, 'tools/call') if params is None else req(1, 'tools/call', params=params)
    assert replies(run('caveman-mcp', line + b'\n' + req(2) + b'\n')) == [err(-32602, 'invalid tool-call params', 1), ok(2)]


def test_unknown_tool_and_bad_arguments_are_tool_errors():
    lines = [call(1, 'no_such_tool', {}), call(2, 'caveman_compress', 'not an object'), call(3, 'caveman_compress', {'input': 5}),
             call(4, 'caveman_retrieve', {}), call(5, 'caveman_retrieve', {'recovery_handle': '<< ccr: >>'}),
             call(6, 'caveman_toon_encode', {'input': ''}), call(7, 'caveman_toon_decode', {}), call(8, 'caveman_compress')]
    out = replies(run('caveman-mcp', b'\n'.join(lines) + b'\n'))
    assert tool_error(out[0]) == {'error': 'cave_unknown_tool', 'message': 'unknown tool: no_such_tool'}
    assert [tool_error(o)['error'] for o in out[1:]] == ['cave_invalid_arguments'] * 7
    assert tool_error(out[3])['message'] == 'retrieve: missing recovery_handle'
    assert tool_error(out[4])['message'] == 'retrieve: missing recovery_handle'


# --- handler failures --------------------------------------------------------------------------

def test_a_tool_that_raises_is_cave_tool_panicked_and_the_next_call_succeeds():
    r = run('caveman-mcp+faults', call(1, 'caveman_stats', {}) + b'\n' + call(2, 'caveman_toon_decode', {'input': 'a: 1'}) + b'\n')
    first, second = replies(r)
    assert tool_error(first) == {'error': 'cave_tool_panicked', 'message': 'caveman_stats failed: RuntimeError'}
    assert 'stats failed on purpose' not in json.dumps(first)                 # the exception text stays in the log
    assert 'tool caveman_stats panicked' in r.stderr.decode() and 'stats failed on purpose' in r.stderr.decode()
    assert tool_text(second) == ('{"a":1}', False)


def test_a_tool_that_prints_cannot_corrupt_stdout():
    rows = json.dumps([{'id': i, 'name': f'n{i}'} for i in range(3)])
    r = run('caveman-mcp+faults', call(1, 'caveman_toon_encode', {'input': rows}) + b'\n' + req(2) + b'\n')
    first, second = replies(r)                                                # stdout holds exactly two JSON lines
    assert json.loads(tool_text(first)[0])['encoded'] is True and second == ok(2)
    for noise in [b'toon: print to sys.stdout', b'toon: sys.stdout.write', b'toon: os.write to fd 1', b'toon: a child process printing']:
        assert noise in r.stderr


# --- the result cap ------------------------------------------------------------------------------

def test_result_cap_refuses_big_results_but_never_retrieve(tmp_path):
    "Reference §10.1 with the cap lowered to 512 bytes: a 4 KiB result becomes cave_payload_too_large (payload not echoed); retrieve is exempt."
    db = tmp_path / 'ccr.db'
    original = json.dumps([{'id': i, 'v': 'x' * 40} for i in range(60)]).encode()
    handle = ccr.open_store(str(db)).put(original)
    big = json.dumps([{'id': i, 'name': f'name-{i}'} for i in range(200)])
    lines = [call(1, 'caveman_toon_encode', {'input': big}), call(2, 'caveman_compress', {'input': 'y' * 4096}),
             call(3, 'caveman_retrieve', {'recovery_handle': handle}), call(4, 'caveman_stats', {})]
    out = replies(run('caveman-mcp', b'\n'.join(lines) + b'\n', CAVEMAN_CCR_DB=str(db), **{RESULT_CAP_ENV: '512'}))
    for o in out[:2]:
        e = tool_error(o)
        assert e['error'] == 'cave_payload_too_large'
        n = int(e['message'].split()[1])
        assert n > 512 and e['message'] == f'result {n} bytes exceeds cap 512; request a narrower slice'
        assert 'name-7' not in json.dumps(o) and 'yyyy' not in json.dumps(o)
    assert tool_text(out[2]) == (original.decode(), False)
    assert tool_text(out[3])[1] is False                                      # small results still pass


@pytest.mark.slow
def test_retrieve_returns_16_mib_plus_4_kib_exactly_under_the_default_caps(tmp_path):
    "Reference §10.1: a retrieve result of 16 MiB + 4096 bytes comes back byte-exact, not cave_payload_too_large."
    db = tmp_path / 'ccr.db'
    line = b'2026-01-01T00:00:00Z level=info msg="request served" path=/api/v1/items status=200 bytes=512\n'
    original = (line * ((MIB16 + 4096) // len(line) + 1))[:MIB16 + 4096]
    assert len(original) == MIB16 + 4096
    handle = ccr.open_store(str(db)).put(original)
    r = run('caveman-mcp', call(7, 'caveman_retrieve', {'recovery_handle': f'<<ccr:{handle}>>'}) + b'\n' + req(8) + b'\n', CAVEMAN_CCR_DB=str(db))
    first, second = replies(r)
    text, is_error = tool_text(first)
    assert not is_error and len(text) == MIB16 + 4096 and text.encode() == original
    assert second == ok(8)


# --- the five tools on the wire ------------------------------------------------------------------

def test_each_tool_round_trip_on_raw_lines(tmp_path):
    "compress a real log, retrieve it byte-exact (bare and marker spellings), narrow it with a query, stats, TOON both ways."
    db = tmp_path / 'home' / 'ccr.db'
    log_text = corpus_path('log_pip_install_verbose.log').read_text()
    rows = json.dumps({'hikes': [{'id': i, 'name': n} for i, n in [(1, 'Blue Lake'), (2, 'Ridge'), (3, 'Wildflower')]]})
    with Live('caveman-mcp', CAVEMAN_CCR_DB=str(db)) as s:
        s.send(call(1, 'caveman_compress', {'input': log_text}))
        p = json.loads(tool_text(s.reply())[0])
        assert list(p)[:7] == ['compressed', 'ratio', 'tokens_before', 'tokens_after', 'basis', 'content_type', 'recovery_handle']
        assert p['basis'] == 'inferred' and p['content_type'] == 'log' and 0 < p['ratio'] < 1 and p['recovery_handle'].startswith('ccr_')
        h = p['recovery_handle']
        assert db.is_file()                                                   # SPEC §14.2: the store directory was created
        s.send(call(2, 'caveman_retrieve', {'recovery_handle': h}), call(3, 'caveman_retrieve', {'recovery_handle': f'ccr:{h}', 'query': 'Successfully installed'}))
        assert tool_text(s.reply()) == (log_text, False)
        view = tool_text(s.reply())[0]
        assert '… [caveman: non-adjacent] …' in view and 'Successfully installed' in view and len(view) < len(log_text)
        s.send(call(4, 'caveman_toon_encode', {'input': rows}))
        enc = json.loads(tool_text(s.reply())[0])
        assert enc['encoded'] is True and (enc['input_bytes'], enc['output_bytes']) == (len(rows.encode()), len(enc['output'].encode()))
        s.send(call(5, 'caveman_toon_decode', {'input': enc['output']}))
        assert json.loads(tool_text(s.reply())[0]) == json.loads(rows)
        s.send(call(6, 'caveman_stats'))
        st = json.loads(tool_text(s.reply())[0])
        assert (st['requests'], st['tokens_before'], st['tokens_after'], st['basis'], st['scope']) == (1, p['tokens_before'], p['tokens_after'], 'inferred', 'session')
        assert list(st)[:6] == ['tokens_before', 'tokens_after', 'requests', 'ratio', 'basis', 'scope']
        assert s.close() == 0


def test_stats_ratio_is_zero_and_finite_with_no_requests_and_with_empty_input():
    "Each call waits for the reply to the one before: tool calls run concurrently, so only that orders stats around the compress."
    out = []
    with Live('caveman-mcp') as s:
        for line in (call(1, 'caveman_stats'), call(2, 'caveman_compress', {'input': ''}), call(3, 'caveman_stats', {})):
            s.send(line); out.append(s.reply())
        assert s.close() == 0
    text = json.dumps(out)
    assert 'NaN' not in text and 'Infinity' not in text and 'verified' not in text.lower()
    first, compressed, after = (json.loads(tool_text(o)[0]) for o in out)
    assert (first['requests'], first['ratio'], first['tokens_before']) == (0, 0, 0)
    assert (compressed['tokens_before'], compressed['ratio'], compressed['recovery_handle']) == (0, 0, None)
    assert (after['requests'], after['ratio']) == (1, 0) and math.isfinite(after['ratio'])


# --- the command line ----------------------------------------------------------------------------

def test_version_json():
    r = subprocess.run(server_command() + ['version', '--json'], capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stderr == b''
    assert json.loads(r.stdout) == {'capabilities': ['mcp_recovery', 'build_stamped_version'], 'schema': 'caveman.mcp.version.v1',
                                    'version': caveman.__version__}
    assert r.stdout.count(b'\n') == 1


@pytest.mark.parametrize('args', [['version', '--json', 'x'], ['--json', 'version'], ['serve'], [''], ['--verison'], ['--http']])
def test_any_other_argument_is_a_usage_error(args):
    r = subprocess.run(server_command() + args, capture_output=True, timeout=60, input=req(1) + b'\n')
    assert (r.returncode, r.stdout) == (2, b'')
    assert r.stderr.startswith(b'usage: caveman-mcp ') and r.stderr.count(b'\n') == 1


@pytest.mark.parametrize('args,first', [(['--help'], b'usage: caveman-mcp '), (['-h'], b'usage: caveman-mcp '),
                                        (['--version'], b'caveman-mcp ' + caveman.__version__.encode()), (['version'], b'caveman-mcp ')])
def test_help_and_version_exit_0_on_stdout(args, first):
    r = subprocess.run(server_command() + args, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert (r.returncode, r.stderr) == (0, b'') and r.stdout.startswith(first)
