"""What a hook view promises must be true in the host (break test 7, rows 08 and 21).

- An original over the 500,000 characters Claude Code shows of one tool result (`caveman_retrieve` declares
  `anthropic/maxResultSizeChars` 500,000) cannot come back whole: its handle line must ask for a query and must not
  promise the exact original.
- Where the user's Claude Code settings turn the `caveman` MCP server off, the model has no `caveman_retrieve`:
  `caveman install claude-code` must then register no server, write the hook without `--recovery`, and say which
  setting it found; the hook it writes makes no view with a handle.
The judges are this file's own: the original's length in characters, the settings files read back as JSON.
"""
import json, subprocess, sys
from pathlib import Path

import pytest
from conftest import child_env

CAVEMAN = Path(sys.executable).with_name('caveman')
HOST_RESULT_CHARS = 500_000     # Claude Code's largest anthropic/maxResultSizeChars (changelog 2.1.91)


@pytest.fixture
def env(tmp_path):
    if not CAVEMAN.exists(): pytest.fail('the caveman console script is not installed: run through `make test`')
    return child_env(only=(), PATH='/usr/bin:/bin', HOME=str(tmp_path / 'home'), CAVEMAN_HOME=str(tmp_path / 'cv'),
                     CAVEMAN_HOOK_SERVER='off')


def hook_view(full: str, env: dict, tmp_path: Path, cut: int = 30_000) -> str:
    "The Bash view the hook makes of `full`, handed over as Claude Code does (the first `cut` characters + the persisted file)."
    f = tmp_path / 'persisted.txt'; f.write_text(full)
    ev = {'hook_event_name': 'PostToolUse', 'tool_name': 'Bash', 'tool_input': {'command': 'x'},
          'tool_response': {'stdout': full[:cut], 'stderr': '', 'interrupted': False, 'persistedOutputPath': str(f),
                            'persistedOutputSize': len(full)}}
    r = subprocess.run([str(CAVEMAN), 'hook', 'claude-code', '--recovery'], input=json.dumps(ev).encode(), env=env,
                       capture_output=True, timeout=600)
    assert r.returncode == 0 and r.stdout, r.stderr
    return json.loads(r.stdout)['hookSpecificOutput']['updatedToolOutput']['stdout']


@pytest.mark.parametrize('n', [4_000, 9_000])
def test_handle_line_promises_the_whole_original_only_when_the_host_can_show_it(n, env, tmp_path):
    full = ''.join(f'2026-12-02 11:{i // 60 % 60:02d}:{i % 60:02d} INFO worker {i % 7} compiled unit {i} of pkg-{i % 13} in {i % 97} ms\n'
                   for i in range(n))
    view = hook_view(full, env, tmp_path)
    last = view.rstrip('\n').rsplit('\n', 1)[1]
    assert 'caveman_retrieve(recovery_handle="ccr_' in last, last
    if len(full) > HOST_RESULT_CHARS:
        assert 'exact original' not in last and 'query' in last and f'{len(full):,}' in last, last
    else:
        assert 'returns the exact original' in last, last
    handle = last.split('recovery_handle="')[1].split('"')[0]
    got = subprocess.run([str(CAVEMAN), 'retrieve', handle], env=env, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    assert got.stdout.decode() == full           # the store still has it all: only the host cannot show it whole


def install(env: dict, project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(CAVEMAN), 'install', 'claude-code', *args], cwd=project, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


def hook_commands(settings: Path) -> list[str]:
    s = json.loads(settings.read_text())
    return [h['command'] for e in s['hooks']['PostToolUse'] for h in e['hooks'] if 'caveman' in h['command']]


CASES = {   # name: (scope, file under home or project, its settings, the key install must name)
    'project disabledMcpjsonServers': ('project', 'project/.claude/settings.json', {'disabledMcpjsonServers': ['caveman']}, 'disabledMcpjsonServers'),
    'user deniedMcpServers, project install': ('project', 'home/.claude/settings.json', {'deniedMcpServers': [{'serverName': 'caveman'}]}, 'deniedMcpServers'),
    'user deniedMcpServers, user install': ('user', 'home/.claude/settings.json', {'deniedMcpServers': [{'serverName': 'caveman'}]}, 'deniedMcpServers'),
    'local allowedMcpServers without it': ('local', 'project/.claude/settings.local.json', {'allowedMcpServers': [{'serverName': 'github'}]}, 'allowedMcpServers'),
}


@pytest.mark.parametrize('case', list(CASES))
def test_install_claims_no_recovery_where_the_server_is_turned_off(case, env, tmp_path):
    scope, rel, settings, key = CASES[case]
    home, project = Path(env['HOME']), tmp_path / 'project'
    home.mkdir(parents=True, exist_ok=True); project.mkdir()
    f = tmp_path / rel; f.parent.mkdir(parents=True, exist_ok=True); f.write_text(json.dumps(settings))
    r = install(env, project, '--scope', scope)
    assert r.returncode == 0, r.stderr
    assert key in r.stdout and 'lossless' in r.stdout and 'not registered' in r.stdout, r.stdout
    hook_file = {'user': home / '.claude' / 'settings.json', 'project': project / '.claude' / 'settings.json',
                 'local': project / '.claude' / 'settings.local.json'}[scope]
    cmds = hook_commands(hook_file)
    assert cmds and not any('--recovery' in c for c in cmds), cmds
    servers = [json.loads(p.read_text()) for p in (project / '.mcp.json', home / '.claude.json') if p.exists()]
    assert 'caveman' not in json.dumps([s.get('mcpServers', {}) for s in servers] + [s.get('projects', {}) for s in servers])
    assert 'caveman' not in json.loads(hook_file.read_text()).get('enabledMcpjsonServers', [])
    f.write_text(json.dumps({}))                  # the setting gone: the same install claims recovery again
    r = install(env, project, '--scope', scope)
    assert r.returncode == 0 and 'not registered' not in r.stdout, r.stdout
    assert all(c.endswith('--recovery') for c in hook_commands(hook_file))
