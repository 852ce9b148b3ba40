"""Framing rules of caveman-mcp, checked on raw lines against a real server process.

The server is `tests/_echo_server.py`: caveman's transport + JSON-RPC layer around a toy dispatch
(ping, echo, boom, exit, noisy). Each test sends bytes on stdin, closes it, and checks stdout byte by
byte or line by line. Expected values come from SPEC §8/§13/§14.1 and reference §7.1/§10.1.
"""
import json, os, queue, re, subprocess, sys, threading, time
from pathlib import Path

import pytest

SERVER = Path(__file__).with_name('_echo_server.py')
CAP_ENV = 'CAVEMAN_MCP_MAX_INBOUND_BYTES'
MIB16 = 16 * 1024 * 1024


def server_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in (CAP_ENV, 'CAVEMAN_LOG_LEVEL')}
    env.update(extra)
    return env


def run(data: bytes, timeout=120, **env) -> subprocess.CompletedProcess:
    "Feed `data` to a fresh server, close stdin, wait for it to exit."
    r = subprocess.run([sys.executable, str(SERVER)], input=data, capture_output=True, env=server_env(**env), timeout=timeout)
    assert r.returncode == 0, r.stderr.decode(errors='replace')[-3000:]
    return r


def replies(r: subprocess.CompletedProcess) -> list:
    "stdout as parsed JSON lines; every line must be JSON and the stream must end with a newline."
    assert r.stdout == b'' or r.stdout.endswith(b'\n'), r.stdout[-200:]
    return [json.loads(line) for line in r.stdout.split(b'\n')[:-1]]


def ok(rid, result=None) -> dict: return {'jsonrpc': '2.0', 'id': rid, 'result': {} if result is None else result}
def err(code, message, rid=None) -> dict: return {'jsonrpc': '2.0', 'id': rid, 'error': {'code': code, 'message': message}}
def req(rid, method='ping', **kw) -> bytes: return json.dumps({'jsonrpc': '2.0', 'id': rid, 'method': method, **kw}).encode()

PARSE = err(-32700, 'parse error')


# --- tolerated line shapes -------------------------------------------------------------------

def test_bom_is_ignored():
    r = run(b'\xef\xbb\xbf' + req(1) + b'\n' + b'\xef\xbb\xbf' + req(2) + b'\n')
    assert replies(r) == [ok(1), ok(2)]


def test_crlf_line_ends():
    r = run(req(1) + b'\r\n' + req(2) + b'\r\n')
    assert r.stdout == b'{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","id":2,"result":{}}\n'


def test_blank_lines_get_no_answer():
    r = run(b'\n\n   \n\r\n\t\n' + req(1) + b'\n\n\n')
    assert replies(r) == [ok(1)]


def test_invalid_utf8_is_a_parse_error_and_the_loop_goes_on():
    r = run(b'\xff\xfe\xfd\n' + b'{"jsonrpc":"2.0","id":1,"method":"echo","params":"\xc3\x28"}\n' + b'\xed\xa0\x80\n' + req(2) + b'\n')
    assert replies(r) == [PARSE, PARSE, PARSE, ok(2)]


def test_final_line_without_newline_is_answered():
    assert replies(run(req(1) + b'\n' + req(2))) == [ok(1), ok(2)]


def test_malformed_line_then_valid_request():      # reference §10.1
    assert replies(run(b'{"jsonrpc":"2.0","id":1,\n' + req(42) + b'\n')) == [PARSE, ok(42)]


# --- ids -------------------------------------------------------------------------------------

@pytest.mark.parametrize('rid', ['0', '""', '"7"', '-3', '123456789012345678901234567890123456789012345678901234567890',
                                 '1.5', '1.50', '2e10', '-0', '9' * 5000])
def test_id_is_echoed_byte_for_byte(rid):
    r = run(b'{"jsonrpc":"2.0","id":%s,"method":"ping"}\n' % rid.encode())
    assert r.stdout == b'{"jsonrpc":"2.0","id":%s,"result":{}}\n' % rid.encode()


@pytest.mark.parametrize('line', [b'{"jsonrpc":"2.0","method":"ping"}', b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
                                  b'{"jsonrpc":"2.0","method":"boom"}', b'{"jsonrpc":"2.0","id":null,"method":"no/such"}',
                                  b'{"jsonrpc":"2.0","method":"notifications/initialized"}'])
def test_notification_is_never_answered(line):
    r = run(line + b'\n' + req(9) + b'\n')
    assert replies(r) == [ok(9)]


# --- batches ---------------------------------------------------------------------------------

BATCHES = {
    'mixed': (b'[' + req(1) + b',{"jsonrpc":"2.0","method":"ping"},' + req('b', 'echo', params=[7]) + b']',
              [[ok(1), ok('b', [7])]]),
    'all notifications': (b'[{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","id":null,"method":"ping"}]', []),
    'empty': (b'[]', [err(-32600, 'empty batch')]),
    'non-object members': (b'[1,"x",null,' + req(2) + b',[' + req(3) + b']]',
                           [[err(-32600, 'invalid request in batch')] * 3 + [ok(2), err(-32600, 'invalid request in batch')]]),
    'undecodable': (b'[' + req(1) + b',', [PARSE]),
    'errors inside': (b'[' + req(1, 'boom') + b',' + req(2, 'server/discover') + b']',
                      [[err(-32603, 'cave_internal_error', 1), err(-32601, 'method not found: server/discover', 2)]]),
}

@pytest.mark.parametrize('name', list(BATCHES))
def test_batch_shapes(name):
    line, expected = BATCHES[name]
    assert replies(run(line + b'\n' + req('after') + b'\n')) == expected + [ok('after')]


def test_batch_is_one_line():                      # reference §10.1: two pings, then a request
    r = run(b'[' + req(1) + b',' + req(2) + b']\n' + req(3) + b'\n')
    assert r.stdout.split(b'\n')[:-1] == [b'[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]',
                                          b'{"jsonrpc":"2.0","id":3,"result":{}}']


# --- errors ----------------------------------------------------------------------------------

def test_unknown_methods_are_method_not_found():
    r = run(req(1, 'server/discover') + b'\n' + req(2, 'resources/list') + b'\n')
    assert replies(r) == [err(-32601, 'method not found: server/discover', 1), err(-32601, 'method not found: resources/list', 2)]


def test_dispatch_that_raises_is_internal_error_and_logged():
    r = run(req(1, 'boom') + b'\n' + req(2) + b'\n')
    assert replies(r) == [err(-32603, 'cave_internal_error', 1), ok(2)]
    log = r.stderr.decode()
    assert 'msg="dispatch failed"' in log and 'method=boom' in log and 'RuntimeError: boom handler failed on purpose' in log


def test_system_exit_in_a_handler_does_not_end_the_loop():
    assert replies(run(req(1, 'exit') + b'\n' + req(2) + b'\n')) == [err(-32603, 'cave_internal_error', 1), ok(2)]


# --- the inbound cap -------------------------------------------------------------------------

def test_over_long_line_with_a_small_cap():         # reference §10.1: cap 256, 1 KiB request, then id 2
    big = req(1, 'echo', params={'input': 'x' * 1024})
    fits = req(3)[:-1] + b' ' * (255 - len(req(3))) + b'}'      # 255 bytes + newline = exactly the cap
    r = run(big + b'\n' + req(2) + b'\n' + fits + b'\n', **{CAP_ENV: '256'})
    assert replies(r) == [err(-32600, 'cave_payload_too_large: message exceeds 256 bytes'), ok(2), ok(3)]
    assert re.search(r'level=WARNING logger=caveman\.mcp\.jsonrpc msg="inbound cap exceeded" bytes=%d cap=256' % (len(big) + 1), r.stderr.decode())


@pytest.mark.slow
def test_default_cap_16_mib():
    "A line of exactly 16 MiB (newline included) is served; one of 16 MiB + 1 byte is refused; the loop goes on."
    at_cap = req(1)[:-1] + b' ' * (MIB16 - 1 - len(req(1))) + b'}'
    over = b'z' * MIB16
    assert len(at_cap) + 1 == MIB16 and len(over) + 1 == MIB16 + 1
    r = run(at_cap + b'\n' + over + b'\n' + req(2) + b'\n')
    assert replies(r) == [ok(1), err(-32600, 'cave_payload_too_large: message exceeds 16777216 bytes'), ok(2)]


@pytest.mark.slow
@pytest.mark.skipif(not Path('/proc/self/status').exists(), reason='peak RSS is read from /proc (Linux)')
def test_draining_64_mib_with_a_16_mib_cap_keeps_memory_bounded(tmp_path):
    "Peak RSS while draining a 64 MiB line grows by about one cap (16 MiB) over a baseline run; reading the line whole would add 64+ MiB, a read-then-join 32."
    def peak_rss_kib(chunks) -> tuple[int, list]:
        errpath = tmp_path / 'err.log'
        with open(errpath, 'wb') as errf:
            p = subprocess.Popen([sys.executable, str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errf,
                                 env=server_env(ECHO_SERVER_REPORT_PEAK='1'))
            out = []
            t = threading.Thread(target=lambda: out.append(p.stdout.read())); t.start()
            for c in chunks: p.stdin.write(c)
            p.stdin.close()
            assert p.wait(timeout=120) == 0
            t.join(30)
        peak = int(re.search(rb'^peak_rss_kib=(\d+)$', errpath.read_bytes(), re.M)[1])
        return peak, [json.loads(l) for l in out[0].splitlines()]
    base, r0 = peak_rss_kib([req(1) + b'\n'])
    t0 = time.perf_counter()
    peak, r1 = peak_rss_kib([b'q' * (1 << 20)] * 64 + [b'\n', req(2) + b'\n'])
    secs = time.perf_counter() - t0
    assert r0 == [ok(1)]
    assert r1 == [err(-32600, 'cave_payload_too_large: message exceeds 16777216 bytes'), ok(2)]
    grew_mib = (peak - base) / 1024
    print(f'\n64 MiB line drained in {secs:.2f}s; peak RSS {peak/1024:.1f} MiB vs baseline {base/1024:.1f} MiB (+{grew_mib:.1f} MiB)')
    assert grew_mib < 24, grew_mib


# --- stdout stays pure -----------------------------------------------------------------------

def test_noisy_handler_cannot_corrupt_stdout():
    r = run(req(1, 'noisy') + b'\n' + req(2) + b'\n')
    assert r.stdout == b'{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","id":2,"result":{}}\n'
    for noise in [b'print to sys.stdout', b'sys.stdout.write', b'os.write to fd 1', b'a child process printing']:
        assert noise in r.stderr


def test_logs_are_key_value_lines_on_stderr_at_the_configured_level():
    bad = b'{oops\n' + req(1, 'boom') + b'\n'
    info = run(bad).stderr.decode()
    assert re.search(r'^time=\S+ level=INFO logger=caveman\.mcp\.jsonrpc msg="request decode failed" bytes=5 ', info, re.M), info
    quiet = run(bad, CAVEMAN_LOG_LEVEL='error').stderr.decode()
    assert 'request decode failed' not in quiet and 'level=ERROR' in quiet and 'dispatch failed' in quiet


# --- only EOF ends the loop ------------------------------------------------------------------

def test_only_eof_ends_the_loop():
    "Talk to a live server: after every kind of bad input it is still running and answers; closing stdin ends it with 0."
    p = subprocess.Popen([sys.executable, str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env=server_env(**{CAP_ENV: '1024'}))
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in iter(p.stdout.readline, b'')], daemon=True).start()
    try:
        for i, bad in enumerate([b'\xff', b'[]', b'{', b'"x"', b'x' * 5000, b'[' * 50_000, req(0, 'boom'), req(0, 'exit'), b'\xef\xbb\xbf\r']):
            p.stdin.write(bad + b'\n' + req(f'sync{i}') + b'\n'); p.stdin.flush()
            while True:
                msg = json.loads(lines.get(timeout=30))
                if msg.get('id') == f'sync{i}': break
            assert p.poll() is None
        p.stdin.close()
        assert p.wait(timeout=30) == 0
    finally:
        if p.poll() is None: p.kill()
