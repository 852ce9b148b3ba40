"""`caveman-mcp --http` (Streamable HTTP), as a real uvicorn server in a subprocess (issue 16).

Real peers: the official MCP Python SDK client (`mcp.Client` over its Streamable HTTP transport) in
both eras — the handshake (`mode="legacy"`, sessions) and the stateless 2026-07-28 protocol (`"auto"`,
which probes `server/discover`, and the pinned `"2026-07-28"`) — and raw HTTP through the standard
library for everything a client library would never send: the fuzz pass (malformed bodies, wrong
content types, missing and invalid session ids, oversize bodies, a foreign Origin or Host), after
which the same server must still answer. Also: the ledger rule per HTTP session and per stateless
client identity, the bearer token (required for a non-loopback bind), and graceful SIGTERM/SIGINT.
"""
import asyncio, http.client, json, os, random, signal, subprocess, threading, time
from contextlib import contextmanager
from pathlib import Path

import pytest
from mcp import Client, Implementation
from mcp.client.streamable_http import streamable_http_client

import caveman
from caveman.corpus import corpus_path
from conftest import server_command, child_env
from _http_server import HttpServer, discover_ok, modern, post

FIVE = ['caveman_compress', 'caveman_retrieve', 'caveman_stats', 'caveman_toon_encode', 'caveman_toon_decode']
POINTER = 'caveman: this exact handle and query were already answered'
def text_of(result) -> str:
    assert result.content[0].type == 'text'
    return result.content[0].text


# --- the SDK client, both eras -------------------------------------------------------------------

ERA = {'auto': '2026-07-28', '2026-07-28': '2026-07-28', 'legacy': '2025-11-25'}

@pytest.mark.parametrize('mode', ['auto', '2026-07-28', 'legacy'])
def test_sdk_client_over_http_calls_every_tool(mode, tmp_path):
    original = corpus_path('json_github_list_issues.json').read_text(encoding='utf-8')
    with HttpServer(tmp_path) as srv:
        async def run():
            async with Client(srv.url, mode=mode, read_timeout_seconds=60) as c:
                assert c.protocol_version == ERA[mode]
                if mode == 'auto': assert c.session.discover_result is not None and c.session.initialize_result is None
                if mode == 'legacy': assert c.session.initialize_result.server_info.version == caveman.__version__
                tools = {t.name: t for t in (await c.list_tools()).tools}
                assert list(tools) == FIVE
                assert tools['caveman_stats'].annotations.read_only_hint is True
                assert tools['caveman_retrieve'].meta == {'anthropic/maxResultSizeChars': 500000}
                res = await c.call_tool('caveman_compress', {'input': original})
                p = json.loads(text_of(res))
                assert not res.is_error and p['recovery_handle'] and p['tokens_after'] < p['tokens_before']
                assert res.content[1].type == 'resource_link' and str(res.content[1].uri) == f'caveman://ccr/{p["recovery_handle"]}'
                assert text_of(await c.call_tool('caveman_retrieve', {'recovery_handle': p['recovery_handle']})) == original
                assert (await c.read_resource(str(res.content[1].uri))).contents[0].text == original
                stats = await c.call_tool('caveman_stats', {})
                assert stats.structured_content['requests'] == 1 and stats.structured_content['scope'] == 'session'
                rows = json.dumps([{'id': i, 'sku': f'SKU-{i}'} for i in range(6)])
                enc = json.loads(text_of(await c.call_tool('caveman_toon_encode', {'input': rows})))
                assert json.loads(text_of(await c.call_tool('caveman_toon_decode', {'input': enc['output']}))) == json.loads(rows)
        asyncio.run(run())
        assert srv.stop() == 0, srv.log()


def test_ledger_per_http_session_and_per_stateless_client(tmp_path):
    "Handshake era: one ledger per Mcp-Session-Id. Stateless era: one per (token, clientInfo name and version)."
    original = corpus_path('log_pytest_requests_failures.log').read_text(encoding='utf-8')
    with HttpServer(tmp_path) as srv:
        async def retrieve_twice(c, h):
            first = text_of(await c.call_tool('caveman_retrieve', {'recovery_handle': h}))
            second = text_of(await c.call_tool('caveman_retrieve', {'recovery_handle': h}))
            return first, second

        async def run():
            async with Client(srv.url, mode='legacy') as a:
                h = json.loads(text_of(await a.call_tool('caveman_compress', {'input': original})))['recovery_handle']
                first, second = await retrieve_twice(a, h)
                assert first == original and second.startswith(POINTER)
                async with Client(srv.url, mode='legacy') as b:                 # another session: its own ledger and totals
                    first, second = await retrieve_twice(b, h)
                    assert first == original and second.startswith(POINTER)
                    assert (await b.call_tool('caveman_stats', {})).structured_content['requests'] == 0
            me = Implementation(name='agent-one', version='1.0')
            async with Client(srv.url, mode='2026-07-28', client_info=me) as c1:
                first, second = await retrieve_twice(c1, h)
                assert first == original and second.startswith(POINTER)
            async with Client(srv.url, mode='2026-07-28', client_info=me) as c1_again:     # same identity, new connection
                assert text_of(await c1_again.call_tool('caveman_retrieve', {'recovery_handle': h})).startswith(POINTER)
            async with Client(srv.url, mode='2026-07-28', client_info=Implementation(name='agent-two', version='1.0')) as c2:
                assert text_of(await c2.call_tool('caveman_retrieve', {'recovery_handle': h})) == original
        asyncio.run(run())


def test_concurrent_clients_are_served_concurrently(tmp_path):
    "A ping-sized stateless request is answered while another client's 4 MB compress runs."
    big = json.dumps([{'id': i, 'name': f'item-{i}', 'tags': ['a', 'b'], 'note': 'x' * 40} for i in range(40000)])
    with HttpServer(tmp_path) as srv:
        done = {}
        def slow():
            done['status'] = post(srv.port, *modern(1, 'tools/call', name='caveman_compress', arguments={'input': big}))[0]
        t = threading.Thread(target=slow); t.start()
        time.sleep(0.3)
        quick = []
        while t.is_alive() and len(quick) < 5:
            t0 = time.perf_counter(); assert discover_ok(srv.port); quick.append(time.perf_counter() - t0)
        t.join(120)
        assert done['status'] == 200
        assert quick, 'the compress finished before a second request could be sent'


# --- the fuzz pass --------------------------------------------------------------------------------

CAP = 65536

def test_fuzz_pass_then_the_server_still_answers(tmp_path):
    rnd = random.Random(16)
    with HttpServer(tmp_path, CAVEMAN_MCP_MAX_INBOUND_BYTES=str(CAP)) as srv:
        port = srv.port
        status, headers, body = post(port, json.dumps({'jsonrpc': '2.0', 'id': 0, 'method': 'initialize',
                                                        'params': {'protocolVersion': '2025-06-18', 'capabilities': {}}}).encode())
        sid = headers['mcp-session-id']
        assert status == 200 and json.loads(body)['result']['protocolVersion'] == '2025-06-18'
        ping = json.dumps({'jsonrpc': '2.0', 'id': 5, 'method': 'ping'}).encode()
        cases = [
            # (body, headers, method, expected status, expected JSON-RPC error code or None)
            (b'{"jsonrpc":"2.0","id":1,', {}, 'POST', 400, -32700),
            (b'', {}, 'POST', 400, -32700),
            (b'\xff\xfe\x00garbage', {}, 'POST', 400, -32700),
            (b'[' * 60000, {}, 'POST', 400, -32700),                                  # too deep to decode, under the cap
            (b'[]', {}, 'POST', 400, -32600),
            (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', {'Mcp-Session-Id': sid}, 'POST', 400, -32600),
            (b'"just a string"', {}, 'POST', 400, -32600),
            (b'{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}', {'Mcp-Session-Id': sid}, 'POST', 200, -32600),
            (ping, {'Content-Type': 'text/plain'}, 'POST', 415, -32600),
            (ping, {'Content-Type': 'application/x-www-form-urlencoded'}, 'POST', 415, -32600),
            (ping, {}, 'POST', 400, -32600),                                           # no session id
            (ping, {'Mcp-Session-Id': 'not-a-session'}, 'POST', 404, -32600),
            (ping, {'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '1999-01-01'}, 'POST', 400, -32600),
            (ping, {'Mcp-Session-Id': sid, 'Origin': 'http://evil.example'}, 'POST', 403, -32600),
            (ping, {'Mcp-Session-Id': sid, 'Origin': 'null'}, 'POST', 403, -32600),
            (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + b'x' * CAP + b'"}}', {'Mcp-Session-Id': sid}, 'POST', 413, -32600),
            (b'', {'Mcp-Session-Id': sid}, 'GET', 405, -32600),
            (b'', {}, 'DELETE', 400, -32600),
            (b'', {'Mcp-Session-Id': 'nope'}, 'DELETE', 404, -32600),
            (json.dumps({'jsonrpc': '2.0', 'id': 2, 'method': 'tools/call', 'params': {'name': 'caveman_retrieve', 'arguments': {'recovery_handle': '\udfff'}}}).encode(),
             {'Mcp-Session-Id': sid}, 'POST', 200, None),
            (json.dumps({'jsonrpc': '2.0', 'id': 3, 'method': 'tools/call', 'params': 'nonsense'}).encode(), {'Mcp-Session-Id': sid}, 'POST', 200, -32602),
        ]
        body_, h_ = modern(4, 'tools/list')
        cases += [(body_, {**h_, 'Mcp-Method': 'tools/call'}, 'POST', 400, -32020),
                  (body_, {k: v for k, v in h_.items() if k != 'MCP-Protocol-Version'}, 'POST', 400, -32020),
                  (body_.replace(b'2026-07-28', b'2099-01-01'), {**h_, 'MCP-Protocol-Version': '2099-01-01'}, 'POST', 400, -32022),
                  (json.dumps({'jsonrpc': '2.0', 'id': 6, 'method': 'tools/list', 'params': {'_meta': {'io.modelcontextprotocol/protocolVersion': '2026-07-28'}}}).encode(),
                   h_, 'POST', 400, -32602)]
        for _ in range(150):                                                      # random bytes and mangled requests
            good = json.dumps({'jsonrpc': '2.0', 'id': rnd.randint(0, 9), 'method': rnd.choice(['ping', 'tools/list', 'tools/call', 'initialize', 'server/discover']),
                               'params': {'name': 'caveman_stats', 'arguments': {}}}).encode()
            mangled = bytearray(good)
            for _ in range(rnd.randint(1, 6)): mangled[rnd.randrange(len(mangled))] = rnd.randrange(256)
            cases.append((bytes(mangled), {'Mcp-Session-Id': rnd.choice([sid, 'bogus'])}, 'POST', None, None))
            cases.append((bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 300))), {}, 'POST', None, None))
        for body, headers, method, want_status, want_code in cases:
            status, _, out = post(port, body, headers, method)
            assert status < 500, (status, body[:120], out[:300])
            if want_status is not None: assert status == want_status, (body[:120], headers, status, out[:300])
            if out:
                reply = json.loads(out)
                if want_code is not None: assert reply['error']['code'] == want_code, (body[:120], reply)
            else:
                assert status in (200, 202), (status, body[:120])
        # a chunked body over the cap (no Content-Length to refuse early)
        c = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
        c.putrequest('POST', '/mcp'); c.putheader('Content-Type', 'application/json'); c.putheader('Transfer-Encoding', 'chunked'); c.endheaders()
        try:
            for _ in range(5):
                chunk = b'x' * 20000
                c.send(b'%x\r\n%s\r\n' % (len(chunk), chunk))
            c.send(b'0\r\n\r\n')
        except (BrokenPipeError, ConnectionResetError): pass
        r = c.getresponse(); assert r.status == 413 and 'cave_payload_too_large' in r.read().decode(); c.close()
        # a foreign Host (DNS rebinding without an Origin)
        assert post(port, ping, {'Mcp-Session-Id': sid}, host=f'evil.example:{port}')[0] == 403
        # ... and the server still answers, in both eras
        assert discover_ok(port)
        status, _, out = post(port, ping, {'Mcp-Session-Id': sid})
        assert (status, json.loads(out)) == (200, {'jsonrpc': '2.0', 'id': 5, 'result': {}})
        assert srv.p.poll() is None
        assert 'Traceback' not in srv.log(), srv.log()
        assert srv.stop() == 0


# --- who may listen where ------------------------------------------------------------------------

def test_non_loopback_bind_without_a_token_is_refused(tmp_path):
    env = child_env()
    r = subprocess.run(server_command() + ['--http', '0.0.0.0:0'], capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL, env=env)
    assert (r.returncode, r.stdout) == (2, '') and 'needs a bearer token' in r.stderr
    r = subprocess.run(server_command() + ['--http', 'nowhere:port'], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    lines = r.stderr.splitlines()
    assert r.returncode == 2 and 'needs HOST:PORT' in lines[0] and lines[1].startswith('usage: caveman-mcp [') and '--http HOST:PORT' in lines[1] and len(lines) == 2


def test_token_required_on_every_request_when_set(tmp_path):
    import httpx2
    with HttpServer(tmp_path, bind='0.0.0.0:0', CAVEMAN_MCP_TOKEN='s3cret-token') as srv:
        assert post(srv.port, *modern(1, 'server/discover'))[0] == 401
        b, h = modern(1, 'server/discover')
        assert post(srv.port, b, {**h, 'Authorization': 'Bearer wrong'})[0] == 401
        assert post(srv.port, b, {**h, 'Authorization': 'Bearer s3cret-token'})[0] == 200

        async def run():
            async with httpx2.AsyncClient(headers={'Authorization': 'Bearer s3cret-token'}) as hc:
                async with Client(streamable_http_client(srv.local_url(), http_client=hc), mode='auto') as c:
                    assert c.protocol_version == '2026-07-28'
                    assert [t.name for t in (await c.list_tools()).tools] == FIVE
        asyncio.run(run())
        assert srv.stop() == 0


# --- shutdown ------------------------------------------------------------------------------------

@pytest.mark.parametrize('sig, rc', [(signal.SIGTERM, 0), (signal.SIGINT, 130)])
def test_graceful_shutdown_finishes_the_request_in_flight(sig, rc, tmp_path):
    big = json.dumps([{'id': i, 'name': f'item-{i}', 'note': 'y' * 60} for i in range(30000)])
    with HttpServer(tmp_path) as srv:
        assert discover_ok(srv.port)                     # warm: the engine is built on the first call below
        got = {}
        def slow(): got['r'] = post(srv.port, *modern(1, 'tools/call', name='caveman_compress', arguments={'input': big}))
        t = threading.Thread(target=slow); t.start()
        time.sleep(0.5)
        code = srv.stop(sig)
        t.join(60)
        assert code == rc, srv.log()
        status, _, body = got['r']
        assert status == 200 and json.loads(json.loads(body)['result']['content'][0]['text'])['tokens_before'] > 0
        assert 'Traceback' not in srv.log(), srv.log()
