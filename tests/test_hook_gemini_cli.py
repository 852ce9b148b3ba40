"""caveman's AfterTool hook inside the real Gemini CLI (`@google/gemini-cli`, npm), offline.

The test setup installs the pinned Gemini CLI from the npm registry into `.work/npm-gemini` once
(`_agent_hosts.py`). A fake Gemini API on 127.0.0.1 (`_fake_gemini.py`, reached through
`GOOGLE_GEMINI_BASE_URL`) plays the model: each turn is a scripted `functionCall`, and every request is
recorded, so we read exactly what the model would have been sent. `caveman install gemini-cli` (the real
command) writes `~/.gemini/settings.json` in a temp HOME; CAVEMAN_HOME is in the same temp dir, so the hook
and caveman-mcp share a fresh recovery store.

Gemini CLI hands a hook's replacement to the model as the tool's error (`{"error": reason}` instead of
`{"output": …}`); these tests read whichever the model got.
"""
import json, re, subprocess, sys
from pathlib import Path

import pytest

from _fake_gemini import FakeGemini, function_call, function_responses, text
from _agent_hosts import HANDLE, caveman_exe, caveman_cli, gemini_binary, host_binary_fixture
from conftest import child_env

pytestmark = pytest.mark.slow

USER_SETTINGS = {'security': {'auth': {'selectedType': 'gemini-api-key'}}, 'general': {'disableAutoUpdate': True}, 'privacy': {'usageStatisticsEnabled': False},
                 'telemetry': {'enabled': False}}


gemini = host_binary_fixture(gemini_binary)


class Session:
    "A temp project + HOME whose Gemini CLI user settings have caveman installed."
    def __init__(self, tmp: Path, *install_args: str, extra_env: dict | None = None):
        self.project, self.home = tmp / 'project', tmp / 'home'
        self.project.mkdir(); (self.home / '.gemini').mkdir(parents=True)
        self.settings = self.home / '.gemini' / 'settings.json'
        self.settings.write_text(json.dumps(USER_SETTINGS))
        self.env = child_env(only=(), **{'PATH': f'{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin', 'HOME': str(self.home),
                                         'CAVEMAN_HOME': str(self.home / 'cv'), 'NO_COLOR': '1', **(extra_env or {})})
        caveman_cli('install', 'gemini-cli', *install_args, cwd=self.project, env=self.env)

    def run(self, gemini: str, script) -> FakeGemini:
        with FakeGemini(script) as api:
            r = subprocess.run(['node', gemini, '-p', 'work on this project', '--approval-mode', 'yolo', '-m', 'gemini-2.5-flash'],
                               cwd=self.project, env={**self.env, **api.env(), 'GEMINI_CLI_TRUST_WORKSPACE': 'true'},
                               capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
        return api


def seen(api: FakeGemini) -> dict[str, str]:
    "function name + ordinal -> what the model got for that call in the last request (the output, or the error a hook made)."
    out, n = {}, {}
    for fr in function_responses(api.main_requests()[-1]):
        name = fr['name']; n[name] = n.get(name, 0) + 1
        resp = fr.get('response', {})
        out[f'{name}#{n[name]}'] = resp['output'] if 'output' in resp else resp.get('error', json.dumps(resp))
    return out


def shell(cmd: str):
    return [function_call('run_shell_command', {'command': cmd})]


def pylines(n: int, fmt: str) -> tuple[str, str]:
    "A shell command printing `n` lines of `fmt` (with {i}, {m}), and the output it prints."
    return (f"python3 -c \"for i in range({n}): print('{fmt}'.format(i=i, m=i % 7))\"",
            ''.join(fmt.format(i=i, m=i % 7) + '\n' for i in range(n)))


def retrieve_step(name: str):
    "A script step calling caveman_retrieve (through Gemini's MCP client) with the handle the model saw in `name`'s result."
    def step(body):
        for fr in function_responses(body):
            resp = fr.get('response', {})
            m = HANDLE.search(str(resp.get('output', resp.get('error', '')))) if fr['name'] == name else None
            if m: return [function_call('mcp_caveman_caveman_retrieve', {'recovery_handle': m.group(1)})]
        return [text(f'no handle in the result of {name}')]
    return step


def untrusted_inner(s: str) -> str:
    "The text inside Gemini's `<untrusted_context>` frame (the frame itself when there is none)."
    m = re.fullmatch(r'<untrusted_context>\n([\s\S]*)\n</untrusted_context>', s)
    return m.group(1) if m else s


def test_large_shell_output_is_a_view_whose_handle_returns_the_original(gemini, tmp_path):
    s = Session(tmp_path)
    cfg = json.loads(s.settings.read_text())
    assert cfg['general'] == USER_SETTINGS['general'] and 'caveman' in cfg['mcpServers']      # merged, not replaced
    cmd, full = pylines(500, '2026-12-01 10:00:00 INFO worker {m} processed item {i} in 12ms')   # ~30,000 characters
    huge_cmd, huge = pylines(1000, '2026-12-01 10:00:00 INFO worker {m} handled request {i} in 3ms')   # over Gemini's 40,000 cut
    assert len(huge) > 40_000
    api = s.run(gemini, [shell(cmd), retrieve_step('run_shell_command'), shell(huge_cmd)])
    got = seen(api)
    hv = got['run_shell_command#2']                              # the hook sees the whole output: Gemini cuts only after it
    assert 'request 999 ' in hv and len(hv) < 5000 and 'truncated' not in hv.lower()
    r = subprocess.run([caveman_exe(), 'retrieve', HANDLE.search(hv).group(1)], env=s.env, capture_output=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.stdout.decode() == huge
    view = got['run_shell_command#1']
    assert view.startswith('(caveman) The tool ran') and '<untrusted_context>\nOutput: ' in view
    assert HANDLE.search(view) and len(view) < len(full) / 5 and 'item 499 ' in view
    assert 'Process Group PGID: ' in view                        # Gemini's own frame around the output is kept
    h = HANDLE.search(view).group(1)
    r = subprocess.run([caveman_exe(), 'retrieve', h], env=s.env, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.stdout.decode() == full
    got_back = got['mcp_caveman_caveman_retrieve#1']             # through Gemini's MCP client: caveman_retrieve is never compressed
    assert untrusted_inner(got_back) == full


def test_small_output_and_failing_hook_leave_the_original(gemini, tmp_path):
    bad = tmp_path / 'bad.json'; bad.write_text('{not json')
    s = Session(tmp_path)
    small_cmd, small = pylines(3, 'line {i}')
    big_cmd, big = pylines(200, '2026-12-01 10:00:00 INFO worker {m} processed item {i} in 12ms')
    api = s.run(gemini, [shell(small_cmd), shell(big_cmd)])
    got = seen(api)
    assert re.fullmatch(r'<untrusted_context>\nOutput: line 0\nline 1\nline 2\nProcess Group PGID: \d+\n</untrusted_context>',
                        got['run_shell_command#1'])
    assert got['run_shell_command#2'].startswith('(caveman)') and HANDLE.search(got['run_shell_command#2'])
    s.env['CAVEMAN_HOOK_CONFIG'] = str(bad)                      # the hook now fails on every call
    api = s.run(gemini, [shell(big_cmd)])
    original = seen(api)['run_shell_command#1']
    assert 'caveman' not in original and big.rstrip('\n') in original


def test_host_without_caveman_mcp_gets_only_lossless_views(gemini, tmp_path):
    s = Session(tmp_path, '--no-mcp')
    cfg = json.loads(s.settings.read_text())
    assert 'mcpServers' not in cfg and not cfg['hooks']['AfterTool'][0]['hooks'][0]['command'].endswith('--recovery')
    log_cmd, log = pylines(300, '2026-12-01 10:00:00 INFO worker {m} processed item {i} in 12ms')
    rows = [{'id': i, 'name': f'user{i}', 'active': i % 2 == 0, 'score': i * 3} for i in range(200)]
    (s.project / 'rows.json').write_text(json.dumps(rows, indent=2))
    api = s.run(gemini, [shell(log_cmd), shell(f'cat {s.project / "rows.json"}')])
    names = [d['name'] for t in api.main_requests()[-1]['tools'] for d in t.get('functionDeclarations', [])]
    assert not any('caveman' in n for n in names)
    got = seen(api)
    assert 'caveman' not in got['run_shell_command#1'] and log.rstrip('\n') in got['run_shell_command#1']   # a log view is lossy: untouched
    view = got['run_shell_command#2']
    assert view.startswith('(caveman) The tool ran') and 'recovery_handle' not in view
    toon = re.search(r'Output: ([\s\S]*?)\nProcess Group PGID', view).group(1)
    assert len(toon) < len(json.dumps(rows, indent=2)) / 2
    r = subprocess.run([caveman_exe(), 'toon', 'decode'], input=toon.encode(), capture_output=True, timeout=60)
    assert json.loads(r.stdout) == rows                          # TOON: exactly the same data


def test_uninstall_restores_the_users_settings(tmp_path):
    s = Session(tmp_path)
    r = subprocess.run([caveman_exe(), 'uninstall', 'gemini-cli'], cwd=s.project, env=s.env, capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert json.loads(s.settings.read_text()) == USER_SETTINGS


def test_read_file_in_the_project_scope(gemini, tmp_path):
    s = Session(tmp_path, '--scope', 'project')                 # project hooks run in a trusted workspace only
    assert 'hooks' not in json.loads(s.settings.read_text()) and 'caveman' in (s.project / '.gemini' / 'settings.json').read_text()
    log = ''.join(f'2026-12-01 10:00:{i % 60:02d} INFO request served id={i} status=200\n' for i in range(500))
    (s.project / 'server.log').write_text(log)
    api = s.run(gemini, [[function_call('read_file', {'file_path': str(s.project / 'server.log')})]])
    view = seen(api)['read_file#1']
    assert view.startswith('(caveman) The tool ran') and HANDLE.search(view) and len(view) < len(log) / 5
    r = subprocess.run([caveman_exe(), 'retrieve', HANDLE.search(view).group(1)], env=s.env, capture_output=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.stdout.decode().rstrip('\n') == log.rstrip('\n')


def test_another_mcp_servers_result_is_a_view(gemini, tmp_path):
    from _upstreams import install_upstreams
    fs = install_upstreams()['filesystem']
    s = Session(tmp_path)
    cfg = json.loads(s.settings.read_text())
    cfg['mcpServers']['fs'] = {'command': fs[0], 'args': [*fs[1:], str(s.project)]}
    s.settings.write_text(json.dumps(cfg))
    log = ''.join(f'2026-12-01 10:00:{i % 60:02d} INFO request served id={i} status=200\n' for i in range(500))
    (s.project / 'server.log').write_text(log)
    api = s.run(gemini, [[function_call('mcp_fs_read_text_file', {'path': str(s.project / 'server.log')})]])
    view = seen(api)['mcp_fs_read_text_file#1']
    assert view.startswith('(caveman) The tool ran') and HANDLE.search(view) and len(view) < len(log) / 5
    r = subprocess.run([caveman_exe(), 'retrieve', HANDLE.search(view).group(1)], env=s.env, capture_output=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.stdout.decode() == log
