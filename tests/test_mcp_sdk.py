"""caveman-mcp driven by the official MCP Python SDK 2.x client as a subprocess, in both eras: the
session-level `ClientSession.initialize()` handshake (the SDK offers 2025-11-25), `mcp.Client(...,
mode="legacy")`, `mcp.Client(..., mode="auto")`, which probes `server/discover` and stays on the
stateless 2026-07-28 protocol when the server answers it, and `mode="2026-07-28"`, which speaks it
without a probe. Payloads are the real json_* and log_* files of the shared corpus. The same clients
over Streamable HTTP are in tests/test_mcp_http.py."""
import asyncio, json, os, time
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import caveman
from caveman.corpus import corpus_files, corpus_path
from conftest import server_command

FIVE = ['caveman_compress', 'caveman_retrieve', 'caveman_stats', 'caveman_toon_encode', 'caveman_toon_decode']

@asynccontextmanager
async def session(env: dict, errlog):
    cmd = server_command()
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            assert init.protocol_version == '2025-11-25'
            yield s

def text_of(result) -> str:
    "The text block of a tool result; a second block may only be the resource_link to the stored original (2025-06-18 on)."
    assert result.content[0].type == 'text'
    if len(result.content) > 1:
        assert len(result.content) == 2 and result.content[1].type == 'resource_link', result.content
        assert str(result.content[1].uri) == 'caveman://ccr/' + json.loads(result.content[0].text)['recovery_handle']
    return result.content[0].text

def payloads():
    fs = corpus_files('json') + corpus_files('log')
    assert len(fs) >= 8
    return fs

def test_sdk_client_end_to_end(store_env, tmp_path):
    """Five tools; every json/log payload compresses or passes through honestly; every handle retrieves
    byte-exact from a SECOND server process sharing the store file; stats are session-scoped."""
    errlog = open(tmp_path / 'stderr.log', 'w+')
    seen_text = []

    async def first_server():
        handles = {}
        async with session(store_env, errlog) as s:
            tools = (await s.list_tools()).tools
            assert [t.name for t in tools] == FIVE
            for t in tools:
                assert t.description and t.input_schema['type'] == 'object'
            before = after = 0
            for f in payloads():
                original = f.read_text(encoding='utf-8')
                res = await s.call_tool('caveman_compress', {'input': original})
                assert not res.is_error, text_of(res)
                p = json.loads(text_of(res))
                # caveman's own words never say "verified"; the payload's own text may (GitHub JSON does)
                seen_text.append(json.dumps({k: v for k, v in p.items() if k != 'compressed'}))
                if 'verified' in p['compressed'].lower(): assert 'verified' in original.lower()
                assert p['basis'] == 'inferred'
                before += p['tokens_before']; after += p['tokens_after']
                if p['recovery_handle'] is None:  # honest pass-through
                    assert (p['ratio'], p['compressed'], p['tokens_after']) == (0, original, p['tokens_before'])
                else:
                    assert 0 < p['ratio'] < 1 and p['tokens_after'] < p['tokens_before']
                    assert p['compressed'] != original and p['recovery_handle'].startswith('ccr_')
                    assert p['content_type'] == f.name.split('_')[0]
                    handles[f.name] = (p['recovery_handle'], original)
            stats = json.loads(text_of(await s.call_tool('caveman_stats', {})))
            seen_text.append(json.dumps(stats))
            assert (stats['basis'], stats['scope']) == ('inferred', 'session')
            assert (stats['requests'], stats['tokens_before'], stats['tokens_after']) == (len(payloads()), before, after)
        return handles

    async def second_server(handles):
        async with session(store_env, errlog) as s:
            stats = json.loads(text_of(await s.call_tool('caveman_stats', {})))
            assert stats['requests'] == 0 and stats['ratio'] == 0   # a new session starts at zero
            for name, (h, original) in handles.items():
                res = await s.call_tool('caveman_retrieve', {'recovery_handle': h})
                assert not res.is_error
                assert text_of(res) == original, name

    handles = asyncio.run(first_server())
    assert len(handles) >= 6, f'too few payloads compressed: {sorted(handles)}'
    asyncio.run(second_server(handles))
    errlog.seek(0)
    assert 'verified' not in errlog.read().lower()
    assert not any('verified' in t.lower() for t in seen_text)

def test_handle_spellings_malformed_and_unknown(store_env, tmp_path):
    errlog = open(tmp_path / 'stderr.log', 'w+')
    original = corpus_files('log')[0].read_text()

    async def run():
        async with session(store_env, errlog) as s:
            p = json.loads(text_of(await s.call_tool('caveman_compress', {'input': original})))
            h = p['recovery_handle']; assert h
        for spelling in [h, f'<<ccr:{h}>>', f'ccr:{h}', f'ccr://{h}']:
            async with session(store_env, errlog) as s:   # a fresh session each: no ledger interplay
                res = await s.call_tool('caveman_retrieve', {'recovery_handle': spelling})
                assert not res.is_error and text_of(res) == original, spelling
        async with session(store_env, errlog) as s:
            bad = '{"items": [{"id": 1}, {"id": 2},'
            p = json.loads(text_of(await s.call_tool('caveman_compress', {'input': bad})))
            assert (p['compressed'], p['ratio'], p['recovery_handle']) == (bad, 0, None)
            res = await s.call_tool('caveman_retrieve', {'recovery_handle': 'ccr_' + '0' * 32})
            assert res.is_error and json.loads(text_of(res))['error'] == 'cave_unknown_handle'
            res = await s.call_tool('caveman_toon_decode', {'input': 'rows[2]{id,name}:\n  1\n  2'})
            assert res.is_error and json.loads(text_of(res))['error'] == 'cave_invalid_toon'
            assert 'rows[2]' not in text_of(res)
    asyncio.run(run())

def test_server_creates_missing_store_directory(tmp_path):
    "SPEC §14.2: on a fresh machine the server creates its store directory instead of dying."
    home = tmp_path / 'no' / 'such' / 'home'
    env = {'CAVEMAN_HOME': str(home)}
    errlog = open(tmp_path / 'stderr.log', 'w+')
    text = corpus_files('log')[0].read_text()

    async def run():
        async with session(env, errlog) as s:
            p = json.loads(text_of(await s.call_tool('caveman_compress', {'input': text})))
            assert p['recovery_handle']
    asyncio.run(run())
    assert (home / 'ccr.db').is_file()
    assert oct(home.stat().st_mode & 0o777) == '0o700'


# --- every tool, in both client modes ------------------------------------------------------------

async def exercise_five(list_tools, call_tool):
    "List the five tools and call each one through the client's own API; return the compress payload."
    tools = (await list_tools()).tools
    assert [t.name for t in tools] == FIVE
    original = corpus_path('json_github_list_issues.json').read_text(encoding='utf-8')
    p = json.loads(text_of(await call_tool('caveman_compress', {'input': original})))
    assert p['recovery_handle'] and p['tokens_after'] < p['tokens_before'] and p['content_type'] == 'json'
    res = await call_tool('caveman_retrieve', {'recovery_handle': f'<<ccr:{p["recovery_handle"]}>>'})
    assert not res.is_error and text_of(res) == original
    stats = json.loads(text_of(await call_tool('caveman_stats', {})))
    assert (stats['requests'], stats['tokens_before'], stats['scope']) == (1, p['tokens_before'], 'session')
    rows = json.dumps([{'id': i, 'sku': f'SKU-{i}', 'on_hand': i * 3} for i in range(5)])
    enc = json.loads(text_of(await call_tool('caveman_toon_encode', {'input': rows})))
    assert enc['encoded'] and enc['output_bytes'] < enc['input_bytes']
    res = await call_tool('caveman_toon_decode', {'input': enc['output']})
    assert not res.is_error and json.loads(text_of(res)) == json.loads(rows)
    return p

def params_for(env: dict) -> StdioServerParameters:
    cmd = server_command()
    return StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)

def test_sdk_client_session_initialize_calls_every_tool(store_env, tmp_path):
    "The session-level client: `ClientSession.initialize()` (the handshake, at the SDK's 2025-11-25), then all five tools."
    errlog = open(tmp_path / 'stderr.log', 'w+')
    async def run():
        async with stdio_client(params_for(store_env), errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                init = await s.initialize()
                assert (init.protocol_version, init.server_info.name, init.server_info.version) == ('2025-11-25', 'caveman', caveman.__version__)
                assert init.capabilities.tools is not None and init.capabilities.resources is not None and init.instructions
                await exercise_five(s.list_tools, s.call_tool)
    asyncio.run(run())

ERA = {'auto': ('2026-07-28', 'discover'), '2026-07-28': ('2026-07-28', None), 'legacy': ('2025-11-25', 'initialize')}

@pytest.mark.parametrize('mode', ['auto', '2026-07-28', 'legacy'])
def test_high_level_client_calls_every_tool(mode, store_env, tmp_path):
    """`mcp.Client(..., mode=...)` over stdio: "auto" sends `server/discover` first and, since caveman answers it,
    stays on the stateless 2026-07-28 protocol (no fallback to `initialize`); "2026-07-28" speaks it without a
    probe; "legacy" runs the handshake. The tools, the caps and the ledger behave the same in all three."""
    errlog = open(tmp_path / 'stderr.log', 'w+')
    async def run():
        t0 = time.perf_counter()
        async with Client(params_for(store_env), mode=mode, read_timeout_seconds=60) as c:
            connect = time.perf_counter() - t0
            version, how = ERA[mode]
            assert c.protocol_version == version
            if how == 'discover':
                assert c.session.discover_result is not None and c.session.initialize_result is None
                assert c.session.discover_result.supported_versions[0] == '2026-07-28'
                assert (c.server_info.name, c.server_info.version) == ('caveman', caveman.__version__)
            elif how == 'initialize':
                assert c.session.initialize_result is not None and c.session.discover_result is None
                assert (c.server_info.name, c.server_info.version) == ('caveman', caveman.__version__)
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert tools['caveman_retrieve'].annotations.read_only_hint is True
            assert tools['caveman_compress'].annotations.read_only_hint is False
            assert all(t.annotations.open_world_hint is False for t in tools.values())
            assert tools['caveman_retrieve'].meta == {'anthropic/maxResultSizeChars': 500000}
            p = await exercise_five(c.list_tools, c.call_tool)
            res = await c.read_resource(f'caveman://ccr/{p["recovery_handle"]}')
            assert res.contents[0].text == corpus_path('json_github_list_issues.json').read_text(encoding='utf-8')
            again = await c.call_tool('caveman_retrieve', {'recovery_handle': p['recovery_handle']})
            assert text_of(again).startswith('caveman: this exact handle and query were already answered')   # the ledger
        return connect
    connect = asyncio.run(run())
    print(f'\nmcp.Client(mode={mode!r}): connected in {connect*1e3:.0f} ms')
    assert connect < 5, connect        # a silent or slow server/discover would cost the SDK's probe timeout


def test_sdk_client_gets_the_oversize_error_under_its_id_not_a_hang(store_env, tmp_path):
    """Issue 12 item 8: a 17 MiB input trips the 16 MiB inbound cap. The server salvages the request's id
    from the start of the drained line, so the official client receives `cave_payload_too_large` as the
    answer to ITS call (before the fix it got `id: null` and waited forever); the session then goes on."""
    from mcp.shared.exceptions import MCPError
    errlog = open(tmp_path / 'stderr.log', 'w+')

    async def go():
        async with session(store_env, errlog) as s:
            with pytest.raises(MCPError) as e:
                await s.call_tool('caveman_compress', {'input': 'x' * (17 << 20)})
            assert e.value.error.code == -32600 and 'cave_payload_too_large' in e.value.error.message
            assert [t.name for t in (await s.list_tools()).tools] == FIVE     # the same session still answers
    asyncio.run(asyncio.wait_for(go(), timeout=120))                          # a hang fails here, not in CI's limit


def test_original_that_is_not_utf8_comes_back_exactly(store_env, tmp_path):
    """A log with stray non-UTF-8 bytes, stored in the shared store by another process, retrieved by the SDK
    client: the text block is plain Unicode that says so (U+FFFD where bytes do not decode), and the
    embedded resource and `resources/read` give the exact bytes back (base64 decoded here)."""
    import base64
    from caveman import ccr
    raw = b''.join(b'2026-05-01T10:00:%02dZ INFO worker %d done \xff\xfe latin-1 caf\xe9\n' % (k % 60, k) for k in range(400))
    with ccr.open_store(store_env['CAVEMAN_CCR_DB']) as st: handle = st.put(raw, content_type='log')
    async def run():
        async with session(store_env, open(tmp_path / 'stderr.log', 'w')) as s:
            res = await s.call_tool('caveman_retrieve', {'recovery_handle': handle})
            text, blob = res.content[0], res.content[1]
            assert text.type == 'text' and 'not valid UTF-8' in text.text and '\ufffd' in text.text
            text.text.encode('utf-8')                                          # no lone surrogates
            assert blob.type == 'resource' and blob.resource.mime_type == 'application/octet-stream'
            assert base64.b64decode(blob.resource.blob) == raw
            got = (await s.read_resource(f'caveman://ccr/{handle}')).contents[0]
            assert base64.b64decode(got.blob) == raw
    asyncio.run(run())
