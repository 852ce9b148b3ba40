"""caveman-mcp as a gateway, driven by the official SDK client, against upstreams that found the gaps of break test 5.

The upstream is a raw JSON-RPC stdio server written by this test (`RAW5`): it lists one resource and one resource
template under fixed URIs (so two of it collide), returns a result as many small text blocks, exits on `die`, is slow
to answer `initialize` on every start after the first, floods `notifications/tools/list_changed` with and without a
change, and writes a non-UTF-8 byte. Beside it: a real SDK server (`mcp.server.mcpserver`, a tool returning
`list[dict]`) and a tiny HTTP server answering 401 / 500. Each test failed before its fix (break test 5, r16, r18,
r19, r21–r24 and the cosmetic findings).
"""
import asyncio, http.server, json, sys, threading, time

import pytest

from _mcp_client import result_text, session, tools_of as _tools_of
from conftest import server_command, child_env

pytestmark = pytest.mark.slow
LIMIT = 90     # seconds after which something that should have happened counts as never (not a speed target)

RAW5 = r'''
import json, os, sys, time
out = sys.stdout.buffer
def send(obj): out.write(json.dumps(obj).encode() + b'\n'); out.flush()
starts = os.environ['RAW_STARTS']
with open(starts, 'a') as f: f.write(f'{os.getpid()}\n')
first = len(open(starts).read().split()) == 1
TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("blocks", "echo", "die", "latin1", "storm", "addtool")]
for line in sys.stdin.buffer:
    m = json.loads(line); mid, meth, p = m.get('id'), m.get('method'), m.get('params') or {}
    if meth == 'initialize':
        if not first: time.sleep(float(os.environ.get('RAW_SLOW_RESTART', '0')))
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": p["protocolVersion"], "serverInfo": {"name": "raw5", "version": "1"},
              "capabilities": {"tools": {"listChanged": True}, "resources": {}}}})
    elif meth == 'tools/list': send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
    elif meth == 'resources/list':
        send({"jsonrpc": "2.0", "id": mid, "result": {"resources": [{"uri": "raw5://notes", "name": "notes"}]}})
    elif meth == 'resources/templates/list':
        send({"jsonrpc": "2.0", "id": mid, "result": {"resourceTemplates": [{"uriTemplate": "raw5://note/{id}", "name": "note"}]}})
    elif meth == 'resources/read':
        send({"jsonrpc": "2.0", "id": mid, "result": {"contents": [{"uri": p["uri"], "text": os.environ['RAW_WHO'] + ' ' + p["uri"]}]}})
    elif meth == 'tools/call':
        name, a = p['name'], p.get('arguments') or {}
        ok = lambda text: send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
        if name == 'die': os._exit(1)
        elif name == 'blocks':
            n = a.get('n', 2000)
            content = [{"type": "text", "text": f"block {i}: " + "status ok " * 5 + (f"FAILED: assertion in test_{i}" if i == n - 7 else "")} for i in range(n)]
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}] + content}})
        elif name == 'latin1': out.write(b'{"jsonrpc":"2.0","id":' + json.dumps(mid).encode() + b',"result":{"content":[{"type":"text","text":"caf\xe9"}]}}\n'); out.flush()
        elif name in ('storm', 'addtool'):
            if name == 'addtool': TOOLS.append({"name": "newtool", "inputSchema": {"type": "object"}})
            for _ in range(a.get('n', 500)): send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            ok(name)
        else: ok(f'called {name}')
    elif meth == 'ping': send({"jsonrpc": "2.0", "id": mid, "result": {}})
'''

SDK_SERVER = r'''
from mcp.server.mcpserver import MCPServer
app = MCPServer("inventory")
@app.tool()
def list_items(n: int = 300) -> list[dict]:
    "Returns n inventory items."
    return [{"id": i, "sku": f"SKU-{i:05d}", "qty": i % 17, "status": "ok" if i % 50 else "backorder"} for i in range(n)]
app.run()
'''


@pytest.fixture
def raw(tmp_path):
    script = tmp_path / 'raw5.py'; script.write_text(RAW5)
    starts = tmp_path / 'starts.txt'
    env = child_env(RAW_STARTS=starts, RAW_WHO='solo', CAVEMAN_HOME=tmp_path / 'home', CAVEMAN_MCP_EOF_WAIT=1)
    return {'cmd': [sys.executable, str(script)], 'starts': starts, 'env': env, 'tmp': tmp_path}


def client(args: list[str], env: dict, errlog, on_message=None):
    "The gateway (`caveman-mcp` with `args`) under the official SDK client."
    return session(server_command() + args, env, errlog, on_message)


text = result_text


def error_of(result) -> dict:
    return json.loads(text(result)) if result.is_error else {}


def config(raw, servers: dict) -> list[str]:
    cfg = raw['tmp'] / 'servers.json'; cfg.write_text(json.dumps({'mcpServers': servers}))
    return ['--config', str(cfg)]


async def tools_of(s, name: str) -> list[str]: return await _tools_of(s, name, LIMIT)


def list_changed_counter():
    seen = []
    async def on_message(m):
        if getattr(getattr(m, 'root', m), 'method', None) == 'notifications/tools/list_changed': seen.append(time.monotonic())
    return seen, on_message


def test_the_same_resource_uri_from_two_upstreams_is_listed_once_each_and_read_from_its_own_server(raw):
    "r18: a and b both list raw5://notes and the template raw5://note/{id}; each is served under its server's name and reads from it."
    servers = {w: {'command': raw['cmd'][0], 'args': raw['cmd'][1:], 'env': {'RAW_WHO': w}} for w in ('a', 'b')}
    async def go():
        async with client(config(raw, servers), raw['env'], open(raw['tmp'] / 'err.log', 'w+')) as s:
            await tools_of(s, 'b__echo')
            res = [str(r.uri) for r in (await s.list_resources()).resources]
            tpl = [t.uri_template for t in (await s.list_resource_templates()).resource_templates]
            reads = {u: (await s.read_resource(u)).contents[0] for u in res}
            filled = {t: (await s.read_resource(t.replace('{id}', '7'))).contents[0] for t in tpl}
            plain = (await s.read_resource('raw5://notes')).contents[0]      # an upstream's own URI (a resource_link): first in config order
            return res, tpl, reads, filled, plain
    res, tpl, reads, filled, plain = asyncio.run(go())
    assert len(res) == len(set(res)) == 2 and len(tpl) == len(set(tpl)) == 2, (res, tpl)
    assert sorted(c.text for c in reads.values()) == ['a raw5://notes', 'b raw5://notes']
    assert all(str(c.uri) == u for u, c in reads.items())                 # the contents name the URI that was read
    assert sorted(c.text for c in filled.values()) == ['a raw5://note/7', 'b raw5://note/7']
    assert plain.text == 'a raw5://notes'


def blocks_of_raw(n: int) -> list[str]:
    "The texts RAW5's `blocks` tool sends, written here again (the test's own copy)."
    return [f"block {i}: " + "status ok " * 5 + (f"FAILED: assertion in test_{i}" if i == n - 7 else "") for i in range(n)]


def test_many_small_text_blocks_are_one_payload(raw):
    "r19: 2000 blocks each far under minBytes, 120 KB in all: one view in place of the text blocks, the image kept; the handle returns them joined."
    async def go():
        async with client(['--', *raw['cmd']], raw['env'], open(raw['tmp'] / 'err.log', 'w+')) as s:
            await tools_of(s, 'blocks')
            r = await s.call_tool('blocks', {'n': 2000})
            view = text(r)
            handle = view.rsplit('original stored as ', 1)[1].split(';')[0] if 'original stored as ' in view else None
            back = await s.call_tool('caveman_retrieve', {'recovery_handle': handle}) if handle else None
            return r, view, back
    r, view, back = asyncio.run(go())
    original = '\n'.join(blocks_of_raw(2000))
    assert [b.type for b in r.content] == ['image', 'text'], [b.type for b in r.content][:5]
    assert r.content[0].data == 'iVBORw0KGgo='
    assert len(view) < len(original) / 4, len(view)
    assert back is not None and text(back) == original


def test_a_real_sdk_servers_list_result_is_compressed(raw):
    "r21: an SDK (mcp.server.mcpserver) tool returning list[dict] sends one small block per item: the blocks become one view."
    script = raw['tmp'] / 'inventory.py'; script.write_text(SDK_SERVER)
    async def go():
        async with client(['--', sys.executable, str(script)], raw['env'], open(raw['tmp'] / 'err.log', 'w+')) as s:
            await tools_of(s, 'list_items')
            return await s.call_tool('list_items', {'n': 300})
    r = asyncio.run(go())
    blocks = [b for b in r.content if b.type == 'text']
    items = [{"id": i, "sku": f"SKU-{i:05d}", "qty": i % 17, "status": "ok" if i % 50 else "backorder"} for i in range(300)]
    assert len(blocks) == 1 and not r.is_error, len(blocks)
    assert len(blocks[0].text) < len(''.join(json.dumps(x) for x in items)) / 2, len(blocks[0].text)
    assert 'backorder' in blocks[0].text                   # the rare value is still in the view
    if r.structured_content is not None:                   # the SDK's typed copy: kept valid (the outputSchema rule)
        assert r.structured_content == {'result': items}


def test_cancelling_the_call_that_restarts_an_upstream_lets_the_next_call_wait_for_the_restart(raw):
    "r16: the upstream dies; the next call restarts it (initialize takes 3 s) and is cancelled after 1 s; a call sent"
    " during the restart waits for it and is answered — twice over. The pause after the death lets the dead session"
    " close first: its late clean-up marking the upstream down again is what hid the race in half the runs."
    env = {**raw['env'], 'RAW_SLOW_RESTART': '3'}
    async def go():
        out = []
        async with client(['--', *raw['cmd']], env, open(raw['tmp'] / 'err.log', 'w+')) as s:
            await tools_of(s, 'echo')
            for _ in range(2):
                died = await s.call_tool('die', {})
                await asyncio.sleep(3)                               # the dead session is closed before the restart begins
                restarting = asyncio.ensure_future(s.call_tool('echo', {}))
                await asyncio.sleep(1)
                restarting.cancel()                                  # the SDK sends notifications/cancelled
                with pytest.raises(asyncio.CancelledError): await restarting
                out.append((died, await asyncio.wait_for(s.call_tool('echo', {}), LIMIT)))
        return out
    for died, after in asyncio.run(go()):
        assert error_of(died)['error'] == 'cave_upstream_unavailable'
        assert not after.is_error and text(after) == 'called echo', text(after)


def test_list_changed_is_sent_once_per_real_catalog_change(raw):
    "r22/r24: 500 list_changed without a change and two restarts send nothing; 500 with one new tool send one."
    seen, on_message = list_changed_counter()
    async def settle():                                        # no list_changed for 2 s (the gateway coalesces within 0.5 s)
        t0 = time.monotonic()
        while time.monotonic() - t0 < LIMIT and (not seen or time.monotonic() - seen[-1] < 2) and time.monotonic() - t0 < 3: await asyncio.sleep(0.2)
    async def go():
        async with client(['--', *raw['cmd']], raw['env'], open(raw['tmp'] / 'err.log', 'w+'), on_message) as s:
            await tools_of(s, 'storm')
            await s.call_tool('storm', {'n': 500}); await settle()
            quiet = len(seen)
            for _ in range(2):
                await s.call_tool('die', {})
                assert text(await s.call_tool('echo', {})) == 'called echo'      # restarted, same tools
            await settle()
            restarts = len(seen) - quiet
            await s.call_tool('addtool', {'n': 500}); await settle()
            t0 = time.monotonic()
            while len(seen) == quiet + restarts and time.monotonic() - t0 < LIMIT: await asyncio.sleep(0.2)
            await asyncio.sleep(2)
            return quiet, restarts, len(seen) - quiet - restarts, await tools_of(s, 'newtool')
    quiet, restarts, change, names = asyncio.run(go())
    assert (quiet, restarts, change) == (0, 0, 1), (quiet, restarts, change)
    assert 'newtool' in names
    assert len(raw['starts'].read_text().split()) == 3


class _Refusing(http.server.BaseHTTPRequestHandler):
    "401 with a WWW-Authenticate challenge under /a401, a 500 HTML page elsewhere."
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get('Content-Length') or 0))
        if self.path.startswith('/a401'):
            self.send_response(401); self.send_header('WWW-Authenticate', 'Bearer realm="mcp"'); self.send_header('Content-Length', '0'); self.end_headers()
        else:
            body = b'<html>Internal Server Error</html>'
            self.send_response(500); self.send_header('Content-Type', 'text/html'); self.send_header('Content-Length', str(len(body))); self.end_headers()
            self.wfile.write(body)
    do_GET = do_DELETE = do_POST


def test_an_http_upstreams_error_status_is_named_without_its_secrets(raw):
    "r23: a 401 names the status and says authentication failed (check headers); a 500 names its status; the token is never logged."
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    env = {**raw['env'], 'API_KEY': 'sk-never-shown-9191'}
    args = config(raw, {'locked': {'url': f'http://127.0.0.1:{port}/a401/mcp', 'headers': {'Authorization': 'Bearer ${API_KEY}'}},
                        'broken': {'url': f'http://127.0.0.1:{port}/e500/mcp'}})
    errlog = open(raw['tmp'] / 'err.log', 'w+')
    async def go():
        async with client(args, env, errlog) as s:
            return await s.call_tool('locked__anything', {}), await s.call_tool('broken__anything', {})
    try: locked, broken = asyncio.run(go())
    finally: server.shutdown()
    assert error_of(locked)['error'] == 'cave_upstream_unavailable'
    assert 'HTTP 401' in text(locked) and 'authentication failed' in text(locked) and 'headers' in text(locked), text(locked)
    assert 'HTTP 500' in text(broken), text(broken)
    errlog.seek(0); err = errlog.read()
    assert 'HTTP 401' in err and 'sk-never-shown-9191' not in err + text(locked), err[-2000:]


def test_the_short_form_names_its_upstream_once_and_a_non_utf8_byte_is_logged(raw):
    "Cosmetic: `caveman-mcp -- cmd` never says 'upstream upstream'; a non-UTF-8 byte is read as U+FFFD and said once on stderr."
    errlog = open(raw['tmp'] / 'err.log', 'w+')
    async def go():
        async with client(['--', *raw['cmd']], raw['env'], errlog) as s:
            await tools_of(s, 'die')
            return await s.call_tool('latin1', {}), await s.call_tool('die', {})
    latin, died = asyncio.run(go())
    assert text(latin) == 'caf\ufffd'
    assert 'upstream upstream' not in text(died) and 'the upstream server' in text(died), text(died)
    assert json.loads(text(died)) == {'error': 'cave_upstream_unavailable', 'message': error_of(died)['message']}
    errlog.seek(0); err = errlog.read()
    assert err.count('not UTF-8') == 1 and 'upstream' in err, err[-2000:]
