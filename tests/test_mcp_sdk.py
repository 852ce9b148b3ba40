"""caveman-mcp driven by the official MCP Python SDK client (`ClientSession` over `stdio_client`) as a
subprocess, on the real json_* and log_* payloads of the shared corpus."""
import asyncio, json, os
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from caveman.corpus import corpus_files
from conftest import server_command

FIVE = ['caveman_compress', 'caveman_retrieve', 'caveman_stats', 'caveman_toon_encode', 'caveman_toon_decode']

@asynccontextmanager
async def session(env: dict, errlog):
    cmd = server_command()
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            assert init.protocol_version == '2024-11-05'
            yield s

def text_of(result) -> str:
    assert len(result.content) == 1 and result.content[0].type == 'text'
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
