"""caveman-mcp driven by the MCP Inspector CLI (`@modelcontextprotocol/inspector` 2.12.0, the official
TypeScript client; its request ids start at 0).

The test setup installs the Inspector from the npm registry into `.work/npm` (git-ignored) with a
project-local npm cache, once; CI runs on a fresh machine, so a missing Node/npm or a failed install
FAILS the test rather than skipping it. Lifecycle scripts are not run (`--ignore-scripts`: the
package's only script installs its own sub-clients in a source checkout and does nothing here).
Each `--cli` run spawns its own `caveman-mcp`; runs share one store file through `-e CAVEMAN_CCR_DB=…`,
so a handle minted in one run is retrieved in the next. The same CLI also talks to one long-running
`caveman-mcp --http` over Streamable HTTP (its target is then the URL). The Inspector probes
`server/discover` and speaks the stateless 2026-07-28 protocol when a server answers it, as caveman does. The Inspector parses `--tool-arg` values as
JSON when they parse, so a JSON payload is passed as a JSON string literal.
"""
import json, shutil, subprocess
from pathlib import Path

import pytest

from caveman.corpus import corpus_path
from conftest import ROOT, server_command, child_env
from _npm import npm_install
from _http_server import HttpServer

pytestmark = pytest.mark.slow

PACKAGE, VERSION = '@modelcontextprotocol/inspector', '2.12.0'
NPM_DIR = ROOT / '.work' / 'npm'
PKG_DIR = NPM_DIR / 'node_modules' / '@modelcontextprotocol' / 'inspector'
FIVE = ['caveman_compress', 'caveman_retrieve', 'caveman_stats', 'caveman_toon_encode', 'caveman_toon_decode']


@pytest.fixture(scope='module')
def inspector() -> list[str]:
    "The command that runs the Inspector CLI, installing the pinned version from npm first if needed."
    try: npm_install(NPM_DIR, {PACKAGE: VERSION})
    except RuntimeError as e: pytest.fail(str(e))
    node = shutil.which('node')
    launcher = PKG_DIR / json.loads((PKG_DIR / 'package.json').read_text())['bin']['mcp-inspector']
    return [node, str(launcher), '--cli']


def run_cli(inspector, home: Path, db: Path, *args: str, expect_rc=0) -> dict:
    "One Inspector CLI run against caveman-mcp; returns its JSON output."
    cmd = inspector + server_command() + ['-e', f'CAVEMAN_CCR_DB={db}'] + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                       env=child_env(only=(), PATH=str(Path(shutil.which('node')).parent) + ':/usr/bin:/bin', HOME=str(home)))
    assert r.returncode == expect_rc, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    return json.loads(r.stdout)


def text_and_error(out: dict) -> tuple[str, bool]:
    "The text block and isError of a tools/call result; a compress result may add a resource_link to its original."
    assert out['content'][0]['type'] == 'text'
    if len(out['content']) > 1:
        assert len(out['content']) == 2 and out['content'][1]['type'] == 'resource_link'
        assert out['content'][1]['uri'] == 'caveman://ccr/' + json.loads(out['content'][0]['text'])['recovery_handle']
    return out['content'][0]['text'], out['isError']


def call(inspector, home, db, tool: str, **args) -> tuple[str, bool]:
    out = run_cli(inspector, home, db, '--method', 'tools/call', '--tool-name', tool,
                  *[a for k, v in args.items() for a in ('--tool-arg', f'{k}={v}')])
    return text_and_error(out)


def test_inspector_lists_the_five_tools(inspector, tmp_path):
    out = run_cli(inspector, tmp_path, tmp_path / 'ccr.db', '--method', 'tools/list')
    assert [t['name'] for t in out['tools']] == FIVE
    for t in out['tools']:
        assert t['description'] and t['inputSchema']['type'] == 'object' and t['title']
        assert t['annotations']['readOnlyHint'] is (t['name'] != 'caveman_compress') and t['annotations']['openWorldHint'] is False


def test_inspector_calls_every_tool(inspector, tmp_path):
    db = tmp_path / 'store' / 'ccr.db'
    page = corpus_path('json_github_list_issues.json').read_text()
    text, is_error = call(inspector, tmp_path, db, 'caveman_compress', input=json.dumps(page))   # a JSON string literal: stays a string
    p = json.loads(text)
    assert not is_error and p['content_type'] == 'json' and p['recovery_handle'].startswith('ccr_') and 0 < p['ratio'] < 1
    assert db.is_file()                                                  # the server created the store directory
    text, is_error = call(inspector, tmp_path, db, 'caveman_retrieve', recovery_handle=f'<<ccr:{p["recovery_handle"]}>>')
    assert (text, is_error) == (page, False)
    text, is_error = call(inspector, tmp_path, db, 'caveman_retrieve', recovery_handle=p['recovery_handle'], query='1005 1010')   # two issue ids
    assert text.count('"number": ') == 2
    assert not is_error and '… [caveman: non-adjacent] …' in text and len(text) < len(page)
    text, is_error = call(inspector, tmp_path, db, 'caveman_stats')
    st = json.loads(text)
    assert not is_error and (st['requests'], st['ratio'], st['basis'], st['scope']) == (0, 0, 'inferred', 'session')   # a new process: a new session
    rows = json.dumps([{'id': i, 'sku': f'SKU-{i}'} for i in range(4)])
    text, is_error = call(inspector, tmp_path, db, 'caveman_toon_encode', input=json.dumps(rows))
    enc = json.loads(text)
    assert not is_error and enc['encoded'] is True
    text, is_error = call(inspector, tmp_path, db, 'caveman_toon_decode', input=json.dumps(enc['output']))
    assert not is_error and json.loads(text) == json.loads(rows)


def test_inspector_sees_tool_errors(inspector, tmp_path):
    out = run_cli(inspector, tmp_path, tmp_path / 'ccr.db', '--method', 'tools/call', '--tool-name', 'caveman_retrieve',
                  '--tool-arg', 'recovery_handle=ccr_' + '0' * 32, expect_rc=5)          # the CLI's exit status for isError
    assert out['isError'] is True and json.loads(out['content'][0]['text'])['error'] == 'cave_unknown_handle'


# --- over Streamable HTTP ------------------------------------------------------------------------

def run_http(inspector, home: Path, url: str, *args: str, expect_rc=0) -> dict:
    "One Inspector CLI run against a running `caveman-mcp --http`; returns its JSON output."
    r = subprocess.run(inspector + [url] + list(args), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                       env=child_env(only=(), PATH=str(Path(shutil.which('node')).parent) + ':/usr/bin:/bin', HOME=str(home)))
    assert r.returncode == expect_rc, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    return json.loads(r.stdout)


def test_inspector_over_http(inspector, tmp_path):
    page = corpus_path('json_github_list_issues.json').read_text()
    with HttpServer(tmp_path) as srv:
        out = run_http(inspector, tmp_path, srv.url, '--method', 'tools/list')
        assert [t['name'] for t in out['tools']] == FIVE
        assert {t['name']: t['annotations']['readOnlyHint'] for t in out['tools']} == {n: n != 'caveman_compress' for n in FIVE}
        text, is_error = text_and_error(run_http(inspector, tmp_path, srv.url, '--method', 'tools/call', '--tool-name', 'caveman_compress',
                                                 '--tool-arg', f'input={json.dumps(page)}'))
        p = json.loads(text)
        assert not is_error and p['content_type'] == 'json' and 0 < p['ratio'] < 1
        text, is_error = text_and_error(run_http(inspector, tmp_path, srv.url, '--method', 'tools/call', '--tool-name', 'caveman_retrieve',
                                                 '--tool-arg', f'recovery_handle={p["recovery_handle"]}'))
        assert (text, is_error) == (page, False)
        out = run_http(inspector, tmp_path, srv.url, '--method', 'resources/read', '--uri', f'caveman://ccr/{p["recovery_handle"]}')
        assert out['contents'][0]['text'] == page
        out = run_http(inspector, tmp_path, srv.url, '--method', 'tools/call', '--tool-name', 'caveman_retrieve',
                       '--tool-arg', 'recovery_handle=ccr_' + '0' * 32, expect_rc=5)
        assert out['isError'] is True and json.loads(out['content'][0]['text'])['error'] == 'cave_unknown_handle'
        assert srv.stop() == 0, srv.log()
