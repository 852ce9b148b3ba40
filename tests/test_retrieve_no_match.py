"""Retrieve honesty (issue 10, class 11): a query that matches nothing says so first — with the
original's size in bytes and tokens — and does not silently hand back the whole original. The
library (`Engine.retrieve_query`), the `caveman retrieve --query` CLI and the MCP tool
`caveman_retrieve` (real server, official SDK client) give the same bytes. Which words match is
decided here with this test's own tokenizer (lower-cased \\w+ words), not caveman's."""
import asyncio, json, os, re, shutil, subprocess

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from caveman import ccr
from caveman.corpus import corpus_path
from caveman.engine import Engine
from conftest import server_command, child_env

NOTE = re.compile(r'^\[caveman: nothing matched the query (?P<q>"(?:[^"\\]|\\.)*")(?P<why>[^;]*); '
                  r'the original \((?P<bytes>[\d,]+) bytes(?:, ~(?P<tokens>[\d,]+) tokens)?\) is not repeated here\. '
                  r'Retrieve without a query to read it whole\.\]$')

def words(data: bytes) -> set[str]: return set(re.findall(r'\w+', data.decode('utf-8', 'replace').lower()))

def check_note(out: bytes, original: bytes, query: str) -> None:
    "`out` is the one-line no-match note: it quotes the query and states the original's size truly."
    text = out.decode('utf-8')
    m = NOTE.match(text)
    assert m, text[:300]
    assert json.loads(m['q']) == query.strip()
    assert int(m['bytes'].replace(',', '')) == len(original)
    tokens = int(m['tokens'].replace(',', ''))
    assert len(original) / 12 < tokens < len(original) / 1.5        # an o200k count of this text, not bytes or lines
    assert len(out) < 400 and original not in out


@pytest.fixture(scope='module')
def payload() -> bytes:
    return corpus_path('log_pytest_requests_failures.log').read_bytes()

QUERY = 'kubernetes zeppelin'


def test_library_says_nothing_matched_with_the_size(payload):
    assert not ({'kubernetes', 'zeppelin'} & words(payload))
    e = Engine(ccr.open_store(':memory:'))
    h = e.store.put(payload)
    check_note(e.retrieve_query(h, QUERY), payload, QUERY)
    assert e.retrieve_query(h, '  ') == payload                           # blank query: the exact original
    view = e.retrieve_query(h, 'timeout')                                # a match: a narrowed view, no note
    assert b'nothing matched' not in view and len(view) < len(payload)


def test_no_match_on_json_and_csv(payload):
    e = Engine(ccr.open_store(':memory:'))
    for name in ('json_pip_inspect.json', 'csv_faa_airports.csv'):
        data = corpus_path(name).read_bytes()
        assert 'qqxyzzy' not in words(data)
        check_note(e.retrieve_query(e.store.put(data), 'qqxyzzy'), data, 'qqxyzzy')
    nested = json.dumps({'settings': {'db': {'host': 'postgres.internal', 'pool': {'min': 2}}}}, indent=2).encode() * 1
    h = e.store.put(nested)
    assert e.retrieve_query(h, 'postgres pool') == nested               # words present, no records: the original
    assert e.retrieve_query(h, 'kafka').startswith(b'[caveman: nothing matched')


def test_cli_and_mcp_answer_like_the_library(payload, store_env):
    env = child_env(**store_env)
    env.pop('CAVEMAN_MCP_EPHEMERAL', None)
    handle = ccr.open_store(store_env['CAVEMAN_CCR_DB']).put(payload)
    lib = Engine(ccr.open_store(store_env['CAVEMAN_CCR_DB'])).retrieve_query(handle, QUERY)
    check_note(lib, payload, QUERY)

    exe = shutil.which('caveman')
    assert exe, 'the caveman console script is not on PATH: run through `make test`'
    cli = subprocess.run([exe, 'retrieve', handle, '--query', QUERY], capture_output=True, env=env, timeout=120)
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout == lib

    async def run():
        cmd = server_command()
        async with stdio_client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                res = await s.call_tool('caveman_retrieve', {'recovery_handle': handle, 'query': QUERY})
                assert not res.is_error, res.content[0].text
                return res.content[0].text
    assert asyncio.run(run()).encode('utf-8') == lib
