"""`caveman store` on a store shared with a running `caveman-mcp`: list, prune while it serves, a pruned handle
fails closed with `cave_unknown_handle`, the others stay byte-exact, rm, vacuum.

The payloads are real output captured now (this venv's `pip inspect` and `pip list -v`, and an `ls -la` listing); the store is a temp file both processes open.
"""
import json, subprocess, sys
from pathlib import Path

import pytest

from conftest import ROOT, child_env
from _mcp_lines import Live, call, req

INIT = json.dumps({'jsonrpc': '2.0', 'id': 0, 'method': 'initialize', 'params': {'protocolVersion': '2025-11-25', 'capabilities': {},
                   'clientInfo': {'name': 'test', 'version': '0'}}}).encode()


def capture() -> list[bytes]:
    outs = [subprocess.run([sys.executable, '-m', 'pip', 'inspect'], capture_output=True, timeout=300).stdout,
            subprocess.run([sys.executable, '-m', 'pip', 'list', '-v'], capture_output=True, timeout=300).stdout,
            subprocess.run(['ls', '-la', str(Path(json.__file__).parent.parent / 'site-packages')], capture_output=True, timeout=300).stdout
            or subprocess.run(['ls', '-la', '/usr/lib'], capture_output=True, timeout=300).stdout]
    assert all(len(o) > 5_000 for o in outs)
    return outs


def cav(env, *args):
    return subprocess.run(['caveman', *args], capture_output=True, env=env, timeout=300)


def test_store_verbs_beside_a_running_server(tmp_path):
    db = tmp_path / 'store' / 'ccr.db'
    env = child_env(CAVEMAN_CCR_DB=str(db), CAVEMAN_HOME=str(tmp_path / 'home'))
    payloads = capture()
    with Live('caveman-mcp', CAVEMAN_CCR_DB=str(db), CAVEMAN_MCP_WORKERS='1') as s:
        s.send(INIT); s.reply()
        handles = []
        for i, p in enumerate(payloads, 1):
            s.send(call(i, 'caveman_compress', {'input': p.decode('utf-8', 'replace')}))
            handles.append(json.loads(s.reply()['result']['content'][0]['text'])['recovery_handle'])
        assert all(handles)
        originals = {h: p.decode('utf-8', 'replace').encode() for h, p in zip(handles, payloads)}
        rows = json.loads(cav(env, 'store', 'list', '--json').stdout)
        assert sorted(r['handle'] for r in rows) == sorted(handles)
        sizes = {r['handle']: r['bytes'] for r in rows}
        assert sizes == {h: len(o) for h, o in originals.items()}
        info = json.loads(cav(env, 'store', 'info', '--json').stdout)
        assert info['count'] == 3 and info['stored_bytes'] >= sum(sizes.values()) and info['path'] == str(db)
        # read one through the server, so it is the most recently read, then prune to its size while the server runs
        keep = handles[0]
        s.send(call(10, 'caveman_retrieve', {'recovery_handle': keep})); assert s.reply()['result']['content'][0]['text'].encode() == originals[keep]
        r = cav(env, 'store', 'prune', '--max-bytes', str(sizes[keep] + 1024))
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)['removed'] == 2
        for i, h in enumerate(handles[1:], 20):
            s.send(call(i, 'caveman_retrieve', {'recovery_handle': h}))
            res = s.reply()['result']
            assert res['isError'] and json.loads(res['content'][0]['text'])['error'] == 'cave_unknown_handle'
        s.send(call(30, 'caveman_retrieve', {'recovery_handle': keep, 'query': 'zzz-unrelated'}))
        s.reply()
        back = cav(env, 'retrieve', keep)
        assert back.returncode == 0 and back.stdout == originals[keep]
        # the server keeps serving and storing after the prune
        s.send(call(40, 'caveman_compress', {'input': payloads[1].decode('utf-8', 'replace')}))
        again = json.loads(s.reply()['result']['content'][0]['text'])['recovery_handle']
        assert again == handles[1] and cav(env, 'retrieve', again).stdout == originals[again]
        assert json.loads(cav(env, 'store', 'rm', keep, f'<<ccr:{again}>>').stdout)['removed'] == [keep, again]
        assert json.loads(cav(env, 'store', 'info', '--json').stdout)['count'] == 0
        v = json.loads(cav(env, 'store', 'vacuum').stdout)
        assert v['file_bytes_after'] <= v['file_bytes_before']
        assert s.close() == 0


@pytest.mark.parametrize('args', [['store'], ['store', 'prune'], ['store', 'rm'], ['store', 'prune', '--older-than', 'soon'],
                                  ['store', 'list', 'ccr_x'], ['store', 'explode']])
def test_store_usage_errors(tmp_path, args):
    env = child_env(CAVEMAN_CCR_DB=str(tmp_path / 'ccr.db'))
    r = cav(env, *args)
    assert (r.returncode, r.stdout) == (2, b'') and b'Traceback' not in r.stderr
