"""`caveman install claude-code --gateway` checks the whole move before writing (break-test 4, findings 8, 10, 13, 14d),
through the installed console scripts and, where the result must be served, the official SDK client against
`caveman-mcp --config` with a real upstream (`mcp-server-time` from PyPI).
"""
import asyncio, json, os, subprocess, sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import server_command
from _upstreams import install_upstreams

CAVEMAN = Path(sys.executable).with_name('caveman')


@pytest.fixture
def env(tmp_path):
    if not CAVEMAN.exists(): pytest.fail('the caveman console script is not installed: run through `make test`')
    (tmp_path / 'home' / '.claude').mkdir(parents=True); (tmp_path / 'project' / '.claude').mkdir(parents=True)
    return {'PATH': os.environ['PATH'], 'HOME': str(tmp_path / 'home'), 'CAVEMAN_HOME': str(tmp_path / 'cv')}


def run(env, cwd, *args, code=0) -> subprocess.CompletedProcess:
    r = subprocess.run([str(CAVEMAN), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    return r


@pytest.mark.slow
def test_names_that_share_a_tool_prefix_never_make_a_config_the_gateway_refuses(env, tmp_path):
    "'my time' and 'my_time' would both list tools as my_time__…: the first moves, the second stays, and the gateway serves."
    time_cmd = install_upstreams()['time'][0]
    home = Path(env['HOME'])
    (home / '.claude.json').write_text(json.dumps({'mcpServers': {'my time': {'command': time_cmd, 'args': ['--local-timezone', 'UTC']},
                                                                  'my_time': {'command': time_cmd}}}))
    out = run(env, tmp_path, 'install', 'claude-code', '--gateway').stdout
    assert 'moved behind the gateway: my time' in out and 'kept in place: my_time' in out, out
    host = json.loads((home / '.claude.json').read_text())['mcpServers']
    assert 'my_time' in host and 'my time' not in host
    cfg = host['caveman']['args'][-1]
    async def go():
        params = StdioServerParameters(command=server_command()[0], args=server_command()[1:] + ['--config', cfg],
                                       env={**os.environ, **env, 'CAVEMAN_MCP_EPHEMERAL': '1'})
        async with stdio_client(params, errlog=open(tmp_path / 'err.log', 'w+')) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                for _ in range(180):
                    if 'my_time__get_current_time' in [t.name for t in (await s.list_tools()).tools]: break
                    await asyncio.sleep(0.5)
                # one upstream, still <server>__<tool> in a config install wrote (break test 5): the name the
                # permission advice gives (mcp__caveman__my_time__…) stays right when more servers move later
                return await s.call_tool('my_time__get_current_time', {'timezone': 'UTC'})
    res = asyncio.run(go())
    assert not res.is_error and '"timezone": "UTC"' in res.content[0].text


def test_permission_rules_of_every_settings_file_are_listed_with_a_rule_that_matches(env, tmp_path):
    "--scope project: deny rules in ~/.claude/settings.json and .claude/settings.local.json are listed; a server-wide"
    " rule mcp__fs is rewritten to mcp__caveman__fs__* (every tool of it behind the gateway), a tool rule to its tool."
    home, proj = Path(env['HOME']), tmp_path / 'project'
    (proj / '.mcp.json').write_text(json.dumps({'mcpServers': {'fs': {'command': sys.executable, 'args': ['-m', 'fs']}}}))
    (home / '.claude' / 'settings.json').write_text(json.dumps({'permissions': {'deny': ['mcp__fs']}}))
    (proj / '.claude' / 'settings.local.json').write_text(json.dumps({'permissions': {'deny': ['mcp__fs__write_file'], 'allow': ['Bash(ls:*)']}}))
    out = run(env, proj, 'install', 'claude-code', '--scope', 'project', '--gateway', '--dry-run').stdout
    notes = [l for l in out.splitlines() if l.startswith('permission rule')]
    assert len(notes) == 2, out
    assert any("'mcp__fs'" in n and "'mcp__caveman__fs__*'" in n and 'settings.json' in n for n in notes), notes
    assert any("'mcp__fs__write_file'" in n and "'mcp__caveman__fs__write_file'" in n and 'settings.local.json' in n for n in notes), notes


def test_a_relative_command_is_judged_from_the_project_not_the_callers_cwd(env, tmp_path):
    proj = tmp_path / 'project'
    srv = proj / 'srv.sh'; srv.write_text('#!/bin/sh\nexit 0\n'); srv.chmod(0o755)
    (proj / '.mcp.json').write_text(json.dumps({'mcpServers': {'local': {'command': './srv.sh'}}}))
    elsewhere = tmp_path / 'elsewhere'; elsewhere.mkdir()
    out = run(env, elsewhere, 'install', 'claude-code', '--scope', 'project', '--project', str(proj), '--gateway', '--dry-run').stdout
    assert 'moved behind the gateway: local' in out, out


def test_codex_dry_run_fails_as_the_install_does_without_codex(env, tmp_path):
    bare = {**env, 'PATH': str(Path(sys.executable).parent) + ':/usr/bin:/bin'}
    if any((Path(d) / 'codex').exists() for d in bare['PATH'].split(':')): pytest.fail('codex found on the bare PATH')
    real = run(bare, tmp_path, 'install', 'codex', code=1)
    dry = run(bare, tmp_path, 'install', 'codex', '--dry-run', code=1)
    assert 'codex binary is not on PATH' in real.stdout + real.stderr
    assert 'codex binary is not on PATH' in dry.stdout + dry.stderr


def test_a_project_uninstall_leaves_no_empty_settings_file(env, tmp_path):
    "install --scope project --gateway created .claude/settings.json for the hook; uninstall removes it rather than leaving {}."
    proj = tmp_path / 'project'
    (proj / '.mcp.json').write_text(json.dumps({'mcpServers': {'t': {'command': sys.executable, 'args': ['-m', 't']}}}))
    run(env, proj, 'install', 'claude-code', '--scope', 'project', '--gateway')
    assert (proj / '.claude' / 'settings.json').exists()
    run(env, proj, 'uninstall', 'claude-code', '--scope', 'project')
    assert not (proj / '.claude' / 'settings.json').exists()
    assert json.loads((proj / '.mcp.json').read_text()) == {'mcpServers': {'t': {'command': sys.executable, 'args': ['-m', 't']}}}
