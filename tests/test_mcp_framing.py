"""Framing rules of caveman-mcp, checked on raw lines against real server processes.

Every rule runs against the real `caveman-mcp` console script and against `tests/_echo_server.py`
(the same transport and JSON-RPC layer around a toy dispatch), so a rule that holds for the layer
but is broken by the server's wiring fails here. Rules that need a handler to misbehave run against
`tests/_caveman_faults.py` (the real server with planted `boom` / `exit` / `noisy` methods) instead
of the plain script. Each test sends bytes on stdin, closes it, and checks stdout byte by byte or
line by line. Expected values come from SPEC §8/§13/§14.1 and reference §7.1/§10.1.
"""
import json, re, subprocess, time
from pathlib import Path

import pytest

from _mcp_lines import CAP_ENV, MIB16, PARSE, RESULT_CAP_ENV, Live, command, err, ok, replies, req, run, server_env

BOTH = pytest.mark.parametrize('kind', ['echo', 'caveman-mcp'])
FAULTY = pytest.mark.parametrize('kind', ['echo', 'caveman-mcp+faults'])
ALL = pytest.mark.parametrize('kind', ['echo', 'caveman-mcp', 'caveman-mcp+faults'])


# --- tolerated line shapes -------------------------------------------------------------------

@BOTH
def test_bom_is_ignored(kind):
    r = run(kind, b'\xef\xbb\xbf' + req(1) + b'\n' + b'\xef\xbb\xbf' + req(2) + b'\n')
    assert replies(r) == [ok(1), ok(2)]


@BOTH
def test_crlf_line_ends(kind):
    r = run(kind, req(1) + b'\r\n' + req(2) + b'\r\n')
    assert r.stdout == b'{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","id":2,"result":{}}\n'


@BOTH
def test_blank_lines_get_no_answer(kind):
    r = run(kind, b'\n\n   \n\r\n\t\n' + req(1) + b'\n\n\n')
    assert replies(r) == [ok(1)]


@BOTH
def test_invalid_utf8_is_a_parse_error_and_the_loop_goes_on(kind):
    r = run(kind, b'\xff\xfe\xfd\n' + b'{"jsonrpc":"2.0","id":1,"method":"ping","params":"\xc3\x28"}\n' + b'\xed\xa0\x80\n' + req(2) + b'\n')
    # the request whose id can still be read is refused under that id, so its client is not left waiting
    utf8 = 'parse error: the request is not valid UTF-8'
    assert replies(r) == [err(-32700, utf8), err(-32700, utf8, 1), err(-32700, utf8), ok(2)]


@BOTH
def test_final_line_without_newline_is_answered(kind):
    assert replies(run(kind, req(1) + b'\n' + req(2))) == [ok(1), ok(2)]


@BOTH
def test_malformed_line_then_valid_request(kind):      # reference §10.1
    assert replies(run(kind, b'{"jsonrpc":"2.0","id":1,\n' + req(42) + b'\n')) == [PARSE, ok(42)]


INVALID = err(-32600, 'invalid request')

@BOTH
@pytest.mark.parametrize('line, expected', [
    (b'"just a string"', INVALID), (b'42', INVALID), (b'null', INVALID), (b'true', INVALID),    # JSON, but not a request object
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"} trailing', PARSE), (b'{"id":1,"method":"ping",}', PARSE),
    (b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}', PARSE), (b'{"id":1,"method":"ping","params":Infinity}', PARSE)])
def test_not_one_request_object(kind, line, expected):
    "Valid JSON of the wrong shape is an invalid request (−32600, JSON-RPC 2.0 §5); text that is not one JSON value (NaN and Infinity included) is −32700; both with id null."
    assert replies(run(kind, line + b'\n' + req(2) + b'\n')) == [expected, ok(2)]


# --- ids -------------------------------------------------------------------------------------

@BOTH
@pytest.mark.parametrize('rid', ['0', '""', '"7"', '-3', '123456789012345678901234567890123456789012345678901234567890',
                                 '1.5', '1.50', '2e10', '-0', '"café 😀"', '9' * 5000])
def test_id_is_echoed_byte_for_byte(kind, rid):
    r = run(kind, b'{"jsonrpc":"2.0","id":%s,"method":"ping"}\n' % rid.encode())
    assert r.stdout == b'{"jsonrpc":"2.0","id":%s,"result":{}}\n' % rid.encode()


@BOTH
def test_string_id_with_escapes_comes_back_as_the_same_string(kind):
    "An id written with escapes is echoed as the same JSON string (its escapes may be spelled differently)."
    r = run(kind, b'{"jsonrpc":"2.0","id":"\\u00e9\\ud83d\\ude00\\n\\"","method":"ping"}\n')
    assert replies(r) == [ok('\u00e9\U0001F600\n"')]


@BOTH
@pytest.mark.parametrize('rid', [b'true', b'[1]', b'{"a":1}'])
def test_id_of_the_wrong_type_is_an_invalid_request(kind, rid):
    r = run(kind, b'{"jsonrpc":"2.0","id":%s,"method":"ping"}\n' % rid + req(2) + b'\n')
    assert replies(r) == [err(-32600, 'invalid request: id must be a string or a number'), ok(2)]


@BOTH
@pytest.mark.parametrize('line', [b'{"jsonrpc":"2.0","method":"ping"}', b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
                                  b'{"jsonrpc":"2.0","method":"boom"}', b'{"jsonrpc":"2.0","id":null,"method":"no/such"}',
                                  b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
                                  b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"caveman_stats"}}'])
def test_notification_is_never_answered(kind, line):
    r = run(kind, line + b'\n' + req(9) + b'\n')
    assert replies(r) == [ok(9)]


@BOTH
def test_responses_from_the_client_are_ignored(kind):
    r = run(kind, b'{"jsonrpc":"2.0","id":5,"result":{}}\n{"jsonrpc":"2.0","id":6,"error":{"code":1,"message":"x"}}\n' + req(7) + b'\n')
    assert replies(r) == [ok(7)]


# --- batches ---------------------------------------------------------------------------------

DISCOVER_B = err(-32601, 'method not found: prompts/list', 'b')
BATCHES = {
    'mixed': (b'[' + req(1) + b',{"jsonrpc":"2.0","method":"ping"},' + req('b', 'prompts/list') + b']', [[ok(1), DISCOVER_B]]),
    'all notifications': (b'[{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","id":null,"method":"ping"}]', []),
    'empty': (b'[]', [err(-32600, 'empty batch')]),
    'empty with spaces': (b'[ \t ]', [err(-32600, 'empty batch')]),
    'non-object members': (b'[1,"x",null,' + req(2) + b',[' + req(3) + b']]',
                           [[err(-32600, 'invalid request in batch')] * 3 + [ok(2), err(-32600, 'invalid request in batch')]]),
    'undecodable': (b'[' + req(1) + b',', [PARSE]),
    'one member': (b'[' + req(0) + b']', [[ok(0)]]),
}

@BOTH
@pytest.mark.parametrize('name', list(BATCHES))
def test_batch_shapes(kind, name):
    line, expected = BATCHES[name]
    assert replies(run(kind, line + b'\n' + req('after') + b'\n')) == expected + [ok('after')]


@FAULTY
def test_batch_with_failing_members(kind):
    line = b'[' + req(1, 'boom') + b',' + req(2, 'prompts/list') + b',' + req(3, 'exit') + b',' + req(4) + b']'
    assert replies(run(kind, line + b'\n' + req('after') + b'\n')) == [
        [err(-32603, 'cave_internal_error', 1), err(-32601, 'method not found: prompts/list', 2),
         err(-32603, 'cave_internal_error', 3), ok(4)], ok('after')]


@BOTH
def test_batch_is_one_line(kind):                      # reference §10.1: two pings, then a request
    r = run(kind, b'[' + req(1) + b',' + req(2) + b']\n' + req(3) + b'\n')
    assert r.stdout.split(b'\n')[:-1] == [b'[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]',
                                          b'{"jsonrpc":"2.0","id":3,"result":{}}']


# --- errors ----------------------------------------------------------------------------------

@BOTH
def test_unknown_methods_are_method_not_found(kind):
    r = run(kind, req(1, 'prompts/list') + b'\n' + req(2, 'resources/list') + b'\n' + req(3, '') + b'\n')
    assert replies(r) == [err(-32601, 'method not found: prompts/list', 1), err(-32601, 'method not found: resources/list', 2),
                          err(-32601, 'method not found: ', 3)]


@BOTH
def test_method_that_is_not_a_string(kind):
    r = run(kind, b'{"jsonrpc":"2.0","id":1,"method":5}\n{"jsonrpc":"2.0","id":2}\n' + req(3) + b'\n')
    assert replies(r) == [err(-32600, 'invalid request: method must be a string', 1),
                          err(-32600, 'invalid request: method must be a string', 2), ok(3)]


@FAULTY
def test_dispatch_that_raises_is_internal_error_and_logged(kind):
    r = run(kind, req(1, 'boom') + b'\n' + req(2) + b'\n')
    assert replies(r) == [err(-32603, 'cave_internal_error', 1), ok(2)]
    log = r.stderr.decode()
    assert 'msg="dispatch failed"' in log and 'method=boom' in log and 'RuntimeError: boom handler failed on purpose' in log


@FAULTY
def test_system_exit_in_a_handler_does_not_end_the_loop(kind):
    assert replies(run(kind, req(1, 'exit') + b'\n' + req(2) + b'\n')) == [err(-32603, 'cave_internal_error', 1), ok(2)]


# --- the inbound cap -------------------------------------------------------------------------

@BOTH
def test_over_long_line_with_a_small_cap(kind):         # reference §10.1: cap 256, 1 KiB request, then id 2
    big = req(1, 'tools/call', params={'name': 'caveman_compress', 'arguments': {'input': 'x' * 1024}})
    fits = req(3)[:-1] + b' ' * (255 - len(req(3))) + b'}'      # 255 bytes + newline = exactly the cap
    r = run(kind, big + b'\n' + req(2) + b'\n' + fits + b'\n', **{CAP_ENV: '256'})
    assert replies(r) == [err(-32600, 'cave_payload_too_large: message exceeds 256 bytes', 1), ok(2), ok(3)]   # under its id: the client is waiting on it
    assert re.search(r'level=WARNING logger=caveman\.mcp\.jsonrpc msg="inbound cap exceeded" bytes=%d cap=256' % (len(big) + 1), r.stderr.decode())


@BOTH
def test_over_long_request_is_answered_under_its_id_written_first_or_last(kind):
    "The id is salvaged from the start (Python SDK order) or the end (TypeScript SDK order) of a drained line; a nested or missing id gives null."
    first = req('p-1', 'tools/call', params={'name': 'caveman_compress', 'arguments': {'input': 'x' * 5000}})
    last = json.dumps({'method': 'tools/call', 'params': {'arguments': {'input': 'y' * 5000, 'id': 9}}, 'jsonrpc': '2.0', 'id': 42}).encode()
    nested = json.dumps({'method': 'tools/call', 'params': {'input': 'z' * 5000, 'id': 9}}).encode()
    r = run(kind, first + b'\n' + last + b'\n' + nested + b'\n' + req(2) + b'\n', **{CAP_ENV: '1024'})
    too_large = 'cave_payload_too_large: message exceeds 1024 bytes'
    assert replies(r) == [err(-32600, too_large, 'p-1'), err(-32600, too_large, 42), err(-32600, too_large), ok(2)]


@BOTH
def test_over_long_line_at_eof_without_newline(kind):
    r = run(kind, req(1) + b'\n' + b'y' * 600, **{CAP_ENV: '256'})
    assert replies(r) == [ok(1), err(-32600, 'cave_payload_too_large: message exceeds 256 bytes')]


@pytest.mark.parametrize('env', [CAP_ENV, RESULT_CAP_ENV, 'CAVEMAN_MCP_WORKERS'])
def test_a_bad_setting_is_a_start_up_error(env):
    "A bad size or count setting stops the server before it answers anything, naming the variable (exit 2)."
    r = subprocess.run(command('caveman-mcp'), input=req(1) + b'\n', capture_output=True, timeout=60,
                       env=server_env('caveman-mcp', **{env: 'lots'}))
    assert r.returncode == 2 and r.stdout == b''
    assert r.stderr.decode().startswith(f"caveman-mcp: {env} must be ") and "got 'lots'" in r.stderr.decode()


@pytest.mark.slow
@BOTH
def test_default_cap_16_mib(kind):
    "A line of exactly 16 MiB (newline included) is served; one of 16 MiB + 1 byte is refused; the loop goes on."
    at_cap = req(1)[:-1] + b' ' * (MIB16 - 1 - len(req(1))) + b'}'
    over = b'z' * MIB16
    assert len(at_cap) + 1 == MIB16 and len(over) + 1 == MIB16 + 1
    r = run(kind, at_cap + b'\n' + over + b'\n' + req(2) + b'\n')
    assert replies(r) == [ok(1), err(-32600, 'cave_payload_too_large: message exceeds 16777216 bytes'), ok(2)]


def vm_hwm_kib(pid: int) -> int:
    return int(next(l.split()[1] for l in open(f'/proc/{pid}/status') if l.startswith('VmHWM:')))


def settled(s: Live, kind: str) -> None:
    "Wait until a server's start-up has settled: a caveman server builds its engine and, a moment later, its encoder in the background, so both runs compared below must have done so before the drain (the baseline run was too short to)."
    s.send(req('settle')); assert s.reply(timeout=120) == ok('settle')
    if kind == 'echo': return
    s.send(json.dumps({'jsonrpc': '2.0', 'id': 'stats', 'method': 'tools/call', 'params': {'name': 'caveman_stats', 'arguments': {}}}).encode())
    assert s.reply(timeout=120)['id'] == 'stats'                 # the engine is built
    last, still, deadline = vm_hwm_kib(s.p.pid), 0, time.monotonic() + 60
    while still < 8 and time.monotonic() < deadline:              # then the encoder: the high-water mark stops moving
        time.sleep(0.25)
        now = vm_hwm_kib(s.p.pid); still = still + 1 if now == last else 0; last = now


@pytest.mark.slow
@BOTH
@pytest.mark.skipif(not Path('/proc/self/status').exists(), reason='peak RSS is read from /proc (Linux)')
def test_draining_64_mib_with_a_16_mib_cap_keeps_memory_bounded(kind):
    "Peak RSS while draining a 64 MiB line grows by about one cap (16 MiB) over a baseline run; reading the line whole would add 64+ MiB, a read-then-join 32."
    def peak_rss_kib(chunks) -> tuple[int, list]:
        with Live(kind) as s:
            settled(s, kind)
            for c in chunks: s.p.stdin.write(c)
            s.send(req('sync'))
            got = []
            while not got or got[-1] != ok('sync'): got.append(s.reply(timeout=120))
            peak = vm_hwm_kib(s.p.pid)                     # the server's own high-water mark, read while it runs
            assert s.close() == 0
        return peak, got
    base, r0 = peak_rss_kib([req(1) + b'\n'])
    t0 = time.perf_counter()
    peak, r1 = peak_rss_kib([b'q' * (1 << 20)] * 64 + [b'\n', req(2) + b'\n'])
    secs = time.perf_counter() - t0
    assert r0 == [ok(1), ok('sync')]
    assert r1 == [err(-32600, 'cave_payload_too_large: message exceeds 16777216 bytes'), ok(2), ok('sync')]
    grew_mib = (peak - base) / 1024
    print(f'\n{kind}: 64 MiB line drained (run with start-up: {secs:.2f}s); peak RSS {peak/1024:.1f} MiB vs baseline {base/1024:.1f} MiB (+{grew_mib:.1f} MiB)')
    assert grew_mib < 24, grew_mib


# --- stdout stays pure -----------------------------------------------------------------------

@FAULTY
def test_noisy_handler_cannot_corrupt_stdout(kind):
    r = run(kind, req(1, 'noisy') + b'\n' + req(2) + b'\n')
    assert r.stdout == b'{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","id":2,"result":{}}\n'
    for noise in [b'print to sys.stdout', b'sys.stdout.write', b'os.write to fd 1', b'a child process printing']:
        assert noise in r.stderr


@FAULTY
def test_logs_are_key_value_lines_on_stderr_at_the_configured_level(kind):
    bad = b'{oops\n' + req(1, 'boom') + b'\n'
    info = run(kind, bad).stderr.decode()
    assert re.search(r'^time=\S+ level=INFO logger=caveman\.mcp\.jsonrpc msg="request decode failed" bytes=5 ', info, re.M), info
    quiet = run(kind, bad, CAVEMAN_LOG_LEVEL='error').stderr.decode()
    assert 'request decode failed' not in quiet and 'level=ERROR' in quiet and 'dispatch failed' in quiet


# --- only EOF ends the loop ------------------------------------------------------------------

@ALL
def test_only_eof_ends_the_loop(kind):
    "Talk to a live server: after every kind of bad input it is still running and answers; closing stdin ends it with 0."
    bad = [b'\xff', b'[]', b'{', b'"x"', b'x' * 5000, b'[' * 50_000, b'[' * 1000, b'[' * 500 + b']' * 500, b'\xef\xbb\xbf\r', b'\x00' * 10,
           req(0, 'tools/call', params={'name': 'caveman_compress', 'arguments': {'input': 7}}),
           req(0, 'tools/call', params={'name': 'caveman_retrieve', 'arguments': {'recovery_handle': 'ccr:'}}),
           req(0, 'tools/call', params='nonsense'), req(0, 'initialize', params=[1, 2])]
    if kind != 'caveman-mcp': bad += [req(0, 'boom'), req(0, 'exit')]
    with Live(kind, **{CAP_ENV: '1024'}) as s:
        for i, line in enumerate(bad):
            s.send(line, req(f'sync{i}'))
            while (msg := s.reply()) != ok(f'sync{i}'): assert isinstance(msg, (dict, list)), msg
            assert s.p.poll() is None
        assert s.close() == 0
