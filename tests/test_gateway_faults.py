"""caveman-mcp as a gateway in front of upstreams that misbehave, driven by the official SDK client.

The misbehaving upstream is a tiny raw JSON-RPC stdio server written by this test (`RAW`): it answers a call with
a JSON-RPC error -32000, a content block of an unknown type, a `structuredContent` that fails its `outputSchema`, a
line holding a non-UTF-8 byte, never answers, or adds a tool and announces `tools/list_changed`. Healthy peers are
real servers (`mcp-server-time` from PyPI, `caveman-mcp --http` as a Streamable HTTP upstream). Each test failed
before its fix (break-test 4, findings 1–5, 7, 9).
"""
import asyncio, json, socket, subprocess, sys, time

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from _mcp_client import result_text, session
from conftest import server_command, child_env
from _upstreams import install_upstreams

pytestmark = pytest.mark.slow
HANG_LIMIT = 90     # seconds after which a call that should have been answered counts as hung (not a speed target)

RAW = r'''
import json, os, sys
mode = sys.argv[1] if len(sys.argv) > 1 else 'ok'
out = sys.stdout.buffer
def send(obj): out.write(json.dumps(obj).encode() + b'\n'); out.flush()
with open(os.environ['RAW_STARTS'], 'a') as f: f.write(f'{os.getpid()}\n')
TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("hang", "rpcerr", "weirdblock", "latin1", "echo", "addtool")]
TOOLS.append({"name": "badstruct", "inputSchema": {"type": "object"},
              "outputSchema": {"type": "object", "properties": {"log": {"type": "string"}}, "required": ["log"]}})
for line in sys.stdin.buffer:
    m = json.loads(line); mid, meth, p = m.get('id'), m.get('method'), m.get('params') or {}
    if meth == 'initialize':
        caps = {"resources": {}, "prompts": {}} if mode == 'resonly' else {"tools": {"listChanged": True}}
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": p["protocolVersion"], "capabilities": caps,
              "serverInfo": {"name": "raw", "version": "1"}, "instructions": "raw: call echo first"}})
    elif meth == 'tools/list' and mode == 'resonly': send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})
    elif meth == 'tools/list': send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
    elif meth == 'resources/list': send({"jsonrpc": "2.0", "id": mid, "result": {"resources": [{"uri": "raw://notes", "name": "notes"}]}})
    elif meth == 'resources/templates/list': send({"jsonrpc": "2.0", "id": mid, "result": {"resourceTemplates": []}})
    elif meth == 'resources/read': send({"jsonrpc": "2.0", "id": mid, "result": {"contents": [{"uri": p["uri"], "text": "the notes"}]}})
    elif meth == 'prompts/list': send({"jsonrpc": "2.0", "id": mid, "result": {"prompts": [{"name": "greet"}]}})
    elif meth == 'tools/call':
        name = p['name']
        ok = lambda text: send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
        if name == 'hang': pass
        elif name == 'rpcerr': send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32000, "message": "upstream said no", "data": {"why": "because"}}})
        elif name == 'weirdblock': send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "weird", "x": 1}]}})
        elif name == 'badstruct': send({"jsonrpc": "2.0", "id": mid, "result": {"content": [], "structuredContent": {"log": 5}}})
        elif name == 'latin1': out.write(b'{"jsonrpc":"2.0","id":' + json.dumps(mid).encode() + b',"result":{"content":[{"type":"text","text":"caf\xe9"}]}}\n'); out.flush()
        elif name == 'addtool':
            TOOLS.append({"name": "newtool", "inputSchema": {"type": "object"}})
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}); ok('added')
        else: ok(f'called {name}')
    elif mid is not None and meth is not None and meth != 'ping': send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "nope"}})
    elif meth == 'ping': send({"jsonrpc": "2.0", "id": mid, "result": {}})
'''


@pytest.fixture
def raw(tmp_path):
    "The raw upstream's command line, and the file each of its starts appends its pid to."
    script = tmp_path / 'raw_upstream.py'; script.write_text(RAW)
    starts = tmp_path / 'starts.txt'
    env = child_env(RAW_STARTS=starts, CAVEMAN_HOME=tmp_path / 'home', CAVEMAN_MCP_EPHEMERAL=1, CAVEMAN_MCP_EOF_WAIT=1)
    return {'cmd': [sys.executable, str(script)], 'starts': starts, 'env': env, 'tmp': tmp_path}


def client(args: list[str], env: dict, errlog, on_message=None):
    "The gateway (`caveman-mcp` with `args`) under the official SDK client."
    return session(server_command() + args, env, errlog, on_message)


text = result_text


def error_code(result) -> str | None:
    try: return json.loads(text(result))['error'] if result.is_error else None
    except (ValueError, KeyError): return None


def config(raw, servers: dict) -> list[str]:
    cfg = raw['tmp'] / 'servers.json'; cfg.write_text(json.dumps({'mcpServers': servers}))
    return ['--config', str(cfg)]


async def tools_of(s, prefix: str, limit: float = HANG_LIMIT) -> list[str]:
    "`tools/list` names once some start with `prefix` (an upstream slow to start joins later)."
    t0 = time.monotonic()
    while True:
        names = [t.name for t in (await s.list_tools()).tools]
        if any(n.startswith(prefix) for n in names) or time.monotonic() - t0 > limit: return names
        await asyncio.sleep(0.5)


def test_an_upstream_error_answer_reaches_the_host_and_keeps_the_upstream_alive(raw):
    "-32000 (the generic server error) is the upstream's answer, not a lost connection; results the SDK cannot read are"
    " a clear tool error; none of them restarts the upstream or fails the call hung beside them."
    async def go():
        async with client(['--', *raw['cmd']], raw['env'], open(raw['tmp'] / 'err.log', 'w+')) as s:
            await tools_of(s, 'echo')
            hung = asyncio.ensure_future(s.call_tool('hang', {}))
            await asyncio.sleep(0.5)
            with pytest.raises(MCPError) as err: await s.call_tool('rpcerr', {})
            weird, bad = await s.call_tool('weirdblock', {}), await s.call_tool('badstruct', {})
            echo = await s.call_tool('echo', {})
            await asyncio.sleep(0.5)
            alive = not hung.done()
            hung.cancel()
            return err.value, weird, bad, echo, alive
    err, weird, bad, echo, alive = asyncio.run(go())
    assert (err.error.code, err.error.message, err.error.data) == (-32000, 'upstream said no', {'why': 'because'})
    assert error_code(weird) == error_code(bad) == 'cave_upstream_bad_result', (text(weird), text(bad))
    assert 'upstream' in text(weird) and 'badstruct' in text(bad)
    assert text(echo) == 'called echo'
    assert alive, 'the call in flight beside them failed'
    assert len(raw['starts'].read_text().split()) == 1, 'the upstream was restarted'


def test_hung_calls_on_one_upstream_block_neither_another_upstream_nor_the_gateways_own_tools(raw, upstreams):
    "CAVEMAN_MCP_WORKERS=2: five hung calls on a; b (a real server) and caveman_stats answer, a's overflow answers cave_upstream_busy."
    env = {**raw['env'], 'CAVEMAN_MCP_WORKERS': '2'}
    args = config(raw, {'a': {'command': raw['cmd'][0], 'args': raw['cmd'][1:]},
                        'b': {'command': upstreams['time'][0], 'args': ['--local-timezone', 'UTC']}})
    async def go():
        async with client(args, env, open(raw['tmp'] / 'err.log', 'w+')) as s:
            names = await tools_of(s, 'b__')
            assert 'a__hang' in names and 'b__get_current_time' in names, names
            hung = [asyncio.ensure_future(s.call_tool('a__hang', {})) for _ in range(4)]
            await asyncio.sleep(1)
            overflow = await asyncio.wait_for(s.call_tool('a__hang', {}), HANG_LIMIT)
            other = await asyncio.wait_for(s.call_tool('b__get_current_time', {'timezone': 'UTC'}), HANG_LIMIT)
            stats = await asyncio.wait_for(s.call_tool('caveman_stats', {}), HANG_LIMIT)
            for h in hung: h.cancel()
            return overflow, other, stats
    overflow, other, stats = asyncio.run(go())
    assert error_code(overflow) == 'cave_upstream_busy', text(overflow)
    assert not other.is_error and '"timezone": "UTC"' in text(other)
    assert not stats.is_error


def test_a_non_utf8_byte_in_a_result_does_not_silence_the_upstream(raw):
    async def go():
        async with client(['--', *raw['cmd']], raw['env'], open(raw['tmp'] / 'err.log', 'w+')) as s:
            await tools_of(s, 'latin1')
            bad = await asyncio.wait_for(s.call_tool('latin1', {}), HANG_LIMIT)
            later = await asyncio.wait_for(s.call_tool('echo', {}), HANG_LIMIT)
            return bad, later
    bad, later = asyncio.run(go())
    assert text(bad) == 'caf\ufffd'                 # the stray byte is replaced, the rest is as sent
    assert text(later) == 'called echo'


def test_an_upstreams_tools_list_changed_reaches_the_host_and_its_new_tool_answers(raw):
    seen = []
    async def on_message(m):
        if getattr(getattr(m, 'root', m), 'method', None) == 'notifications/tools/list_changed': seen.append(1)
    async def go():
        async with client(['--', *raw['cmd']], raw['env'], open(raw['tmp'] / 'err.log', 'w+'), on_message) as s:
            await tools_of(s, 'addtool')
            seen.clear()
            await s.call_tool('addtool', {})
            t0 = time.monotonic()
            while not seen and time.monotonic() - t0 < HANG_LIMIT: await asyncio.sleep(0.2)
            return [t.name for t in (await s.list_tools()).tools], await s.call_tool('newtool', {})
    names, new = asyncio.run(go())
    assert seen, 'no notifications/tools/list_changed'
    assert 'newtool' in names and text(new) == 'called newtool'


def test_an_upstream_without_tools_serves_its_resources_and_prompts(raw):
    async def go():
        async with client(config(raw, {'docs': {'command': raw['cmd'][0], 'args': [*raw['cmd'][1:], 'resonly']},
                                       'other': {'command': raw['cmd'][0], 'args': raw['cmd'][1:]}}),
                          raw['env'], open(raw['tmp'] / 'err.log', 'w+')) as s:
            await tools_of(s, 'other__')
            res = (await s.list_resources()).resources
            prompts = (await s.list_prompts()).prompts
            read = await s.read_resource(str(res[0].uri)) if res else None
            own = await s.read_resource('raw://notes') if res else None       # the upstream's own URI (a resource_link) reads too
            return res, prompts, read, own
    res, prompts, read, own = asyncio.run(go())
    assert [str(r.uri) for r in res] == ['caveman-gw://docs/raw://notes']    # several servers: namespaced like their tools
    assert [p.name for p in prompts] == ['docs__greet']
    assert read.contents[0].text == own.contents[0].text == 'the notes'


def test_a_secret_in_an_upstream_url_is_never_logged(raw):
    "A Streamable HTTP upstream (caveman-mcp --http) at a url holding ${API_KEY}: the key never reaches stderr."
    with socket.socket() as so: so.bind(('127.0.0.1', 0)); port = so.getsockname()[1]
    up = subprocess.Popen(server_command() + ['--http', f'127.0.0.1:{port}'], env=raw['env'], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        t0 = time.monotonic()
        while time.monotonic() - t0 < HANG_LIMIT:
            try: socket.create_connection(('127.0.0.1', port), 1).close(); break
            except OSError: time.sleep(0.2)
        env = {**raw['env'], 'API_KEY': 'sk-do-not-log-4242'}
        args = config(raw, {'remote': {'url': f'http://127.0.0.1:{port}/mcp?key=${{API_KEY}}'}})
        errlog = open(raw['tmp'] / 'err.log', 'w+')
        async def go():
            async with client(args, env, errlog) as s:
                await tools_of(s, 'caveman_toon_encode')
                return await s.call_tool('caveman_toon_encode', {'input': '[1,2]'})
        res = asyncio.run(go())
    finally: up.terminate(); up.wait(30)
    assert not res.is_error, text(res)
    errlog.seek(0); err = errlog.read()
    assert 'sk-do-not-log-4242' not in err, err[-2000:]


@pytest.fixture(scope='module')
def upstreams():
    return install_upstreams()


def test_one_server_broken_at_run_time_does_not_take_the_others_down(raw, upstreams):
    "An unset ${VAR} and a relative command that is not there from the gateway's cwd: the real server beside them"
    " still serves, their tools answer cave_upstream_unavailable naming why."
    env = {k: v for k, v in raw['env'].items() if k != 'NOT_SET_4242'}
    args = config(raw, {'time': {'command': upstreams['time'][0], 'args': ['--local-timezone', 'UTC']},
                        'needs-token': {'command': raw['cmd'][0], 'args': raw['cmd'][1:], 'env': {'TOKEN': '${NOT_SET_4242}'}},
                        'relative': {'command': './bin/some-server'}})
    async def go():
        async with client(args, env, open(raw['tmp'] / 'err.log', 'w+')) as s:
            await tools_of(s, 'time__')
            return (await s.call_tool('time__get_current_time', {'timezone': 'UTC'}), await s.call_tool('needs-token__echo', {}),
                    await s.call_tool('relative__x', {}))
    ok, token, rel = asyncio.run(go())
    assert not ok.is_error and '"timezone": "UTC"' in text(ok)
    assert error_code(token) == 'cave_upstream_unavailable' and 'NOT_SET_4242' in text(token), text(token)
    assert error_code(rel) == 'cave_upstream_unavailable' and 'command not found' in text(rel), text(rel)


def test_the_short_form_instructions_do_not_promise_namespaced_tools(raw):
    "caveman-mcp -- COMMAND lists the upstream's tools under their own names: its instructions say so, not <server>__<tool>."
    async def go():
        params = StdioServerParameters(command=server_command()[0], args=server_command()[1:] + ['--', *raw['cmd']], env=raw['env'])
        async with stdio_client(params, errlog=open(raw['tmp'] / 'err.log', 'w+')) as (r, w):
            async with ClientSession(r, w) as s:
                init = await s.initialize()
                return init.instructions, [t.name for t in (await s.list_tools()).tools]
    instructions, names = asyncio.run(go())
    assert 'echo' in names and not any('__' in n for n in names)
    assert '<server>__<tool>' not in instructions and 'under their own names' in instructions, instructions
