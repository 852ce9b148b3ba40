"""Regressions found by a fresh user trying to break caveman from a clean clone: each test is one
finding, run against the installed commands as a user meets them."""
import json, os, subprocess

import pytest

from conftest import server_command, child_env

SPACES = ' ' * 1_000_000   # tiktoken's pre-tokenizer overflows its stack on a run this long and panics


def run_server(lines: list[bytes], env: dict, timeout=120) -> list[dict]:
    r = subprocess.run(server_command(), input=b''.join(l + b'\n' for l in lines), capture_output=True, timeout=timeout,
                       env=child_env(**env))
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    return [json.loads(l) for l in r.stdout.splitlines()]


def call(i: int, name: str, arguments: dict) -> bytes:
    return json.dumps({'jsonrpc': '2.0', 'id': i, 'method': 'tools/call', 'params': {'name': name, 'arguments': arguments}}).encode()


def test_a_million_spaces_neither_kill_the_server_nor_go_unanswered(store_env):
    out = run_server([call(1, 'caveman_compress', {'input': 'x' + SPACES + 'y'}), b'{"jsonrpc":"2.0","id":2,"method":"ping"}'], store_env)
    test = {o['id']: o for o in out}
    assert set(test) == {1, 2} and test[2]['result'] == {}
    p = json.loads(test[1]['result']['content'][0]['text'])
    assert p['tokens_before'] > 7000 and p['basis'] == 'inferred'


@pytest.mark.parametrize('cmd', [['caveman', 'compress'], ['caveman-shrink']])
def test_a_million_spaces_through_the_clis(cmd, store_env):
    r = subprocess.run(cmd, input=SPACES.encode(), capture_output=True, timeout=120, env=child_env(**store_env))
    if cmd == ['caveman-shrink']:                            # no JSON value at all: refused, as `lint` refuses it (issue 15)
        assert (r.returncode, r.stdout) == (1, b'') and json.loads(r.stderr.decode())['error'] == 'cave_invalid_catalog'
        return
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    assert r.stdout == SPACES.encode()                       # an honest pass-through
    assert json.loads(r.stderr.decode().splitlines()[-1])['ratio'] == 0


@pytest.mark.parametrize('digits', [400, 5000])
def test_json_with_integers_of_any_length_compresses_and_recovers(digits, store_env):
    doc = '[' + ','.join('{"id":%d,"state":"ok","n":%s}' % (i, '7' * digits) for i in range(40)) + ']'
    env = child_env(**store_env)
    r = subprocess.run(['caveman', 'compress'], input=doc.encode(), capture_output=True, timeout=120, env=env)
    rep = json.loads(r.stderr.decode().splitlines()[-1])
    assert (rep['content_type'], rep['method']) == ('json', 'elision') and rep['ratio'] > 0.5, rep
    assert ('7' * digits) in r.stdout.decode()               # kept records keep every digit
    back = subprocess.run(['caveman', 'retrieve', rep['recovery_handle']], capture_output=True, timeout=120, env=env)
    assert back.stdout == doc.encode()


def test_an_in_memory_store_never_hands_out_a_dead_handle(tmp_path):
    doc = json.dumps([{'id': i, 'state': 'charged'} for i in range(300)]).encode()
    env = child_env(CAVEMAN_CCR_DB=':memory:', CAVEMAN_HOME=str(tmp_path))
    r = subprocess.run(['caveman', 'compress'], input=doc, capture_output=True, timeout=120, env=env)
    rep = json.loads(r.stderr.decode().splitlines()[-1])
    assert r.returncode == 0 and r.stdout == doc and rep['ratio'] == 0 and 'recovery_handle' not in rep
    assert any('in memory' in w for w in rep['warnings'])


def test_a_request_that_is_not_utf8_is_answered_under_its_id(store_env):
    bad = b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"caveman_compress","arguments":{"input":"\xff"}}}'
    out = run_server([bad, b'{"jsonrpc":"2.0","id":10,"method":"ping"}'], store_env)
    assert [o['id'] for o in out] == [9, 10]
    assert out[0]['error']['code'] == -32700


def test_shrink_with_an_in_memory_store_passes_through(tmp_path):
    from caveman.corpus import corpus_path
    cat = corpus_path('catalogs/mcp_git.json').read_bytes()
    env = child_env(CAVEMAN_CCR_DB=':memory:', CAVEMAN_HOME=str(tmp_path))
    r = subprocess.run(['caveman-shrink'], input=cat, capture_output=True, timeout=120, env=env)
    note = json.loads(r.stderr.decode().splitlines()[-1])
    assert r.returncode == 0 and r.stdout == cat and note['ratio'] == 0 and 'recovery_handle' not in note
    assert 'in memory' in note['note']


def test_a_huge_whitespace_run_leaves_one_report_line(store_env):
    "The run is found before tiktoken sees it, so its panic message never reaches stderr."
    r = subprocess.run(['caveman', 'compress'], input=SPACES.encode(), capture_output=True, timeout=120, env=child_env(**store_env))
    assert r.returncode == 0 and len(r.stderr.decode().splitlines()) == 1
