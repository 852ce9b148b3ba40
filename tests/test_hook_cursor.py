"""`caveman hook cursor` against Cursor's recorded hook payloads (tests/_cursor_payloads.py, sources cited there).

Cursor honours a replacement only as `updated_mcp_tool_output`, and only for MCP tools. A test judging a view
reads it with its own code: TOON through the `toon_format` package, a lossy view through `caveman retrieve`.
"""
import json, subprocess, sys
from pathlib import Path

import pytest
import toon_format

sys.path.insert(0, str(Path(__file__).parent))
from _cursor_payloads import ISSUES, post_tool_use, mcp_result, shell_output, after_mcp_execution   # noqa: E402
from conftest import child_env

CAVEMAN = Path(sys.executable).with_name('caveman')


def hook(event: dict, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(CAVEMAN), 'hook', 'cursor', *args], input=json.dumps(event).encode(), capture_output=True, env=env, timeout=120)


@pytest.fixture
def env(tmp_path):
    if not CAVEMAN.exists(): pytest.fail('the caveman console script is not installed: run through `make test`')
    (tmp_path / 'home').mkdir()
    return child_env(only=(), PATH='/usr/bin:/bin', HOME=str(tmp_path / 'home'), CAVEMAN_HOME=str(tmp_path / 'cv'))


@pytest.mark.parametrize('tool', ['MCP:github:list_issues', 'MCP:list_issues'])
def test_mcp_result_replaced_in_its_own_shape_lossless(tool, env, tmp_path):
    r = hook(post_tool_use(tool, mcp_result(ISSUES), str(tmp_path)), env)
    assert r.returncode == 0 and r.stderr == b''
    answer = json.loads(r.stdout)
    assert list(answer) == ['updated_mcp_tool_output']
    out = answer['updated_mcp_tool_output']
    assert list(out) == ['content'] and [b['type'] for b in out['content']] == ['text']
    view = out['content'][0]['text']
    assert len(view) < len(ISSUES) and 'caveman' not in view                    # no recovery: lossless only, no handle
    assert toon_format.decode(view) == json.loads(ISSUES)


def test_mcp_result_with_recovery_returns_the_exact_original(env, tmp_path):
    log = ''.join(f'2026-12-01 10:00:{i % 60:02d} INFO request served id={i} status=200\n' for i in range(500))
    r = hook(post_tool_use('MCP:logs:tail', mcp_result(log), str(tmp_path)), env, '--recovery')
    view = json.loads(r.stdout)['updated_mcp_tool_output']['content'][0]['text']
    assert len(view) < len(log) / 4
    handle = view.rsplit('recovery_handle="', 1)[1].split('"', 1)[0]
    got = subprocess.run([str(CAVEMAN), 'retrieve', handle], capture_output=True, env=env, timeout=120)
    assert got.stdout.decode() == log


@pytest.mark.parametrize('event', [
    lambda w: post_tool_use('Shell', shell_output(ISSUES), w, {'command': 'cat issues.json'}),     # not honoured by Cursor
    lambda w: post_tool_use('Read', ISSUES, w, {'file_path': 'issues.json'}),
    lambda w: post_tool_use('MCP:caveman:caveman_retrieve', mcp_result(ISSUES), w),               # caveman's own tool
    lambda w: post_tool_use('MCP:caveman_retrieve', mcp_result(ISSUES), w),
    lambda w: post_tool_use('MCP:github:list_issues', mcp_result(ISSUES, isError=True), w),      # an error result
    lambda w: post_tool_use('MCP:github:list_issues', mcp_result('[]'), w),                       # small
    lambda w: after_mcp_execution('MCP:github:list_issues', mcp_result(ISSUES), w)])               # observe-only event
def test_left_alone_silently(event, env, tmp_path):
    r = hook(event(str(tmp_path)), env, '--recovery')
    assert (r.returncode, r.stdout, r.stderr) == (0, b'', b'')


def test_a_caveman_gateway_in_cursor_is_never_compressed_twice(env, tmp_path):
    (tmp_path / '.cursor').mkdir()
    (tmp_path / '.cursor' / 'mcp.json').write_text(json.dumps({'mcpServers': {'gh': {'command': 'caveman-mcp', 'args': ['--', 'npx', 'gh-mcp']}}}))
    for tool in ('MCP:gh:list_issues', 'MCP:list_issues'):          # the gateway's tool; a tool whose server cannot be told
        r = hook(post_tool_use(tool, mcp_result(ISSUES), str(tmp_path)), env, '--recovery')
        assert (r.returncode, r.stdout, r.stderr) == (0, b'', b''), tool
    r = hook(post_tool_use('MCP:github:list_issues', mcp_result(ISSUES), str(tmp_path)), env)   # another server
    assert r.stdout


@pytest.mark.parametrize('output', [json.dumps({'result': ISSUES}), json.dumps([ISSUES])])
def test_unknown_result_shape_says_so_in_one_line(output, env, tmp_path):
    r = hook(post_tool_use('MCP:github:list_issues', output, str(tmp_path)), env)
    assert (r.returncode, r.stdout) == (0, b'')
    assert r.stderr.startswith(b'caveman hook: unknown Cursor MCP tool_output shape') and r.stderr.count(b'\n') == 1
