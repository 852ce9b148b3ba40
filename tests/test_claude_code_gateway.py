"""caveman-mcp as a gateway inside the real Claude Code binary (`@anthropic-ai/claude-code`, npm), offline.

Claude Code runs `caveman-mcp --config servers.json` as its `caveman` MCP server, in front of the real
`@modelcontextprotocol/server-filesystem` (npm) and `mcp-server-time` (PyPI), installed by tests/_upstreams.py.
A fake Messages API (`_fake_anthropic.py`) plays the model: it reads a large file through the namespaced
upstream tool and then calls `caveman_retrieve` with the handle it saw; we read exactly what the model was
sent. The model's script adapts to the host the way a model must: if the gateway's tools are not listed
yet it calls `WaitForMcpServers`, and if the host defers MCP tools behind `ToolSearch` it first selects the
tool (`select:<name>`) until the host loads it. The first test runs on two Claude Code versions: 2.1.197 (the
hooks' pin: MCP tools listed once connected) and 2.1.328 (the protocol test's pin: MCP tools deferred behind
ToolSearch, results followed by `<system-reminder>` parts). The file is a real pytest log from the shared corpus, read in place (the filesystem
server is rooted at the corpus directory) and read again here with the test's own code.

The second test starts from a project whose `.mcp.json` runs the two servers directly: the real
`caveman install claude-code --scope project --gateway` moves them behind caveman, Claude Code reaches them
as `mcp__caveman__<server>__<tool>`, and `caveman uninstall` gives `.mcp.json` back, after which Claude Code
calls `mcp__filesystem__read_text_file` directly again and gets the file untouched.
"""
import json, re, subprocess, sys, time
from pathlib import Path

import pytest

from caveman.corpus import corpus_path
from _fake_anthropic import FakeAnthropic, tool_use, tool_results, result_text, text
from _claude_code import claude_binary, host_env, run_claude, ROOT
from _upstreams import install_upstreams

pytestmark = pytest.mark.slow

HANDLE = re.compile(r'recovery_handle=\\?"(ccr_[0-9a-f]{32})\\?"')
READ = 'mcp__caveman__filesystem__read_text_file'
RETRIEVE = 'mcp__caveman__caveman_retrieve'


@pytest.fixture(scope='module')
def claude() -> str:
    try: return claude_binary()
    except RuntimeError as e: pytest.fail(str(e))


# the hooks' pinned version, which lists MCP tools, and the protocol test's, which defers them behind ToolSearch
VERSIONS = {'2.1.197': None, '2.1.328': ROOT / '.work' / 'npm-claude'}


@pytest.fixture(scope='module', params=list(VERSIONS))
def any_claude(request) -> str:
    try: return claude_binary(request.param, VERSIONS[request.param]) if VERSIONS[request.param] else claude_binary()
    except RuntimeError as e: pytest.fail(str(e))


@pytest.fixture(scope='module')
def upstreams():
    return install_upstreams()


def exe(name: str) -> str:
    p = Path(sys.executable).with_name(name)
    if not p.exists(): pytest.fail(f'the {name} console script is not installed: run through `make test`')
    return str(p)


class Agent:
    "A scripted model: each turn, the next tool call of its plan, first making sure the host has loaded the tool."
    def __init__(self, plan):
        self.plan, self.searches, self.waits = plan, 0, 0    # plan: [(id, tool name, input or callable(seen) -> input)]

    def __call__(self, body: dict) -> list[dict]:
        tools = {t['name']: t for t in body.get('tools', [])}
        seen = {b['tool_use_id']: result_text(b) for b in tool_results(body)}
        referenced = {c.get('tool_name') for b in tool_results(body) if isinstance(b.get('content'), list)
                      for c in b['content'] if isinstance(c, dict) and c.get('type') == 'tool_reference'}
        def loaded(name):                   # listed, or loaded by a ToolSearch (Claude Code 2.1.3xx defers MCP tools behind it)
            if name in tools and (not tools[name].get('defer_loading') or name in referenced): return True
            return any(k.startswith('toolu_search_') and re.search(rf'"name":\s*"{re.escape(name)}"', v) for k, v in seen.items())
        for id_, name, args in self.plan:
            if id_ in seen: continue
            if not loaded(name):
                if 'ToolSearch' in tools and self.searches < 40:     # "some MCP servers are still connecting": search again
                    if self.searches: time.sleep(1)
                    self.searches += 1
                    return [tool_use('ToolSearch', {'query': f'select:{name}', 'max_results': 5}, id=f'toolu_search_{self.searches}')]
                if 'WaitForMcpServers' in tools and self.waits < 6:   # "still connecting": ask again
                    self.waits += 1
                    return [tool_use('WaitForMcpServers', {})]
                return [text(f'{name} is not among my tools')]
            args = args(seen) if callable(args) else args
            return [text(args)] if isinstance(args, str) else [tool_use(name, args, id=id_)]
        return [text('done')]

    def script(self) -> list: return [self] * 60


def tool_text(block: dict) -> str:
    "The text of a tool_result as the tool gave it: without the `<system-reminder>` parts 2.1.3xx appends, and the one newline it adds before them."
    c = block.get('content', '')
    if isinstance(c, str): return c
    parts = [p.get('text', '') for p in c if isinstance(p, dict) and p.get('type') == 'text']
    out = []
    for i, t in enumerate(parts):
        if t.lstrip().startswith('<system-reminder>'): continue
        follows = i + 1 < len(parts) and parts[i + 1].lstrip().startswith('<system-reminder>')
        out.append(t[:-1] if follows and t.endswith('\n') else t)
    return ''.join(out)


def retrieve_args(seen: dict):
    m = HANDLE.search(seen.get('toolu_read', ''))
    return {'recovery_handle': m.group(1)} if m else 'no handle in the view'


def write_gateway_project(tmp: Path, upstreams: dict, root: Path) -> tuple[Path, dict]:
    "A project whose `.mcp.json` runs the gateway in front of the filesystem (rooted at `root`) and time servers; returns (project, env)."
    project, home = tmp / 'project', tmp / 'home'
    project.mkdir(); home.mkdir()
    fs, tm = upstreams['filesystem'], upstreams['time']
    cfg = tmp / 'servers.json'
    cfg.write_text(json.dumps({'mcpServers': {'filesystem': {'command': fs[0], 'args': fs[1:] + [str(root)]},
                                              'time': {'command': tm[0], 'args': ['--local-timezone', 'UTC']}}}))
    (project / '.mcp.json').write_text(json.dumps({'mcpServers': {'caveman': {'type': 'stdio', 'command': exe('caveman-mcp'),
                                                                              'args': ['--config', str(cfg)], 'env': {}}}}))
    (project / '.claude').mkdir()
    (project / '.claude' / 'settings.json').write_text(json.dumps({'enabledMcpjsonServers': ['caveman']}))
    return project, host_env(home)


def test_claude_code_reads_a_large_file_through_the_gateway_and_retrieves_the_exact_original(any_claude, upstreams, tmp_path):
    path = corpus_path('log_pytest_requests_failures.log')
    original = path.read_bytes().decode()                           # the test's own read of the file
    assert len(original) > 50_000                                   # over Claude Code's preview cut for MCP results
    project, env = write_gateway_project(tmp_path, upstreams, path.parent)
    agent = Agent([('toolu_read', READ, {'path': str(path)}), ('toolu_retrieve', RETRIEVE, retrieve_args)])
    with FakeAnthropic(agent.script()) as api:
        r = run_claude(any_claude, project, {**env, **api.env()}, 'mcp__caveman', sources='project')
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    last = api.main_requests()[-1]
    offered = json.dumps(last)                      # listed in `tools`, or named in a deferred-tools reminder / ToolSearch result
    assert READ in offered and 'mcp__caveman__time__get_current_time' in offered and RETRIEVE in offered
    assert 'mcp__caveman__caveman_compress' not in offered                          # not offered in gateway mode
    seen = {b['tool_use_id']: tool_text(b) for b in tool_results(last)}
    view = seen['toolu_read']
    # Claude Code shows the model only structuredContent when a result has one: the gateway put the view there too
    # (as JSON, maybe followed by a <system-reminder> the host appends)
    shown = json.JSONDecoder().raw_decode(view)[0]['content'] if view.startswith('{"content":') else view
    assert '(caveman)' in shown or '… caveman:' in shown
    assert 'persisted-output' not in view and len(shown) < len(original) / 2
    handle = HANDLE.search(view).group(1)
    assert seen['toolu_retrieve'] == original                                      # the exact original, whole
    cli = subprocess.run([exe('caveman'), 'retrieve', handle], env=env, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert cli.stdout == path.read_bytes()                                         # the gateway's store is the user's store


def shown_text(result: str) -> str:
    "What a tool_result says: the `content` of a structuredContent JSON (as Claude Code shows it), else the text."
    if result.startswith('{"content":'): return json.JSONDecoder().raw_decode(result)[0]['content']
    return result


def test_install_gateway_moves_the_projects_servers_behind_caveman_and_uninstall_brings_them_back(claude, upstreams, tmp_path):
    project, home = tmp_path / 'project', tmp_path / 'home'
    project.mkdir(); home.mkdir()
    listing = subprocess.run([sys.executable, '-m', 'pip', 'list', '-v'], capture_output=True, timeout=300).stdout   # real, captured now
    assert 5_000 < len(listing) < 45_000                          # under Claude Code's preview cut when read directly
    path = project / 'pip-list.txt'; path.write_bytes(listing)
    original = listing.decode()
    env = host_env(home)
    fs, tm = upstreams['filesystem'], upstreams['time']
    # the project is the root Claude Code gives the filesystem server (MCP roots) when it runs it directly
    mcp_json = {'mcpServers': {'filesystem': {'type': 'stdio', 'command': fs[0], 'args': fs[1:] + [str(project)], 'env': {}},
                               'time': {'type': 'stdio', 'command': tm[0], 'args': ['--local-timezone', 'UTC'], 'env': {}}}}
    (project / '.mcp.json').write_text(json.dumps(mcp_json, indent=2))
    (project / '.claude').mkdir()
    (project / '.claude' / 'settings.json').write_text(json.dumps({'enabledMcpjsonServers': ['filesystem', 'time']}))
    before = (project / '.mcp.json').read_text()
    caveman = lambda *a: subprocess.run([exe('caveman'), *a], cwd=project, env=env, capture_output=True, text=True, timeout=120,
                                        stdin=subprocess.DEVNULL)

    r = caveman('install', 'claude-code', '--scope', 'project', '--gateway')
    assert r.returncode == 0 and 'moved behind the gateway: filesystem' in r.stdout, r.stderr
    agent = Agent([('toolu_read', READ, {'path': str(path)}), ('toolu_retrieve', RETRIEVE, retrieve_args)])
    with FakeAnthropic(agent.script()) as api:
        r = run_claude(claude, project, {**env, **api.env()}, 'mcp__caveman', sources='project')
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    last = api.main_requests()[-1]
    assert not any(t['name'].startswith(('mcp__filesystem__', 'mcp__time__')) for t in last['tools'])
    seen = {b['tool_use_id']: tool_text(b) for b in tool_results(last)}
    view = shown_text(seen['toolu_read'])
    assert len(view) < len(original) and HANDLE.search(seen['toolu_read'])
    assert seen['toolu_retrieve'] == original

    r = caveman('uninstall', 'claude-code', '--scope', 'project')
    assert r.returncode == 0 and 'moved back from the gateway: filesystem' in r.stdout, r.stderr
    assert json.loads((project / '.mcp.json').read_text()) == json.loads(before)
    assert list(json.loads((project / '.mcp.json').read_text())['mcpServers']) == ['filesystem', 'time']
    direct = 'mcp__filesystem__read_text_file'
    agent = Agent([('toolu_direct', direct, {'path': str(path)})])
    with FakeAnthropic(agent.script()) as api:
        r = run_claude(claude, project, {**env, **api.env()}, 'mcp__filesystem', sources='project')
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    last = api.main_requests()[-1]
    assert not any(t['name'].startswith('mcp__caveman__') for t in last['tools'])
    seen = {b['tool_use_id']: tool_text(b) for b in tool_results(last)}
    assert shown_text(seen['toolu_direct']) == original                   # the server, directly again, untouched
