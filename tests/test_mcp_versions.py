"""The protocol version table of `caveman-mcp`, on raw stdio lines (issue 16).

Every known version through `initialize` (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25) and through
the stateless per-request `_meta` (2026-07-28); an unknown future version and a missing one, in both
eras. Expected values are written from the MCP spec text of each revision (what each revision's
schema defines: annotations from 2025-03-26; tool `title`, tool `_meta`, `resource_link`,
`structuredContent` from 2025-06-18; `resultType`, `ttlMs`/`cacheScope`, `server/discover`,
−32022 `UnsupportedProtocolVersionError` in 2026-07-28), never read back from the server.
"""
import json

import pytest

import caveman
from caveman.corpus import corpus_path
from _mcp_lines import Live, call, ok, replies, req, run

HANDSHAKE = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']
ALL = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']
FIVE = ['caveman_compress', 'caveman_retrieve', 'caveman_stats', 'caveman_toon_encode', 'caveman_toon_decode']
SERVER_INFO = {'name': 'caveman', 'version': caveman.__version__}
READ_ONLY = {'readOnlyHint': True, 'idempotentHint': True, 'openWorldHint': False}
ANNOTATIONS = {'caveman_compress': {'readOnlyHint': False, 'destructiveHint': False, 'idempotentHint': True, 'openWorldHint': False},
               'caveman_retrieve': READ_ONLY, 'caveman_stats': READ_ONLY, 'caveman_toon_encode': READ_ONLY,
               'caveman_toon_decode': READ_ONLY}
MODERN_META = {'io.modelcontextprotocol/protocolVersion': '2026-07-28',
               'io.modelcontextprotocol/clientInfo': {'name': 'raw-lines', 'version': '1'},
               'io.modelcontextprotocol/clientCapabilities': {}}


def init(rid, version=None, **extra):
    params = {'capabilities': {}, 'clientInfo': {'name': 'raw', 'version': '0'}, **extra}
    if version is not None: params['protocolVersion'] = version
    return req(rid, 'initialize', params=params)


def modern(rid, method, meta=None, **params):
    return req(rid, method, params={**params, '_meta': MODERN_META if meta is None else meta})


def original() -> str:
    return corpus_path('json_github_list_issues.json').read_text(encoding='utf-8')


# --- the handshake era ---------------------------------------------------------------------------

@pytest.mark.parametrize('version', HANDSHAKE)
def test_every_handshake_version_is_echoed_with_what_it_defines(version):
    text = original()
    lines = [init(0, version), b'{"jsonrpc":"2.0","method":"notifications/initialized"}', req(1, 'tools/list'),
             call(2, 'caveman_compress', {'input': text}), call(3, 'caveman_stats', {})]
    # one worker: the tool calls run in the order sent, so stats counts the compress before it
    out = replies(run('caveman-mcp', b'\n'.join(lines) + b'\n', CAVEMAN_MCP_WORKERS='1'))
    res = out[0]['result']
    assert (res['protocolVersion'], res['serverInfo']) == (version, SERVER_INFO)
    tools = {t['name']: t for t in out[1]['result']['tools']}
    assert list(tools) == FIVE
    compress, stats = out[2]['result'], out[3]['result']
    payload = json.loads(compress['content'][0]['text'])
    handle = payload['recovery_handle']
    assert handle and compress['isError'] is False
    if version == '2024-11-05':                      # exactly the old behaviour
        assert res == {'protocolVersion': version, 'capabilities': {'tools': {}}, 'serverInfo': SERVER_INFO}
        assert all(set(t) == {'name', 'description', 'inputSchema'} for t in tools.values())
        assert compress['content'] == [compress['content'][0]] and set(stats) == {'content', 'isError'}
        return
    assert res['instructions'] and len(res['instructions']) < 2048
    for name, t in tools.items():
        ann = {k: v for k, v in t['annotations'].items() if k != 'title'}
        assert ann == ANNOTATIONS[name], name
    if version == '2025-03-26':                      # annotations (with their title) but no 2025-06-18 fields
        assert res['capabilities'] == {'tools': {}}
        assert all(t['annotations']['title'] and 'title' not in t and '_meta' not in t and 'outputSchema' not in t
                   for t in tools.values())
        assert len(compress['content']) == 1 and 'structuredContent' not in stats
        return
    assert res['capabilities'] == {'tools': {}, 'resources': {}}
    assert all(t['title'] for t in tools.values())
    assert tools['caveman_retrieve']['_meta'] == {'anthropic/maxResultSizeChars': 500000}
    assert [n for n, t in tools.items() if 'outputSchema' in t] == ['caveman_stats']
    assert compress['content'][1] == {'type': 'resource_link', 'uri': f'caveman://ccr/{handle}', 'name': handle,
                                      'mimeType': 'text/plain', 'description': compress['content'][1]['description']}
    assert stats['structuredContent'] == json.loads(stats['content'][0]['text'])
    assert stats['structuredContent']['requests'] == 1


@pytest.mark.parametrize('params', [{'protocolVersion': '2099-01-01'}, {'protocolVersion': '2026-07-28'},
                                    {'protocolVersion': ''}, {'protocolVersion': 5}, {}, None, [], 'x', 7])
def test_unknown_or_missing_versions_get_the_newest_handshake_version_never_an_error(params):
    line = req(0, 'initialize') if params is None else req(0, 'initialize', params=params)
    [reply] = replies(run('caveman-mcp', line + b'\n'))
    assert reply['result']['protocolVersion'] == '2025-11-25' and 'error' not in reply


def test_a_client_that_never_initializes_is_served_as_2024_11_05():
    out = replies(run('caveman-mcp', req(1, 'tools/list') + b'\n' + call(2, 'caveman_stats', {}) + b'\n'
                      + req(3, 'resources/templates/list') + b'\n'))
    assert all(set(t) == {'name', 'description', 'inputSchema'} for t in out[0]['result']['tools'])
    assert set(out[1]['result']) == {'content', 'isError'}
    assert out[2]['error']['code'] == -32601


def test_resources_read_returns_the_original_from_2025_06_18():
    text = original()
    with Live('caveman-mcp') as s:
        s.send(init(0, '2025-06-18'), call(1, 'caveman_compress', {'input': text}))
        s.reply()
        link = s.reply()['result']['content'][1]
        s.send(req(2, 'resources/read', params={'uri': link['uri']}), req(3, 'resources/templates/list'),
               req(4, 'resources/read', params={'uri': 'caveman://ccr/ccr_' + '0' * 32}), req(5, 'resources/list'))
        read, templates, missing, listed = s.reply(), s.reply(), s.reply(), s.reply()
        assert read['result'] == {'contents': [{'uri': link['uri'], 'mimeType': 'text/plain', 'text': text}]}
        assert templates['result']['resourceTemplates'][0]['uriTemplate'] == 'caveman://ccr/{handle}'
        assert missing['error']['code'] == -32002          # "resource not found" of 2025-06-18 and 2025-11-25
        assert listed['result'] == {'resources': []}
        assert s.close() == 0


# --- the stateless era (2026-07-28) --------------------------------------------------------------

def test_server_discover_and_every_stateless_request_carry_the_2026_07_28_fields():
    text = original()
    with Live('caveman-mcp') as s:
        s.send(modern(0, 'server/discover'))
        d = s.reply()['result']
        assert d['supportedVersions'] == ALL and d['capabilities'] == {'tools': {}, 'resources': {}}
        assert d['instructions'] and d['resultType'] == 'complete'
        assert d['_meta'] == {'io.modelcontextprotocol/serverInfo': SERVER_INFO}
        assert (d['ttlMs'] >= 0, d['cacheScope']) == (True, 'public')
        s.send(modern(1, 'tools/list'), modern(2, 'tools/list'))
        first, second = s.reply()['result'], s.reply()['result']
        assert first == second                                               # deterministic
        assert [t['name'] for t in first['tools']] == FIVE and first['resultType'] == 'complete'
        assert first['cacheScope'] == 'public' and isinstance(first['ttlMs'], int)
        assert {t['name']: {k: v for k, v in t['annotations'].items() if k != 'title'} for t in first['tools']} == ANNOTATIONS
        s.send(modern(3, 'tools/call', name='caveman_compress', arguments={'input': text}))
        res = s.reply()['result']
        assert res['resultType'] == 'complete' and 'ttlMs' not in res and 'cacheScope' not in res
        assert res['_meta'] == {'io.modelcontextprotocol/serverInfo': SERVER_INFO}
        uri = res['content'][1]['uri']
        s.send(modern(4, 'resources/read', uri=uri), modern(5, 'resources/read', uri='caveman://ccr/ccr_' + '1' * 32))
        read, missing = s.reply()['result'], s.reply()
        assert read['contents'][0]['text'] == text and read['cacheScope'] == 'private'
        assert missing['error']['code'] == -32602         # 2026-07-28 replaced -32002 with -32602
        assert s.close() == 0


@pytest.mark.parametrize('method', ['server/discover', 'tools/list'])
def test_an_unknown_future_stateless_version_is_unsupported_protocol_version(method):
    meta = {**MODERN_META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01'}
    [reply] = replies(run('caveman-mcp', modern(7, method, meta) + b'\n'))
    assert reply['id'] == 7 and reply['error']['code'] == -32022
    assert reply['error']['data'] == {'supported': ALL, 'requested': '2099-01-01'}


@pytest.mark.parametrize('meta, code', [
    ({'io.modelcontextprotocol/protocolVersion': '2026-07-28'}, -32602),                 # clientCapabilities missing
    ({'io.modelcontextprotocol/protocolVersion': 20260728, 'io.modelcontextprotocol/clientCapabilities': {}}, -32602),
    ({'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': []}, -32602),
    ({'io.modelcontextprotocol/clientCapabilities': {}}, -32602),                          # no version: not stateless, so discover is malformed
    ({}, -32602)])
def test_a_malformed_stateless_request_is_invalid_params(meta, code):
    [reply] = replies(run('caveman-mcp', modern(1, 'server/discover', meta) + b'\n'))
    assert reply['error']['code'] == code


def test_a_missing_stateless_version_on_other_methods_is_handshake_era():
    "A request without `io.modelcontextprotocol/protocolVersion` is not stateless: it is served like any pre-initialize request."
    [reply] = replies(run('caveman-mcp', modern(1, 'tools/list', {'io.modelcontextprotocol/clientCapabilities': {}}) + b'\n'))
    assert 'resultType' not in reply['result'] and all('annotations' not in t for t in reply['result']['tools'])


def test_both_eras_on_one_stdio_process_share_one_ledger():
    "stdio has one client: a recovery answered in one era is a repeat in the other (the ledger rule of caveman.mcp.tools)."
    text = original()
    with Live('caveman-mcp', CAVEMAN_MCP_WORKERS='1') as s:          # one worker: tool calls answered in the order sent
        s.send(init(0, '2025-11-25'), call(1, 'caveman_compress', {'input': text}))
        s.reply()
        h = json.loads(s.reply()['result']['content'][0]['text'])['recovery_handle']
        s.send(call(2, 'caveman_retrieve', {'recovery_handle': h}),
               modern(3, 'tools/call', name='caveman_retrieve', arguments={'recovery_handle': h}),
               modern(4, 'tools/call', name='caveman_stats', arguments={}))
        first, again, stats = s.reply()['result'], s.reply()['result'], s.reply()['result']
        assert first['content'][0]['text'] == text
        assert again['content'][0]['text'].startswith('caveman: this exact handle and query were already answered')
        assert stats['structuredContent']['requests'] == 1           # the compress made under the handshake
        assert s.close() == 0
