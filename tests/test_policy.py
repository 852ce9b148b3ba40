"""One policy (`caveman.policy`) for the PostToolUse hook and the MCP gateway, through the installed console
scripts: one `policy.json` and the `CAVEMAN_*` variables decide what both touch; the earlier hook-only names
(`hooks.json`, `CAVEMAN_HOOK_CONFIG`, `CAVEMAN_HOOK_*`, snake_case keys) still work, with a deprecation note.

The gateway half runs `caveman-mcp --config` in front of the real `@modelcontextprotocol/server-filesystem`
(npm, installed by tests/_upstreams.py) rooted at the shared corpus, read in place, and drives it with the
official SDK client.
"""
import asyncio, json, os, subprocess, sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from caveman.corpus import corpus_path
from conftest import server_command, child_env
from _upstreams import install_upstreams

CAVEMAN = Path(sys.executable).with_name('caveman')
LOG = corpus_path('log_pip_install_verbose.log')          # 21 KB of a real pip log


@pytest.fixture
def env(tmp_path):
    if not CAVEMAN.exists(): pytest.fail('the caveman console script is not installed: run through `make test`')
    home = tmp_path / 'cv'; home.mkdir()
    return child_env(only=('PATH',), HOME=str(tmp_path / 'home'), CAVEMAN_HOME=str(home))


def hook(tool: str, response, env: dict) -> subprocess.CompletedProcess:
    event = {'hook_event_name': 'PostToolUse', 'tool_name': tool, 'tool_input': {'command': 'pip install -v .'}, 'tool_response': response}
    return subprocess.run([str(CAVEMAN), 'hook', 'claude-code', '--recovery'], input=json.dumps(event).encode(),
                          capture_output=True, env=env, timeout=120)


def bash(text: str) -> dict: return {'stdout': text, 'stderr': '', 'interrupted': False, 'isImage': False}


def touched(r: subprocess.CompletedProcess) -> bool:
    assert r.returncode == 0, r.stderr
    return bool(r.stdout)


def test_hook_reads_the_policy_file_and_the_environment_over_it(env):
    text = LOG.read_text()
    assert touched(hook('Bash', bash(text), env))                                      # defaults: 21 KB is worth it
    Path(env['CAVEMAN_HOME'], 'policy.json').write_text(json.dumps({'minBytes': len(text.encode()) + 1}))
    r = hook('Bash', bash(text), env)
    assert not touched(r) and r.stderr == b''                                          # the file raised the floor
    assert touched(hook('Bash', bash(text), {**env, 'CAVEMAN_MIN_BYTES': '100'}))       # the environment wins
    assert not touched(hook('Bash', bash(text), {**env, 'CAVEMAN_MIN_BYTES': '100', 'CAVEMAN_ENABLED': 'off'}))
    Path(env['CAVEMAN_HOME'], 'policy.json').write_text(json.dumps({'exclude': ['Bash(pip *)']}))
    assert not touched(hook('Bash', bash(text), env))


def test_earlier_hook_names_still_work_and_say_they_are_deprecated(env, tmp_path):
    text = LOG.read_text()
    old = tmp_path / 'hooks.json'
    old.write_text(json.dumps({'min_bytes': len(text.encode()) + 1}))
    r = hook('Bash', bash(text), {**env, 'CAVEMAN_HOOK_CONFIG': str(old)})
    assert not touched(r)
    lines = r.stderr.decode().splitlines()
    assert lines == ['caveman hook: CAVEMAN_HOOK_CONFIG is deprecated, set CAVEMAN_POLICY',
                     f'caveman hook: {old}: policy key "min_bytes" is deprecated, write "minBytes"']
    r = hook('Bash', bash(text), {**env, 'CAVEMAN_HOOK': 'off'})
    assert not touched(r) and r.stderr == b'caveman hook: CAVEMAN_HOOK is deprecated, set CAVEMAN_ENABLED\n'
    Path(env['CAVEMAN_HOME'], 'hooks.json').write_text(json.dumps({'exclude': ['Bash']}))   # the old file in the home
    r = hook('Bash', bash(text), env)
    assert not touched(r) and b'rename it to' in r.stderr and b'policy.json' in r.stderr


def test_a_broken_policy_leaves_the_hook_aside_and_stops_the_gateway(env, tmp_path):
    Path(env['CAVEMAN_HOME'], 'policy.json').write_text('{"minBytes": "lots"}')
    r = hook('Bash', bash(LOG.read_text()), env)
    assert (r.returncode, r.stdout) == (0, b'') and b'minBytes must be a non-negative integer' in r.stderr
    cfg = tmp_path / 'servers.json'
    cfg.write_text(json.dumps({'mcpServers': {'py': {'command': sys.executable, 'args': ['-c', 'pass']}}}))
    g = subprocess.run(server_command() + ['--config', str(cfg)], capture_output=True, text=True, env=env, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert (g.returncode, g.stdout) == (2, '') and 'minBytes must be a non-negative integer' in g.stderr and 'Traceback' not in g.stderr


@asynccontextmanager
async def session(command: list[str], env: dict, errlog):
    async with stdio_client(StdioServerParameters(command=command[0], args=command[1:], env=env), errlog=errlog) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            yield s


@pytest.mark.slow
def test_one_policy_file_governs_the_hook_and_the_gateway(env, tmp_path):
    "The same rule, written once for the tool as Claude Code names it, holds in the hook and in the gateway."
    fs = install_upstreams()['filesystem']
    root = str(LOG.parent)
    cfg = tmp_path / 'servers.json'
    cfg.write_text(json.dumps({'mcpServers': {'files': {'command': fs[0], 'args': fs[1:] + [root]}}}))
    gw = server_command() + ['--config', str(cfg)]
    text = LOG.read_text()
    policy = Path(env['CAVEMAN_HOME'], 'policy.json')
    errlog = open(tmp_path / 'err.log', 'w+')
    genv = {**env, 'CAVEMAN_CCR_DB': str(tmp_path / 'ccr.db')}

    async def through_gateway():
        async with session([fs[0], *fs[1:], root], genv, errlog) as s:
            direct_tools = {t.name: t.model_dump() for t in (await s.list_tools()).tools}
            direct = await s.call_tool('read_text_file', {'path': str(LOG)})
        async with session(gw, genv, errlog) as s:
            tools = {t.name: t.model_dump() for t in (await s.list_tools()).tools}
            res = await s.call_tool('read_text_file', {'path': str(LOG)})
        return direct_tools, direct, tools, res

    policy.write_text(json.dumps({'exclude': ['mcp__files__read_text_file']}))
    mcp_hook = hook('mcp__files__read_text_file', [{'type': 'text', 'text': text}], env)
    assert not touched(mcp_hook) and mcp_hook.stderr == b''
    direct_tools, direct, tools, res = asyncio.run(through_gateway())
    assert res.model_dump() == direct.model_dump()                                     # excluded: exactly the upstream's result
    assert tools['read_text_file'] != direct_tools['read_text_file']                   # still shrunk

    policy.write_text(json.dumps({'shrink': False, 'exclude': ['mcp__github__*']}))
    assert touched(hook('mcp__files__read_text_file', [{'type': 'text', 'text': text}], env))
    direct_tools, direct, tools, res = asyncio.run(through_gateway())
    view = ''.join(b.text for b in res.content if b.type == 'text')
    assert len(view) < len(text) and 'caveman_retrieve' in view                       # compressed now
    assert all(tools[n] == t for n, t in direct_tools.items())                         # shrink off: as the upstream wrote them

    policy.write_text(json.dumps({'enabled': False}))
    assert not touched(hook('mcp__files__read_text_file', [{'type': 'text', 'text': text}], env))
    direct_tools, direct, tools, res = asyncio.run(through_gateway())
    assert res.model_dump() == direct.model_dump() and all(tools[n] == t for n, t in direct_tools.items())
