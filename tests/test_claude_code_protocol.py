"""The real Claude Code (npm `@anthropic-ai/claude-code`, its native binary) connecting to caveman-mcp over
stdio and over Streamable HTTP (issue 16): it probes `server/discover` at 2026-07-28, caveman answers it,
and Claude Code stays on the stateless protocol — no fallback to `initialize`.

`claude mcp list` connects to every configured server and lists its tools ("✔ Connected"), which needs
no model and no Messages API. Over stdio the server runs behind `tests/_tee_stdio.py`, which records
every line both ways; over HTTP the server logs each request's era and method at DEBUG. The package is
installed from the npm registry into `.work/npm-claude` (lifecycle scripts off: the binary is run from
its platform package); a missing Node/npm or a failed install fails the test. Nothing here talks to
Anthropic: telemetry, auto-update and non-essential traffic are switched off, and no command needs a model.
"""
import json, os, platform, shutil, subprocess, sys

import pytest

from conftest import ROOT, server_command, child_env
from _npm import npm_install
from _http_server import HttpServer

pytestmark = pytest.mark.slow

PACKAGE, VERSION = '@anthropic-ai/claude-code', '2.1.328'
NPM_DIR = ROOT / '.work' / 'npm-claude'
PLATFORM = {'x86_64': 'linux-x64', 'aarch64': 'linux-arm64'}.get(platform.machine(), platform.machine())
BINARY = NPM_DIR / 'node_modules' / '@anthropic-ai' / f'claude-code-{PLATFORM}' / 'claude'
QUIET = {'DISABLE_TELEMETRY': '1', 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC': '1', 'DISABLE_AUTOUPDATER': '1',
         'DISABLE_ERROR_REPORTING': '1'}


@pytest.fixture(scope='module')
def claude() -> str:
    def version():
        try: return subprocess.run([str(BINARY), '--version'], capture_output=True, text=True, timeout=60).stdout.split()[0]
        except (OSError, IndexError, subprocess.SubprocessError): return None
    try: npm_install(NPM_DIR, {PACKAGE: VERSION}, installed=lambda: version() == VERSION)
    except RuntimeError as e: pytest.fail(str(e))
    return str(BINARY)


def claude_run(claude, home, *args) -> str:
    env = child_env(only=('PATH',), HOME=str(home), **QUIET)
    r = subprocess.run([claude, *args], capture_output=True, text=True, timeout=180, cwd=home, env=env, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, (args, r.stdout[-2000:], r.stderr[-2000:])
    return r.stdout


def test_claude_code_over_stdio_gets_server_discover_answered_and_never_falls_back(claude, tmp_path):
    log = tmp_path / 'wire.log'
    claude_run(claude, tmp_path, 'mcp', 'add', 'caveman', '-s', 'user', '-e', f'TEE_LOG={log}', '-e', f'TEE_SERVER={server_command()[0]}',
               '-e', 'CAVEMAN_MCP_EPHEMERAL=1', '--', sys.executable, str(ROOT / 'tests' / '_tee_stdio.py'))
    out = claude_run(claude, tmp_path, 'mcp', 'list')
    assert 'caveman' in out and 'Connected' in out, out
    lines = [(l[:1], json.loads(l[2:])) for l in log.read_text().splitlines()]
    sent = [m for d, m in lines if d == '>']
    answers = {json.dumps(m.get('id')): m for d, m in lines if d == '<'}
    first = sent[0]
    assert first['method'] == 'server/discover'
    assert first['params']['_meta']['io.modelcontextprotocol/protocolVersion'] == '2026-07-28'
    assert first['params']['_meta']['io.modelcontextprotocol/clientInfo']['name'] == 'claude-code'
    d = answers[json.dumps(first['id'])]
    assert 'error' not in d and d['result']['supportedVersions'][0] == '2026-07-28' and d['result']['resultType'] == 'complete'
    assert not any(m.get('method') == 'initialize' for m in sent), [m.get('method') for m in sent]     # no fallback
    tools_list = [m for m in sent if m.get('method') == 'tools/list']
    assert tools_list and all(m['params']['_meta']['io.modelcontextprotocol/protocolVersion'] == '2026-07-28' for m in tools_list)
    listed = answers[json.dumps(tools_list[0]['id'])]['result']
    assert [t['name'] for t in listed['tools']][0] == 'caveman_compress' and listed['resultType'] == 'complete'


def test_claude_code_over_http_gets_server_discover_answered_and_never_falls_back(claude, tmp_path):
    with HttpServer(tmp_path, CAVEMAN_LOG_LEVEL='DEBUG') as srv:
        claude_run(claude, tmp_path, 'mcp', 'add', '--transport', 'http', 'caveman', srv.url, '-s', 'user')
        out = claude_run(claude, tmp_path, 'mcp', 'list')
        assert 'caveman' in out and 'Connected' in out, out
        requests = [l for l in srv.log(tail=None).splitlines() if 'msg="http request"' in l]
        assert requests and 'era=stateless method=server/discover' in requests[0], requests
        assert any('era=stateless method=tools/list' in l for l in requests), requests
        assert not any('method=initialize' in l or 'era=handshake' in l for l in requests), requests
        assert srv.stop() == 0
