"""caveman's PostToolUse hook inside the real Codex CLI (`@openai/codex`, npm), offline.

The test setup installs the pinned Codex from the npm registry into `.work/npm-codex` once
(`_agent_hosts.py`; the native binary of the platform package is run directly). A fake OpenAI Responses
API on 127.0.0.1 (`_fake_openai.py`, a custom model provider in `config.toml`) plays the model: each turn
is a scripted `function_call`, and every request is recorded, so we read exactly what the model would
have been sent. `caveman install codex` (the real command, with this `codex` on PATH) writes the hook into
`$CODEX_HOME/hooks.json` and has Codex itself record the hook's trust and the MCP server in
`config.toml`; `codex exec` then runs without `--dangerously-bypass-hook-trust`.
"""
import json, re, subprocess, sys
from pathlib import Path

import pytest

from _fake_openai import FakeOpenAI, function_call, call_outputs, message
from _agent_hosts import HANDLE, caveman_exe, caveman_cli, codex_binary, host_binary_fixture
from conftest import child_env

pytestmark = pytest.mark.slow



codex = host_binary_fixture(codex_binary)


class Session:
    "A temp project + CODEX_HOME with a fake-provider config.toml and caveman installed in it."
    def __init__(self, tmp: Path, codex: str, *install_args: str):
        self.project, self.home = tmp / 'project', tmp / 'home'
        self.project.mkdir(); (self.home / '.codex').mkdir(parents=True)
        self.codex_home = self.home / '.codex'
        self.env = child_env(only=(), PATH=f'{Path(sys.executable).parent}:{Path(codex).parent}:/usr/local/bin:/usr/bin:/bin',
                             HOME=str(self.home), CODEX_HOME=str(self.codex_home), CAVEMAN_HOME=str(self.home / 'cv'))
        self.port_placeholder = 'http://127.0.0.1:9/v1'
        (self.codex_home / 'config.toml').write_text(
            '# the user\'s own settings\nmodel = "gpt-5-codex"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
            f'base_url = "{self.port_placeholder}"\nwire_api = "responses"\nenv_key = "CAVEMAN_FAKE_OPENAI_KEY"\n'
            'request_max_retries = 0\nstream_max_retries = 0\n')
        self.install(*install_args)

    def install(self, *args: str, verb: str = 'install') -> str:
        return caveman_cli(verb, 'codex', *args, cwd=self.project, env=self.env)

    def run(self, codex: str, script) -> FakeOpenAI:
        with FakeOpenAI(script) as api:
            cfg = self.codex_home / 'config.toml'
            cfg.write_text(re.sub(r'base_url = "http://127\.0\.0\.1:\d+/v1"', f'base_url = "{api.url}"', cfg.read_text()))
            r = subprocess.run([codex, 'exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox',
                                'work on this project'], cwd=self.project, env={**self.env, **api.env()},
                               capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-3000:])
        return api


def seen(api: FakeOpenAI) -> dict[str, str]:
    "call_id -> the output the model got for it, in the last request."
    return call_outputs(api.main_requests()[-1])


def shell(cmd: str, call_id: str):
    return [function_call('exec_command', {'cmd': cmd}, call_id=call_id)]


def pylines(n: int, fmt: str) -> tuple[str, str]:
    "A shell command printing `n` lines of `fmt` (with {i}, {m}), and the output it prints."
    return (f"python3 -c \"for i in range({n}): print('{fmt}'.format(i=i, m=i % 7))\"",
            ''.join(fmt.format(i=i, m=i % 7) + '\n' for i in range(n)))


def retrieve_step(call_id: str):
    "A script step calling caveman's MCP caveman_retrieve (Codex lists it in the `mcp__caveman` namespace) with the handle the model saw for `call_id`."
    def step(body):
        spaces = {t.get('name'): [x.get('name') for x in t.get('tools', [])] for t in body.get('tools', []) if t.get('type') == 'namespace'}
        m = HANDLE.search(call_outputs(body).get(call_id, ''))
        if not (m and 'caveman_retrieve' in spaces.get('mcp__caveman', [])): return [message(f'no handle or no retrieve tool: {spaces}')]
        return [function_call('caveman_retrieve', {'recovery_handle': m.group(1)}, call_id='call_retrieve', namespace='mcp__caveman')]
    return step


def test_large_shell_output_is_a_view_whose_handle_returns_the_original(codex, tmp_path):
    s = Session(tmp_path, codex)
    assert (s.codex_home / 'config.toml').read_text().startswith('# the user\'s own settings\n')   # Codex's writer kept the rest
    cmd, full = pylines(300, '2026-12-01 10:00:00 INFO worker {m} processed item {i} in 12ms')   # ~18,000 characters
    mid_cmd, mid = pylines(120, '2026-12-01 10:00:00 INFO worker {m} handled request {i} in 3ms')   # under Codex's own cut
    api = s.run(codex, [shell(cmd, 'call_big'), shell(mid_cmd, 'call_mid'), retrieve_step('call_mid')])
    got = seen(api)
    view = got['call_big']
    assert view.startswith('Process exited with code 0\nOutput:\n') and '(caveman)' in view
    assert HANDLE.search(view) and len(view) < len(full) / 5 and 'item 299 ' in view
    h = HANDLE.search(view).group(1)
    r = subprocess.run([caveman_exe(), 'retrieve', h], env=s.env, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.stdout.decode() == full              # all of it, though Codex passed the hook only head and tail (read from the rollout)
    assert '(caveman)' in got['call_mid'] and HANDLE.search(got['call_mid'])
    assert got['call_retrieve'].split('Output:', 1)[1] == mid     # through Codex's MCP client: the exact original, never compressed


def test_small_output_failing_command_and_failing_hook(codex, tmp_path):
    bad = tmp_path / 'bad.json'; bad.write_text('{not json')
    s = Session(tmp_path, codex)
    small_cmd, small = pylines(3, 'line {i}')
    big_cmd, big = pylines(200, '2026-12-01 10:00:00 INFO worker {m} processed item {i} in 12ms')
    api = s.run(codex, [shell(small_cmd, 'call_small'), shell(big_cmd + '; exit 3', 'call_fail')])
    got = seen(api)
    assert got['call_small'].endswith('Output:\n' + small) and 'Process exited with code 0' in got['call_small']   # Codex's own text
    assert got['call_fail'].startswith('Process exited with code 3\nOutput:\n') and HANDLE.search(got['call_fail'])
    s.env['CAVEMAN_HOOK_CONFIG'] = str(bad)                      # the hook now fails on every call
    api = s.run(codex, [shell(big_cmd, 'call_big2')])
    original = seen(api)['call_big2']
    assert original.startswith('Chunk ID: ') and 'caveman' not in original and original.endswith(big[-2000:])   # Codex's own text


def test_host_without_caveman_mcp_gets_only_lossless_views(codex, tmp_path):
    s = Session(tmp_path, codex, '--no-mcp')
    assert 'mcp_servers' not in (s.codex_home / 'config.toml').read_text()
    log_cmd, log = pylines(150, '2026-12-01 10:00:00 INFO worker {m} processed item {i} in 12ms')
    rows = [{'id': i, 'name': f'user{i}', 'active': i % 2 == 0, 'score': i * 3} for i in range(200)]
    (s.project / 'rows.json').write_text(json.dumps(rows, indent=2))
    api = s.run(codex, [shell(log_cmd, 'call_log'), shell(f'cat {s.project / "rows.json"}', 'call_json')])
    assert not any('caveman' in json.dumps(t) for t in api.main_requests()[-1].get('tools', []))
    got = seen(api)
    assert 'caveman' not in got['call_log'] and got['call_log'].endswith('Output:\n' + log)   # a log view is lossy: untouched
    view = got['call_json']
    assert view.startswith('Process exited with code 0\nOutput:\n') and 'caveman' not in view
    toon = view[len('Process exited with code 0\nOutput:\n'):]
    assert len(toon) < len(json.dumps(rows, indent=2)) / 2
    r = subprocess.run([caveman_exe(), 'toon', 'decode'], input=toon.encode(), capture_output=True, timeout=60)
    assert json.loads(r.stdout) == rows                          # TOON: exactly the same data


def test_install_is_idempotent_and_uninstall_restores(codex, tmp_path):
    s = Session(tmp_path, codex)
    cfg = s.codex_home / 'config.toml'
    installed = cfg.read_text()
    assert 'trusted_hash = "sha256:' in installed and '[mcp_servers.caveman]' in installed
    assert s.install() == 'no change: caveman is installed\n'
    assert cfg.read_text() == installed
    s.install(verb='uninstall')
    assert 'caveman' not in cfg.read_text() and 'trusted_hash' not in cfg.read_text()
    assert cfg.read_text().startswith('# the user\'s own settings\nmodel = "gpt-5-codex"')
    assert not (s.codex_home / 'hooks.json').exists()                 # install created it: uninstall removes it
