"""caveman-mcp as a gateway, driven by the official SDK client, against an upstream that found the gaps of break test 6.

The upstream is a raw JSON-RPC stdio server written by this test (`RAW6`), listing the tools named in `RAW_TOOLS`:
`nlblocks` returns a log as many small text blocks each ending in a newline, `blocks` the same lines without it,
`imgtext` returns [text, image, text], any other tool answers `<server> <tool>`. Each test failed before its fix
(break test 6, r25, r26, r29).
"""
import asyncio, json, sys

import pytest

from _mcp_client import result_text, session, tools_of as _tools_of
from conftest import server_command, child_env

pytestmark = pytest.mark.slow
LIMIT = 90     # seconds after which something that should have happened counts as never (not a speed target)
PNG = 'iVBORw0KGgo='

RAW6 = r'''
import json, os, sys
out = sys.stdout.buffer
def send(obj): out.write(json.dumps(obj).encode() + b'\n'); out.flush()
WHO = os.environ['RAW_WHO']
TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in os.environ['RAW_TOOLS'].split(',')]
def line(i, n): return f"svc item {i}: status=" + ("FAILED error=disk full" if i == n - 1 else f"ok size={i * 13}")
def big(tag): return ''.join(f"{tag} 2026-12-02 10:{i % 60:02d} INFO svc-{i % 3} request {i} took {i * 7 % 300} ms\n" for i in range(200))
for raw in sys.stdin.buffer:
    m = json.loads(raw); mid, meth, p = m.get('id'), m.get('method'), m.get('params') or {}
    R = lambda result: send({"jsonrpc": "2.0", "id": mid, "result": result})
    if meth == 'initialize':
        R({"protocolVersion": p["protocolVersion"], "serverInfo": {"name": "raw6", "version": "1"}, "capabilities": {"tools": {}}})
    elif meth == 'tools/list': R({"tools": TOOLS})
    elif meth == 'tools/call':
        name, a = p['name'], p.get('arguments') or {}
        n = a.get('n', 3001)
        if name == 'nlblocks': R({"content": [{"type": "text", "text": line(i, n) + "\n"} for i in range(n)]})
        elif name == 'blocks': R({"content": [{"type": "text", "text": line(i, n)} for i in range(n)]})
        elif name == 'imgtext': R({"content": [{"type": "text", "text": big('A')}, {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}, {"type": "text", "text": big('B')}]})
        else: R({"content": [{"type": "text", "text": f"{WHO} {name}"}]})
    elif meth == 'ping': R({})
'''


def line(i: int, n: int) -> str:
    "A line RAW6's block tools send, written here again (the test's own copy)."
    return f"svc item {i}: status=" + ("FAILED error=disk full" if i == n - 1 else f"ok size={i * 13}")


@pytest.fixture
def raw(tmp_path):
    script = tmp_path / 'raw6.py'; script.write_text(RAW6)
    env = child_env(RAW_WHO='solo', RAW_TOOLS='nlblocks,blocks,imgtext', CAVEMAN_HOME=tmp_path / 'home', CAVEMAN_MCP_EOF_WAIT=1)
    return {'cmd': [sys.executable, str(script)], 'env': env, 'tmp': tmp_path}


def client(args: list[str], env: dict, errlog):
    "The gateway (`caveman-mcp` with `args`) under the official SDK client."
    return session(server_command() + args, env, errlog)


async def tools_of(s, name: str) -> list[str]: return await _tools_of(s, name, LIMIT)


def handle_of(view: str) -> 'str | None':
    return view.rsplit('original stored as ', 1)[1].split(';')[0] if 'original stored as ' in view else None


def test_small_blocks_ending_in_a_newline_are_one_payload_without_blank_lines(raw):
    "r25: 3001 blocks each ending in a newline are joined as they are (no blank line between): one view, the FAILED line kept, the handle returns exactly the joined text; blocks without a newline are joined by one."
    async def go():
        async with client(['--', *raw['cmd']], raw['env'], open(raw['tmp'] / 'err.log', 'w+')) as s:
            await tools_of(s, 'nlblocks')
            out = {}
            for tool in ('nlblocks', 'blocks'):
                r = await s.call_tool(tool, {'n': 3001})
                h = handle_of(result_text(r))
                out[tool] = (r, result_text(await s.call_tool('caveman_retrieve', {'recovery_handle': h})) if h else None)
            return out
    out = asyncio.run(go())
    for tool, original in (('nlblocks', ''.join(line(i, 3001) + '\n' for i in range(3001))),
                           ('blocks', '\n'.join(line(i, 3001) for i in range(3001)))):
        r, back = out[tool]
        assert [b.type for b in r.content] == ['text'], (tool, len(r.content))
        view = result_text(r)
        assert len(view) < len(original) / 4, (tool, len(view))
        assert 'FAILED error=disk full' in view, tool
        assert back == original, (tool, None if back is None else back[:200])


def test_a_non_text_block_keeps_its_place_between_text_blocks(raw):
    "r26: [text A, image, text B] comes back [view of A, image, view of B]: each run of text blocks is compressed in its own place."
    async def go():
        async with client(['--', *raw['cmd']], raw['env'], open(raw['tmp'] / 'err.log', 'w+')) as s:
            await tools_of(s, 'imgtext')
            return await s.call_tool('imgtext', {})
    r = asyncio.run(go())
    assert [b.type for b in r.content] == ['text', 'image', 'text'], [b.type for b in r.content]
    assert r.content[1].data == PNG
    a, b = r.content[0].text, r.content[2].text
    assert 'A 2026-12-02' in a and 'B 2026-12-02' not in a, a[:300]
    assert 'B 2026-12-02' in b and 'A 2026-12-02' not in b, b[:300]
    assert len(a) < 200 * 40 and len(b) < 200 * 40, (len(a), len(b))     # each a view, not the 200 lines as sent


def test_namespaced_names_that_collide_are_each_listed_once_and_reach_their_own_tool(raw):
    "r29: server `a` with tool `b__c` and server `a__b` with tool `c` would both be `a__b__c`: both listed once, each call reaches its own tool, in either config order."
    for order in (('a', 'a__b'), ('a__b', 'a')):
        tools = {'a': 'b__c,x', 'a__b': 'c,y'}
        servers = {w: {'command': raw['cmd'][0], 'args': raw['cmd'][1:], 'env': {'RAW_WHO': w, 'RAW_TOOLS': tools[w]}} for w in order}
        cfg = raw['tmp'] / 'servers.json'; cfg.write_text(json.dumps({'mcpServers': servers}))
        async def go():
            async with client(['--config', str(cfg)], raw['env'], open(raw['tmp'] / 'err.log', 'w+')) as s:
                await tools_of(s, 'a__b__y'); names = await tools_of(s, 'a__x')
                return names, {n: result_text(await s.call_tool(n, {})) for n in names if n.startswith('a')}
        names, answers = asyncio.run(go())
        assert len(names) == len(set(names)), names
        assert sorted(answers.values()) == ['a b__c', 'a x', 'a__b c', 'a__b y'], answers
        assert answers.get('a__b__c') == 'a__b c' and answers.get('a__x') == 'a x' and answers.get('a__b__y') == 'a__b y', answers
