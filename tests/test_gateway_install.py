"""`caveman install claude-code --gateway` / `--no-gateway` / `caveman uninstall claude-code` through the installed
console script, on settings files shaped like a real user's: servers move behind the gateway and back exactly
(same entries, same order, every other key untouched), backups are written, a dry run writes nothing, running a
command twice changes nothing, and servers the gateway cannot serve stay where they are with a note.
"""
import json, os, re, stat, subprocess, sys
from pathlib import Path

import pytest
from conftest import child_env

CAVEMAN = Path(sys.executable).with_name('caveman')
PY = sys.executable


@pytest.fixture
def env(tmp_path):
    if not CAVEMAN.exists(): pytest.fail('the caveman console script is not installed: run through `make test`')
    (tmp_path / 'home').mkdir(); (tmp_path / 'project').mkdir()
    return child_env(only=('PATH',), HOME=str(tmp_path / 'home'), CAVEMAN_HOME=str(tmp_path / 'cv'))


def run(env, cwd, *args) -> subprocess.CompletedProcess:
    r = subprocess.run([str(CAVEMAN), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return r


def ordered(path: Path):
    "The file's JSON value with its key order (a dict compares equal in any order; this does not)."
    return json.dumps(json.loads(path.read_text()))


SERVERS = {
    'files': {'type': 'stdio', 'command': PY, 'args': ['-m', 'some_fs_server', '/srv'], 'env': {'TOKEN': '${FS_TOKEN:-none}'}},
    'legacy-sse': {'type': 'sse', 'url': 'https://mcp.example.com/sse'},
    'github': {'type': 'http', 'url': 'https://api.example.com/mcp/', 'headers': {'Authorization': 'Bearer ${GH_PAT:-unset}'}},
    'oauth-one': {'type': 'http', 'url': 'https://x.example.com/mcp', 'oauth': {'clientId': 'abc'}},
}


def test_user_scope_round_trip_is_exact(env, tmp_path):
    home, cwd = Path(env['HOME']), tmp_path / 'project'
    claude_json = home / '.claude.json'
    original = {'numStartups': 12, 'mcpServers': SERVERS, 'projects': {'/x': {'allowedTools': []}}, 'userID': 'u'}
    claude_json.write_text(json.dumps(original, indent=4))
    (home / '.claude').mkdir()
    settings = home / '.claude' / 'settings.json'
    user_settings = {'model': 'opus', 'permissions': {'allow': ['mcp__github__list_issues', 'Bash(ls:*)']}}
    settings.write_text(json.dumps(user_settings))
    before = (ordered(claude_json), ordered(settings))

    dry = run(env, cwd, 'install', 'claude-code', '--gateway', '--dry-run')
    assert '--config' in dry.stdout and 'moved behind the gateway: files' in dry.stdout
    assert (ordered(claude_json), ordered(settings)) == before and not (Path(env['CAVEMAN_HOME']) / 'gateway').exists()

    out = run(env, cwd, 'install', 'claude-code', '--gateway').stdout
    assert 'moved behind the gateway: files' in out and 'moved behind the gateway: github' in out
    assert "kept in place: legacy-sse" in out and "kept in place: oauth-one" in out and "unknown key 'oauth'" in out
    assert "'mcp__caveman__github__list_issues'" in out                       # the permission rule to rewrite
    cj = json.loads(claude_json.read_text())
    assert list(cj) == list(original) and list(cj['mcpServers']) == ['legacy-sse', 'oauth-one', 'caveman']
    entry = cj['mcpServers']['caveman']
    assert entry['command'].endswith('caveman-mcp') and entry['args'][0] == '--config'
    gfile = Path(entry['args'][1])
    cfg = json.loads(gfile.read_text())
    assert cfg['mcpServers'] == {'files': SERVERS['files'], 'github': SERVERS['github']}   # verbatim, ${VAR}s unexpanded
    assert stat.S_IMODE(gfile.stat().st_mode) == 0o600
    assert json.loads(Path(str(claude_json) + '.caveman.bak').read_text()) == original
    assert 'PostToolUse' in json.loads(settings.read_text())['hooks']
    check = subprocess.run([PY, '-c', 'import sys, json; from caveman.mcp.gateway import load_config; '
                            'print(json.dumps([s.name for s in load_config(sys.argv[1])]))', str(gfile)],
                           capture_output=True, text=True, env=env, timeout=60)
    assert json.loads(check.stdout) == ['files', 'github']                 # the gateway reads what install wrote

    again = run(env, cwd, 'install', 'claude-code').stdout                   # no flag: keeps the gateway; nothing to do
    assert again.startswith('no change') and json.loads(claude_json.read_text()) == cj

    run(env, cwd, 'uninstall', 'claude-code')
    assert (ordered(claude_json), ordered(settings)) == before and not gfile.exists()
    assert not Path(str(gfile) + '.caveman.bak').exists() and not gfile.parent.exists()   # its servers are back in the host's file: no copy left
    assert run(env, cwd, 'uninstall', 'claude-code').stdout.startswith('no change')


def test_project_scope_no_gateway_moves_back_and_keeps_a_plain_server(env, tmp_path):
    cwd = tmp_path / 'project'
    mcp = cwd / '.mcp.json'
    original = {'mcpServers': {'files': SERVERS['files'], 'time': {'command': PY, 'args': ['-m', 'mcp_server_time']}}}
    mcp.write_text(json.dumps(original))
    run(env, cwd, 'install', 'claude-code', '--scope', 'project', '--gateway')
    servers = json.loads(mcp.read_text())['mcpServers']
    assert list(servers) == ['caveman'] and (cwd / '.claude' / 'caveman-gateway.json').exists()
    assert json.loads((cwd / '.claude' / 'settings.json').read_text())['enabledMcpjsonServers'] == ['caveman']
    run(env, cwd, 'install', 'claude-code', '--scope', 'project', '--no-gateway')
    servers = json.loads(mcp.read_text())['mcpServers']
    assert list(servers) == ['files', 'time', 'caveman'] and servers['caveman']['args'] == ['--retrieve-only']
    assert {k: servers[k] for k in ('files', 'time')} == original['mcpServers'] and not (cwd / '.claude' / 'caveman-gateway.json').exists()
    run(env, cwd, 'uninstall', 'claude-code', '--scope', 'project')
    assert ordered(mcp) == json.dumps(original)


def test_local_scope_and_servers_added_after_install(env, tmp_path):
    home, cwd = Path(env['HOME']), tmp_path / 'project'
    proj = str(cwd.resolve())
    original = {'projects': {proj: {'allowedTools': [], 'mcpServers': {'files': SERVERS['files']}, 'hasTrustDialogAccepted': True}}}
    (home / '.claude.json').write_text(json.dumps(original))
    run(env, cwd, 'install', 'claude-code', '--scope', 'local', '--gateway')
    doc = json.loads((home / '.claude.json').read_text())
    assert list(doc['projects'][proj]['mcpServers']) == ['caveman']
    doc['projects'][proj]['mcpServers']['later'] = {'command': PY, 'args': ['-m', 'later']}   # the user adds one directly
    (home / '.claude.json').write_text(json.dumps(doc))
    out = run(env, cwd, 'install', 'claude-code', '--scope', 'local', '--gateway').stdout
    assert 'moved behind the gateway: later' in out
    assert list(json.loads((home / '.claude.json').read_text())['projects'][proj]['mcpServers']) == ['caveman']
    run(env, cwd, 'uninstall', 'claude-code', '--scope', 'local')
    back = json.loads((home / '.claude.json').read_text())
    assert list(back['projects'][proj]['mcpServers']) == ['files', 'later']
    assert back['projects'][proj]['mcpServers']['files'] == SERVERS['files'] and list(back['projects'][proj]) == list(original['projects'][proj])


def test_bad_requests_write_nothing(env, tmp_path):
    cwd = tmp_path / 'project'
    (cwd / '.mcp.json').write_text(json.dumps({'mcpServers': {'files': SERVERS['files']}}))
    r = subprocess.run([str(CAVEMAN), 'install', 'claude-code', '--scope', 'project', '--gateway', '--no-mcp'], capture_output=True,
                       text=True, env=env, cwd=cwd, timeout=120)
    assert r.returncode == 1 and '--gateway needs' in r.stderr and not (cwd / '.claude').exists()
    r = subprocess.run([str(CAVEMAN), 'install', 'claude-code', '--gateway', '--no-gateway'], capture_output=True, text=True, env=env,
                       cwd=cwd, timeout=120)
    assert r.returncode != 0 and not (Path(env['HOME']) / '.claude.json').exists()
    (cwd / '.claude').mkdir(); (cwd / '.claude' / 'caveman-gateway.json').write_text('{broken')
    r = subprocess.run([str(CAVEMAN), 'uninstall', 'claude-code', '--scope', 'project'], capture_output=True, text=True, env=env,
                       cwd=cwd, timeout=120)
    assert r.returncode == 1 and 'not valid JSON' in r.stderr
    assert json.loads((cwd / '.mcp.json').read_text()) == {'mcpServers': {'files': SERVERS['files']}}


def test_uninstall_never_loses_a_server_the_user_added_again(env, tmp_path):
    "A moved server re-added directly to the host (same name, new entry) and then uninstall: both definitions stay, and the output says so."
    home, cwd = Path(env['HOME']), tmp_path / 'project'
    claude_json = home / '.claude.json'
    claude_json.write_text(json.dumps({'mcpServers': {'files': SERVERS['files'], 'github': SERVERS['github']}}))
    run(env, cwd, 'install', 'claude-code', '--gateway')
    doc = json.loads(claude_json.read_text())
    readded = {'type': 'stdio', 'command': PY, 'args': ['-m', 'another_fs_server', '/data']}
    doc['mcpServers']['files'] = readded                                       # the user adds it back by hand
    claude_json.write_text(json.dumps(doc))
    out = run(env, cwd, 'uninstall', 'claude-code').stdout
    servers = json.loads(claude_json.read_text())['mcpServers']
    assert servers['files'] == readded                                         # the user's new entry, untouched
    kept = [e for n, e in servers.items() if n != 'files' and e == SERVERS['files']]
    assert len(kept) == 1, servers                                             # the gateway's copy, restored under another name
    restored = next(n for n, e in servers.items() if n != 'files' and e == SERVERS['files'])
    assert restored in out and 'files' in out
    assert servers['github'] == SERVERS['github'] and 'caveman' not in servers


def test_the_caveman_home_made_by_install_gateway_is_private(env, tmp_path):
    home, cwd = Path(env['HOME']), tmp_path / 'project'
    (home / '.claude.json').write_text(json.dumps({'mcpServers': {'files': SERVERS['files']}}))
    cv = Path(env['CAVEMAN_HOME'])
    assert not cv.exists()
    run(env, cwd, 'install', 'claude-code', '--gateway')
    for d in (cv, cv / 'gateway'):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, (d, oct(d.stat().st_mode))


def test_help_lists_every_hook_and_the_options_as_typed(env, tmp_path):
    "`caveman --help` names `hook cursor`; `caveman install --help` spells the options with dashes, as the command takes them."
    top = run(env, tmp_path, '--help').stdout
    assert re.search(r'hook [a-z|-]*cursor', top), top
    for cmd in ('install', 'uninstall'):
        text = run(env, tmp_path, cmd, '--help').stdout
        assert '--dry-run' in text and not re.search(r'--[a-z]+_[a-z]', text), text
