"""The recovery store on a real PostgreSQL server (issue 19): many processes, the budget under
concurrency, faults (server killed and restarted, dropped connection, read-only server, statement
timeout, unreachable at start-up), two caveman-mcp servers sharing one database, and the migration of
a SQLite store. The store contract itself (both backends) is tests/test_store_contract.py.

The server is started by the `pg` fixture (tests/_pg.py: initdb + pg_ctl on a loopback port). The
multi-process workers are those of tests/test_ccr_multiprocess.py: `open_store` takes the URL as its
path. Checks read the database with plain psycopg and hashlib, not caveman's code.
"""
import asyncio, hashlib, json, os, subprocess, sys, threading, time
from pathlib import Path

import pytest

from caveman import ccr
from caveman.engine import Engine, RecoveryStoreError
from conftest import server_command, child_env
from _mcp_lines import Live, call, tool_text
from _pg import PASSWORD, PgServer
from test_ccr_multiprocess import digest, expected_handle, finish, payload, run as run_workers, seed, start


def clean_env(tmp_path, **extra) -> dict:
    return child_env(**{'CAVEMAN_HOME': str(tmp_path / 'home'), **extra})


def table_truth(pg, url) -> tuple[dict, int, int]:
    "({handle: sha256 hex of the stored original}, retained bytes summed from the rows, the running total) read with plain SQL."
    rows = pg.sql(url, "SELECT handle, encode(sha256(original), 'hex') FROM recoveries")
    summed = pg.sql(url, '''SELECT COALESCE((SELECT SUM(length(original) + COALESCE(length(metadata), 0)) FROM recoveries), 0)
                                 + COALESCE((SELECT SUM(length(data) + length(dependencies_json)) FROM typed_objects), 0)''')[0][0]
    kept = pg.sql(url, "SELECT value FROM caveman_meta WHERE key = 'retained_bytes'")[0][0]
    return dict(rows), int(summed), int(kept)


def log_text(tag: str, n: int = 300) -> str:
    return ''.join(f'2026-05-01T10:00:{k % 60:02d}Z INFO {tag} request {k} served status=200\n' for k in range(n))


# ---------------------------------------------------------------- many processes

@pytest.mark.slow
def test_eight_processes_500_puts_with_readers(pg, tmp_path):
    "8 processes x 500 puts (a third the same bytes in every process) plus 2 readers on one database: 0 lost, 0 errors, the total equals the rows."
    url, env = pg.url(), clean_env(tmp_path)
    seeded = seed(url, [payload(9, i, 8192) for i in range(60)])
    future = [(expected_handle(payload(w, i, 8192)), digest(payload(w, i, 8192))) for w in range(2) for i in range(0, 500, 5)]
    stop, t0 = str(tmp_path / 'stop'), time.time() + 2
    readers = [start({'role': 'read', 'path': url, 'seeded': seeded, 'future': future, 'stop': stop, 'start_at': t0}, env) for _ in range(2)]
    writers = [start({'role': 'put', 'worker': w, 'path': url, 'n': 500, 'start_at': t0, 'max_size': 8192}, env) for w in range(8)]
    wouts = finish(writers, timeout=600)
    Path(stop).touch()
    routs = finish(readers, timeout=120)
    for w, out in enumerate(wouts):
        assert out['errors'] == [] and out['mismatches'] == 0, out['errors'][:5]
        assert out['handles'] == [expected_handle(payload(w, i, 8192)) for i in range(500)]
    for out in routs:
        assert out['errors'] == [] and out['mismatches'] == 0 and out['reads'] > 0, out['errors'][:5]
    distinct = {expected_handle(payload(w, i, 8192)): digest(payload(w, i, 8192)) for w in range(8) for i in range(500)}
    distinct.update(dict(seeded))
    stored, summed, kept = table_truth(pg, url)
    assert len(stored) == len(distinct)
    assert {h: d for h, d in stored.items()} == distinct                 # every byte of every row, hashed by the server
    assert summed == kept


@pytest.mark.slow
def test_budget_never_exceeded_under_concurrent_puts(pg, tmp_path):
    "8 processes race 40 puts of 4 KiB each for a 256 KiB budget: the rows never pass it, the total equals the rows, the rest are BudgetExceeded and nothing else."
    url, budget, size = pg.url(), 256 * 1024, 4096
    env = clean_env(tmp_path, CAVEMAN_CCR_MAX_BYTES=str(budget))
    t0 = time.time() + 2
    outs = run_workers([{'role': 'budget', 'path': url, 'start_at': t0, 'payloads': [[f'b{w}-{i}', size] for i in range(40)]} for w in range(8)], env)
    outcomes = [o for out in outs for o in out['outcomes']]
    assert set(outcomes) <= {'ok', 'budget'}, [o for o in outcomes if o not in ('ok', 'budget')][:5]
    stored, summed, kept = table_truth(pg, url)
    assert summed == kept == outcomes.count('ok') * size == len(stored) * size
    assert summed <= budget and budget - summed < size                   # filled, never passed
    assert outcomes.count('budget') == 8 * 40 - outcomes.count('ok') > 0


# ---------------------------------------------------------------- faults

def test_dropped_connection_reconnects(pg):
    url = pg.url()
    with ccr.open_store(url, mode='auto') as st:
        h = st.put(b'before the drop')
        pid = st._conn.info.backend_pid
        pg.sql(pg.base_url(), 'SELECT pg_terminate_backend(%s)', (pid,))
        assert st.get(h) == b'before the drop'                          # the failed read is tried once more on a new connection
        assert st._conn.info.backend_pid != pid
        assert st.get(st.put(b'after the drop')) == b'after the drop'


def test_read_only_server_reads_and_passes_through(pg):
    "A server that only reads (default_transaction_read_only, like a standby): handles resolve, compress passes through with one warning, puts are ReadOnly."
    url = pg.url()
    with ccr.open_store(url) as w: h = w.put(b'written before', content_type='text', tokens_before=3, tokens_after=1)
    ro_url = url + '%20-cdefault_transaction_read_only%3Don'
    with pytest.raises(ccr.ReadOnly): ccr.open_store(ro_url, mode='rw')
    with ccr.open_store(ro_url, mode='auto') as st:
        assert 'read-only' in st.read_only and not st.unavailable
        assert st.get(h) == b'written before'
        with pytest.raises(ccr.ReadOnly): st.put(b'new')
        with pytest.raises(RecoveryStoreError) as e: Engine(st).compress(log_text('ro'))
        r = e.value.result
        assert (r.ratio, r.recovery_handle, r.output) == (0, '', log_text('ro').encode())
    with ccr.open_store(url, mode='auto') as st:                        # the same session turned read-only, then back
        st._conn.execute('SET default_transaction_read_only = on')
        with pytest.raises(ccr.ReadOnly): st.put(b'refused while read-only')
        assert st.read_only
        assert st.get(st.put(b'written again')) == b'written again'     # the next write looks again on a new connection
        assert st.read_only == ''


def test_statement_timeout_is_unavailable_not_unknown(pg):
    url = pg.url()
    with ccr.open_store(url) as w: h = w.put(b'locked away')
    import psycopg
    with ccr.open_store(url + '%20-cstatement_timeout%3D300', mode='auto') as st, psycopg.connect(url) as locker:
        locker.execute('LOCK TABLE recoveries IN ACCESS EXCLUSIVE MODE')     # held until the rollback below
        with pytest.raises(ccr.StoreError, match='timed out') as e: st.get(h)
        assert not isinstance(e.value, ccr.NotFound)
        with pytest.raises(RecoveryStoreError): Engine(st).compress(log_text('timeout'))
        locker.rollback()
        assert st.get(h) == b'locked away'


def test_unreachable_at_start_up_then_reachable(tmp_path):
    "A store opened in auto mode before the server runs: compress passes through, retrieve is unavailable; once the server is up, both work without reopening."
    server = PgServer(); server.stop()
    try:
        url = server.base_url()
        st = ccr.open_store(url, mode='auto')
        assert st.unavailable and PASSWORD not in st.unavailable and PASSWORD not in repr(st) and '***' in st.path
        with pytest.raises(RecoveryStoreError) as e: Engine(st).compress(log_text('down'))
        assert e.value.result.recovery_handle == '' and PASSWORD not in str(e.value)
        with pytest.raises(ccr.StoreError) as e: st.get(expected_handle(b'x'))
        assert not isinstance(e.value, ccr.NotFound) and PASSWORD not in str(e.value)
        server.start()
        r = Engine(st).compress(log_text('up'))
        assert r.recovery_handle and st.get(r.recovery_handle) == log_text('up').encode() and st.unavailable == ''
        st.close()
    finally: server.close()


def _compress(s: Live, rid, text: str) -> dict:
    s.send(call(rid, 'caveman_compress', {'input': text}))
    reply = s.reply()
    t, is_error = tool_text(reply)
    assert not is_error, t
    return json.loads(t)


@pytest.mark.slow
def test_server_killed_and_restarted_mid_run(tmp_path):
    "caveman-mcp on a database that is killed (pg_ctl -m immediate) mid-run: compress passes through honestly while it is down, retrieve says cave_store_unavailable; after the restart the same process stores and resolves again, old handles included; the password is never logged."
    server = PgServer()
    errlog = open(tmp_path / 'server.log', 'w+b')
    try:
        with Live('caveman-mcp', stderr=errlog, CAVEMAN_CCR_URL=server.base_url(), CAVEMAN_MCP_EPHEMERAL='0', CAVEMAN_HOME=str(tmp_path / 'home')) as s:
            before = [_compress(s, i, log_text(f'before {i}')) for i in range(5)]
            assert all(p['recovery_handle'] for p in before)
            server.stop('immediate')
            down = [_compress(s, 10 + i, log_text(f'down {i}')) for i in range(3)]
            for i, p in enumerate(down):
                assert (p['recovery_handle'], p['ratio'], p['compressed']) == (None, 0, log_text(f'down {i}'))
            s.send(call(20, 'caveman_retrieve', {'recovery_handle': before[0]['recovery_handle']}))
            text, is_error = tool_text(s.reply())
            assert is_error and 'cave_store_unavailable' in text and 'cave_unknown_handle' not in text and PASSWORD not in text
            server.start()
            after = _compress(s, 30, log_text('after'))
            assert after['recovery_handle']
            for i, p in enumerate(before):
                s.send(call(40 + i, 'caveman_retrieve', {'recovery_handle': p['recovery_handle']}))
                assert tool_text(s.reply()) == (log_text(f'before {i}'), False)
            assert s.close() == 0
        errlog.seek(0); log = errlog.read().decode(errors='replace')
        assert 'passing through' in log and PASSWORD not in log
    finally: server.close()


# ---------------------------------------------------------------- two servers, one database

async def _session(url: str, env: dict, errlog, work):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    cmd = server_command()
    async with stdio_client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env), errlog=errlog) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            return await work(s)


@pytest.mark.slow
def test_two_mcp_servers_share_the_database(pg, tmp_path):
    "Two caveman-mcp processes (stdio; the HTTP transport is not in main yet) on one database, driven by the official SDK client: handles minted by each resolve through the other."
    url = pg.url()
    env = clean_env(tmp_path, CAVEMAN_CCR_URL=url)
    errlog = open(tmp_path / 'servers.log', 'w+')
    texts = {w: [log_text(f'server {w} batch {i}') for i in range(10)] for w in (0, 1)}
    minted = {}
    async def both():
        async def compress(w, s):
            out = []
            for t in texts[w]:
                p = json.loads((await s.call_tool('caveman_compress', {'input': t})).content[0].text)
                assert p['recovery_handle'], p
                out.append(p['recovery_handle'])
            return out
        a, b = await asyncio.gather(_session(url, env, errlog, lambda s: compress(0, s)), _session(url, env, errlog, lambda s: compress(1, s)))
        minted[0], minted[1] = a, b
        async def resolve(handles, s):
            return [(await s.call_tool('caveman_retrieve', {'recovery_handle': h})).content[0].text for h in handles]
        return await asyncio.gather(_session(url, env, errlog, lambda s: resolve(minted[1], s)), _session(url, env, errlog, lambda s: resolve(minted[0], s)))
    via0, via1 = asyncio.run(both())
    assert via0 == texts[1] and via1 == texts[0]
    assert [expected_handle(t.encode()) for t in texts[0]] == minted[0]
    errlog.seek(0); assert 'passing through' not in errlog.read()


# ---------------------------------------------------------------- migration

def test_migrate_sqlite_store_every_hash_verified(pg, tmp_path):
    "`caveman store migrate` copies a SQLite store (recoveries with metadata and measurements, typed objects), every row verified; a second run resumes and copies nothing; a corrupt source row stops it."
    db = str(tmp_path / 'local' / 'ccr.db')
    items = [payload(3, i, 20000) for i in range(120)]
    with ccr.open_store(db) as local:
        hs = [local.put(d, content_type='log', compressor='log', tokens_before=i + 10, tokens_after=i, metadata=b'm' if i % 2 else None) for i, d in enumerate(items)]
        oids = [local.put_object(f'object {i}'.encode(), 'CommandResult', 'sess', source=str(i), dependencies=[hs[i]]) for i in range(7)]
        local.set_lifecycle(oids[0], 'archived')
        want_summary = local.summary()
    url = pg.url()
    env = clean_env(tmp_path)
    cmd = [str(Path(sys.executable).parent / 'caveman'), 'store', 'migrate', '--from', f'sqlite:{db}', '--to', url]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out['recoveries'], out['objects'], out['copied'], out['skipped'], out['verified']) == (120, 7, 127, 0, 127)
    assert PASSWORD not in r.stdout + r.stderr
    stored, summed, kept = table_truth(pg, url)
    assert stored == {expected_handle(d): digest(d) for d in items} and summed == kept
    with ccr.open_store(url) as team:
        assert team.summary() == want_summary
        assert team.get_object(oids[0]).lifecycle == 'archived' and team.get_object(oids[3]).dependencies == (hs[3],)
        assert team.get_metadata(hs[1]) == b'm'
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)   # resumable: nothing left to copy
    assert r.returncode == 0 and json.loads(r.stdout)['copied'] == 0 and json.loads(r.stdout)['skipped'] == 127
    import sqlite3                                                        # a source row whose bytes do not match its handle
    c = sqlite3.connect(db); c.execute("INSERT INTO recoveries VALUES ('ccr_00000000000000000000000000000000', 't', 'text', 'text', 1, 1, x'00', NULL)"); c.commit(); c.close()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and json.loads(r.stderr)['error'] == 'cave_migrate_failed' and PASSWORD not in r.stderr
    assert 'ccr_00000000000000000000000000000000' not in table_truth(pg, url)[0]


def test_cli_store_url_option(pg, tmp_path):
    "`caveman --store-url URL compress` stores in the database; `retrieve` through CAVEMAN_CCR_URL gives the original back."
    url, env = pg.url(), clean_env(tmp_path)
    exe = str(Path(sys.executable).parent / 'caveman')
    text = log_text('cli').encode()
    r = subprocess.run([exe, '--store-url', url, 'compress', '-'], input=text, capture_output=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    h = json.loads(r.stderr)['recovery_handle']
    assert pg.sql(url, "SELECT encode(sha256(original), 'hex') FROM recoveries WHERE handle = %s", (h,)) == [(digest(text),)]
    r = subprocess.run([exe, 'retrieve', h], capture_output=True, timeout=120, env={**env, 'CAVEMAN_CCR_URL': url})
    assert (r.returncode, r.stdout) == (0, text)
    assert not list((tmp_path / 'home').glob('ccr.db*'))                 # the local file store was never made


# ---------------------------------------------------------------- looking after the shared store

def _cav(env, *args, stdin=None):
    return subprocess.run([str(Path(sys.executable).parent / 'caveman'), *args], input=stdin, capture_output=True, timeout=120, env=env)


def test_cli_store_verbs_on_the_database(pg, tmp_path):
    "`caveman store info|list|rm|prune|vacuum` on a PostgreSQL store: the figures agree with the rows read by plain SQL, a read is noted, prune removes the least recently read, the running total follows every removal, and no output names the password."
    url = pg.url()
    env = clean_env(tmp_path, CAVEMAN_CCR_URL=url)
    texts = [log_text(f'upkeep {i}', 200 + 50 * i).encode() for i in range(3)]
    handles = []
    for t in texts:
        r = _cav(env, 'compress', '-', stdin=t)
        assert r.returncode == 0, r.stderr
        handles.append(json.loads(r.stderr)['recovery_handle'])
    assert all(handles)
    rows = json.loads(_cav(env, 'store', 'list', '--json').stdout)
    assert {r['handle']: r['bytes'] for r in rows} == {h: len(t) for h, t in zip(handles, texts)}
    assert all(r['last_read'] == '' for r in rows)
    info = json.loads(_cav(env, 'store', 'info', '--json').stdout)
    stored, summed, kept = table_truth(pg, url)
    assert info['count'] == 3 == len(stored) and info['stored_bytes'] == summed == kept and info['file_bytes'] > 0
    assert PASSWORD not in info['path'] and '***' in info['path']
    keep = handles[2]                                                     # read one: it is noted, and survives a prune
    assert _cav(env, 'retrieve', keep).stdout == texts[2]
    assert pg.sql(url, 'SELECT handle FROM caveman_reads') == [(keep,)]
    text_list = _cav(env, 'store', 'list').stdout.decode()
    assert text_list.count('read never') == 2 and PASSWORD not in text_list
    r = _cav(env, 'store', 'prune', '--max-bytes', str(len(texts[2]) + 100))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)['removed'] == 2
    stored, summed, kept = table_truth(pg, url)
    assert list(stored) == [keep] and summed == kept == len(texts[2])
    gone = _cav(env, 'retrieve', handles[0])
    assert gone.returncode != 0 and json.loads(gone.stderr)['error'] == 'cave_unknown_handle'
    r = _cav(env, 'store', 'rm', f'<<ccr:{keep}>>', handles[0])           # one there, one already gone
    assert r.returncode != 0 and json.loads(r.stderr)['error'] == 'cave_unknown_handle'
    stored, summed, kept = table_truth(pg, url)
    assert stored == {} and summed == kept == 0 and pg.sql(url, 'SELECT COUNT(*) FROM caveman_reads') == [(0,)]
    v = json.loads(_cav(env, 'store', 'vacuum').stdout)
    assert v['file_bytes_after'] > 0
    for out in (r.stdout + r.stderr, json.dumps(v)): assert PASSWORD.encode() not in (out if isinstance(out, bytes) else out.encode())


@pytest.mark.slow
def test_two_http_servers_share_the_database(pg, tmp_path):
    "Two `caveman-mcp --http` processes on one database, each driven by the official SDK client over Streamable HTTP: handles minted by each resolve through the other, and the reads are noted for both."
    from mcp import Client
    from _http_server import HttpServer
    url = pg.url()
    texts = {w: [log_text(f'http server {w} batch {i}') for i in range(6)] for w in (0, 1)}
    with HttpServer(tmp_path, CAVEMAN_CCR_URL=url) as a, HttpServer(tmp_path, CAVEMAN_CCR_URL=url) as b:
        async def compress(srv, w):
            async with Client(srv.url, mode='legacy', read_timeout_seconds=60) as c:
                return [json.loads((await c.call_tool('caveman_compress', {'input': t})).content[0].text)['recovery_handle'] for t in texts[w]]
        async def resolve(srv, handles):
            async with Client(srv.url, mode='auto', read_timeout_seconds=60) as c:
                return [(await c.call_tool('caveman_retrieve', {'recovery_handle': h})).content[0].text for h in handles]
        async def run():
            minted = await asyncio.gather(compress(a, 0), compress(b, 1))
            return minted, await asyncio.gather(resolve(a, minted[1]), resolve(b, minted[0]))
        minted, (via_a, via_b) = asyncio.run(run())
        assert via_a == texts[1] and via_b == texts[0]
        assert minted[0] == [expected_handle(t.encode()) for t in texts[0]]
        assert a.stop() == 0 and b.stop() == 0, a.log() + b.log()
        assert PASSWORD not in a.log(None) + b.log(None)
    stored, summed, kept = table_truth(pg, url)
    assert set(stored) == set(minted[0]) | set(minted[1]) and summed == kept
    assert {h for (h,) in pg.sql(url, 'SELECT handle FROM caveman_reads')} == set(stored)
