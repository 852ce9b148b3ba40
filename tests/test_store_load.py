"""The recovery store and caveman-mcp under load and faults (issue 11): many writers and readers on
one file, through the library, through 8 caveman-mcp servers driven by the official MCP SDK client and
through the CLI; a store deleted, replaced, read-only or unreadable while in use; the retrieve
ledger's memory; concurrent requests and cancellation; signals.

Every check reads the store with its own code or a fresh process. No test asserts a duration: the
ordering tests assert causality (which reply came first), and speed is measured in
benchmarks/bench_store.py."""
import asyncio, hashlib, json, os, signal, sqlite3, subprocess, sys, time, tracemalloc
from pathlib import Path

import pytest

from conftest import server_command, child_env
from _mcp_lines import Live, call, req, ok, tool_text
from test_ccr_multiprocess import digest, expected_handle, finish, payload, run as run_workers, seed, start

ROOT = Path(__file__).resolve().parent.parent


def clean_env(tmp_path, **extra) -> dict:
    "The test process's environment without caveman settings, the home in the temp dir, plus `extra`."
    return child_env(**{'CAVEMAN_HOME': str(tmp_path / 'home'), **extra})


def read_back(path: str, handles: list[str]) -> dict:
    "{handle: sha256 of its bytes or an error} read by a fresh Python process with plain sqlite3 (not caveman's code)."
    code = ('import hashlib, json, sqlite3, sys\n'
            'spec = json.load(sys.stdin)\n'
            'c = sqlite3.connect("file:" + spec["path"] + "?mode=ro", uri=True)\n'
            'out = {}\n'
            'for h in spec["handles"]:\n'
            '    row = c.execute("SELECT original FROM recoveries WHERE handle = ?", (h,)).fetchone()\n'
            '    out[h] = hashlib.sha256(row[0]).hexdigest() if row else "missing"\n'
            'print(json.dumps(out))\n')
    r = subprocess.run([sys.executable, '-c', code], input=json.dumps({'path': path, 'handles': handles}), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def totals_match(path: str):
    "The running total of retained bytes equals a fresh count over the rows (what the budget check relies on)."
    c = sqlite3.connect(f'file:{path}?mode=ro', uri=True)
    try:
        kept = c.execute("SELECT value FROM caveman_meta WHERE key = 'retained_bytes'").fetchone()
        counted = c.execute('''SELECT COALESCE((SELECT SUM(length(original) + COALESCE(length(metadata), 0)) FROM recoveries), 0) +
                               COALESCE((SELECT SUM(length(data) + length(dependencies_json)) FROM typed_objects), 0)''').fetchone()[0]
    finally: c.close()
    assert kept is not None and kept[0] == counted, (kept, counted)


# ---------------------------------------------------------------- many processes on one file

@pytest.mark.slow
def test_eight_writers_two_readers_five_runs(tmp_path):
    "8 processes x 500 puts (a third shared) with 2 readers, 5 runs on fresh files: no error of any kind, nothing lost, every handle byte-exact from a fresh process."
    n, size, env = 500, 8192, clean_env(tmp_path)
    for run_no in range(5):
        path = str(tmp_path / f'run{run_no}' / 'ccr.db')
        seeded = seed(path, [payload(9, i, size) for i in range(40)])
        future = [(expected_handle(payload(w, i, size)), digest(payload(w, i, size))) for w in range(8) for i in range(0, n, 7)]
        stop = str(tmp_path / f'stop{run_no}')
        t0 = time.time() + 2.0
        readers = [start({'role': 'read', 'path': path, 'seeded': seeded, 'future': future, 'stop': stop, 'start_at': t0}, env) for _ in range(2)]
        writers = [start({'role': 'put', 'worker': w, 'path': path, 'n': n, 'start_at': t0, 'max_size': size}, env) for w in range(8)]
        wouts = finish(writers, timeout=900)
        Path(stop).touch()
        routs = finish(readers, timeout=900)
        errors = [e for o in wouts + routs for e in o['errors']]
        assert errors == [], f'run {run_no}: {len(errors)} errors, first: {errors[:3]}'
        assert sum(o['mismatches'] for o in wouts + routs) == 0
        for w, out in enumerate(wouts): assert out['handles'] == [expected_handle(payload(w, i, size)) for i in range(n)]
        distinct = {expected_handle(payload(w, i, size)): digest(payload(w, i, size)) for w in range(8) for i in range(n)}
        distinct.update(dict(seeded))
        got = read_back(path, list(distinct))
        assert [h for h, d in distinct.items() if got[h] != d] == []
        totals_match(path)


async def _mcp_worker(env: dict, errlog, w: int, n: int) -> list:
    "One caveman-mcp server driven by the official SDK client: `n` compresses of payloads of its own; [(handle, sha256)] of those that returned a handle."
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    cmd = server_command()
    out = []
    async with stdio_client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env), errlog=errlog) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            for i in range(n):
                lines = [f'2026-05-0{1 + i % 9}T10:00:{k % 60:02d}Z INFO worker-{w} batch-{i} request {k} served in {k % 7} ms status=200'
                         for k in range(400)]
                text = '\n'.join(lines) + f'\nERROR worker-{w} batch-{i} ended with 1 failure\n'
                res = await s.call_tool('caveman_compress', {'input': text})
                assert not res.is_error, res.content[0].text
                p = json.loads(res.content[0].text)
                assert p['recovery_handle'] is not None, p    # a repetitive log always compresses
                out.append((p['recovery_handle'], hashlib.sha256(text.encode()).hexdigest()))
    return out


@pytest.mark.slow
def test_eight_mcp_servers_share_one_store(tmp_path):
    "8 caveman-mcp servers at once, each 40 compresses through the official SDK client: every returned handle resolves byte-exact in a fresh process."
    db = tmp_path / 'store' / 'ccr.db'
    env = clean_env(tmp_path, CAVEMAN_CCR_DB=str(db))
    errlog = open(tmp_path / 'servers.log', 'w+')
    async def all_servers(): return await asyncio.gather(*(_mcp_worker(env, errlog, w, 40) for w in range(8)))
    results = [x for r in asyncio.run(all_servers()) for x in r]
    assert len(results) == 320
    got = read_back(str(db), [h for h, _ in results])
    assert [h for h, d in results if got[h] != d] == []
    errlog.seek(0); log = errlog.read()
    assert 'database is locked' not in log and 'passing through' not in log, log[-2000:]
    totals_match(str(db))


@pytest.mark.slow
def test_cli_in_parallel(tmp_path):
    "8 `caveman compress` loops at once on one store: every handle in every report resolves byte-exact in a fresh process; no warning."
    db = tmp_path / 'store' / 'ccr.db'
    env = clean_env(tmp_path, CAVEMAN_CCR_DB=str(db))
    script = ('import json, subprocess, sys\n'
              'w = int(sys.argv[1]); out = []\n'
              'for i in range(8):\n'
              '    text = "".join(f"2026-05-01T10:00:{k % 60:02d}Z INFO cli-{w} item-{i} line {k} ok\\n" for k in range(300))\n'
              '    r = subprocess.run(["caveman", "compress", "--type", "log"], input=text.encode(), capture_output=True, timeout=300)\n'
              '    rep = json.loads(r.stderr)\n'
              '    out.append([r.returncode, rep.get("recovery_handle"), rep.get("warnings", []), text])\n'
              'print(json.dumps(out))\n')
    bindir = str(Path(sys.executable).parent)
    procs = [subprocess.Popen([sys.executable, '-c', script, str(w)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**env, 'PATH': bindir + os.pathsep + env.get('PATH', '')}) for w in range(8)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=900)
        assert p.returncode == 0, err[-2000:]
        results += json.loads(out)
    assert [(c, w) for c, h, w, _ in results if c != 0 or w] == []
    expect = {h: hashlib.sha256(t.encode()).hexdigest() for _, h, _, t in results}
    assert None not in expect and len(expect) == 64
    got = read_back(str(db), list(expect))
    assert [h for h, d in expect.items() if got[h] != d] == []
    totals_match(str(db))


def test_store_written_by_older_caveman_is_migrated(tmp_path):
    "A store file of schema version 1 (no caveman_meta: every caveman before this one) opens, keeps its rows, and gets a running total equal to its rows."
    db = str(tmp_path / 'old.db')
    c = sqlite3.connect(db, isolation_level=None)
    c.execute('PRAGMA journal_mode=WAL')
    c.execute('''CREATE TABLE recoveries (handle TEXT PRIMARY KEY, created_at TEXT NOT NULL, content_type TEXT NOT NULL,
                 compressor TEXT NOT NULL, tokens_before INTEGER NOT NULL, tokens_after INTEGER NOT NULL, original BLOB NOT NULL, metadata BLOB)''')
    rows = [os.urandom(100 + i) for i in range(50)]
    for r in rows: c.execute("INSERT INTO recoveries VALUES (?, 't', 'text', 'text', 1, 1, ?, NULL)", (expected_handle(r), r))
    c.close(); os.chmod(db, 0o600)
    from caveman.ccr import open_store
    with open_store(db) as s:
        assert all(s.get(expected_handle(r)) == r for r in rows)
        assert s.used_bytes() == sum(map(len, rows))
        s.put(b'one more')
    totals_match(db)


# ---------------------------------------------------------------- the file behind the path changes

def _compress(s: Live, rid, text: str) -> dict:
    s.send(call(rid, 'caveman_compress', {'input': text}))
    reply = s.reply()
    assert reply['id'] == rid, reply
    t, is_error = tool_text(reply)
    assert not is_error, t
    return json.loads(t)

def _log(tag: str, n: int = 300) -> str:
    return ''.join(f'2026-05-01T10:00:{k % 60:02d}Z INFO {tag} request {k} served status=200\n' for k in range(n))


@pytest.mark.parametrize('what', ['file', 'home'])
def test_deleted_store_is_recreated_and_handles_resolve(tmp_path, what):
    "ccr.db (with its sidecars) or the whole CAVEMAN_HOME removed while caveman-mcp runs: the next compress's handle resolves in another process."
    home = tmp_path / 'home'
    with Live('caveman-mcp', CAVEMAN_HOME=str(home), CAVEMAN_MCP_EPHEMERAL='0') as s:
        first = _compress(s, 1, _log('before'))
        assert first['recovery_handle'] and (home / 'ccr.db').exists()
        if what == 'home':
            for f in home.iterdir(): f.unlink()
            home.rmdir()
        else:
            for f in home.glob('ccr.db*'): f.unlink()
        text = _log('after')
        second = _compress(s, 2, text)
        assert second['recovery_handle']
        got = read_back(str(home / 'ccr.db'), [second['recovery_handle']])
        assert got[second['recovery_handle']] == hashlib.sha256(text.encode()).hexdigest()
        assert s.close() == 0


def test_replaced_store_is_followed(tmp_path):
    "ccr.db replaced by another store file while caveman-mcp runs: handles of the new file resolve through the server, new handles land in it."
    home = tmp_path / 'home'
    with Live('caveman-mcp', CAVEMAN_HOME=str(home), CAVEMAN_MCP_EPHEMERAL='0') as s:
        _compress(s, 1, _log('before'))
        other = tmp_path / 'other.db'
        c = sqlite3.connect(other, isolation_level=None)
        c.execute('''CREATE TABLE recoveries (handle TEXT PRIMARY KEY, created_at TEXT NOT NULL, content_type TEXT NOT NULL,
                     compressor TEXT NOT NULL, tokens_before INTEGER NOT NULL, tokens_after INTEGER NOT NULL, original BLOB NOT NULL, metadata BLOB)''')
        c.execute("INSERT INTO recoveries VALUES (?, 't', 'text', 'text', 1, 1, ?, NULL)", (expected_handle(b'in the other file'), b'in the other file'))
        c.close(); os.chmod(other, 0o600)
        os.replace(other, home / 'ccr.db')
        s.send(call(2, 'caveman_retrieve', {'recovery_handle': expected_handle(b'in the other file')}))
        assert tool_text(s.reply()) == ('in the other file', False)
        text = _log('after the replace')
        h = _compress(s, 3, text)['recovery_handle']
        assert read_back(str(home / 'ccr.db'), [h])[h] == hashlib.sha256(text.encode()).hexdigest()
        assert s.close() == 0


# ---------------------------------------------------------------- stores the server may only read

def _seed_home(tmp_path) -> tuple[Path, str]:
    home = tmp_path / 'home'
    from caveman.ccr import open_store
    with open_store(str(home / 'ccr.db')) as st: h = st.put(b'the kept original', content_type='text', tokens_before=4, tokens_after=1)
    return home, h

def _retrieve(s: Live, rid, handle) -> tuple[str, bool]:
    s.send(call(rid, 'caveman_retrieve', {'recovery_handle': handle}))
    return tool_text(s.reply())


@pytest.mark.parametrize('case', ['mode-0400', 'other-user-0644', 'budget-0', 'budget-abc'])
def test_read_only_store_still_retrieves(tmp_path, case):
    "A store the server may read but not write: existing handles resolve, compress passes through (no handle), the file is left as the operator made it."
    home, h = _seed_home(tmp_path)
    db, extra = home / 'ccr.db', {}
    if case == 'mode-0400': os.chmod(db, 0o400)
    elif case == 'other-user-0644':
        if os.geteuid() != 0: pytest.fail('this case needs root to give the file to another user')
        os.chown(db, 65534, 65534); os.chmod(db, 0o644)
    else: extra['CAVEMAN_CCR_MAX_BYTES'] = case.split('-')[1]
    before = os.stat(db)
    with Live('caveman-mcp', stderr=subprocess.PIPE, CAVEMAN_HOME=str(home), CAVEMAN_MCP_EPHEMERAL='0', **extra) as s:
        assert _retrieve(s, 1, h) == ('the kept original', False)
        p = _compress(s, 2, _log('while read-only'))
        assert p['recovery_handle'] is None and p['ratio'] == 0
        assert s.close() == 0
        err = s.p.stderr.read().decode()
    after = os.stat(db)
    assert (after.st_mode, after.st_uid) == (before.st_mode, before.st_uid)
    assert 'Traceback' not in err
    if case.startswith('budget'):
        assert 'level=ERROR' in err and 'CAVEMAN_CCR_MAX_BYTES' in err, err


def test_unreadable_store_is_store_unavailable_not_unknown_handle(tmp_path):
    "A store file that is not a database: retrieve says cave_store_unavailable with the cause, never cave_unknown_handle."
    home = tmp_path / 'home'; home.mkdir(mode=0o700)
    (home / 'ccr.db').write_bytes(b'this is not an SQLite database\n' * 200); os.chmod(home / 'ccr.db', 0o600)
    with Live('caveman-mcp', CAVEMAN_HOME=str(home), CAVEMAN_MCP_EPHEMERAL='0') as s:
        text, is_error = _retrieve(s, 1, 'ccr_' + '1' * 32)
        assert is_error and json.loads(text)['error'] == 'cave_store_unavailable' and 'not a database' in json.loads(text)['message'], text
        assert s.close() == 0


def test_lone_surrogate_handle_is_an_argument_error():
    with Live('caveman-mcp') as s:
        s.send(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"caveman_retrieve","arguments":{"recovery_handle":"\\udfff"}}}')
        text, is_error = tool_text(s.reply())
        assert is_error and json.loads(text)['error'] == 'cave_invalid_arguments', text
        assert s.close() == 0


def test_cli_retrieve_to_dev_full_is_a_clean_error(tmp_path):
    if not os.path.exists('/dev/full'): pytest.fail('/dev/full is needed')
    home, h = _seed_home(tmp_path)
    with open('/dev/full', 'wb') as full:
        r = subprocess.run([str(Path(sys.executable).parent / 'caveman'), 'retrieve', h], stdout=full, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, env=clean_env(tmp_path), timeout=120)
    assert r.returncode == 1 and b'Traceback' not in r.stderr, r.stderr
    assert json.loads(r.stderr)['error'] == 'cave_output_failed'


# ---------------------------------------------------------------- the ledger's memory

def test_ledger_memory_is_bounded_with_1000_large_queries():
    "1,000 retrieves with distinct 256 KiB queries (256 MB of query text): what the session keeps grows by less than 1,000 x 160 bytes + 64 KiB."
    from caveman import ccr
    from caveman.engine import Engine
    from caveman.mcp.tools import Tools, RetrieveLedger
    eng = Engine(ccr.open_store(':memory:'))
    original = ''.join(f'{{"id": {i}, "state": "open", "word": "w{i}x"}}\n' for i in range(200))
    h = eng.store.put(original.encode())
    tools = Tools(eng, RetrieveLedger())
    for i in range(6): tools.retrieve({'recovery_handle': h, 'query': f'w{i}x'})   # warm up: views, then payout
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for i in range(1000):
        q = f'w{i}x ' + hashlib.sha256(str(i).encode()).hexdigest() * (256 * 1024 // 64)
        out = tools.retrieve({'recovery_handle': h, 'query': q})
        assert out.endswith(original)
        del q, out
    grown = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert grown < 1000 * 160 + 64 * 1024, grown


# ---------------------------------------------------------------- concurrency and cancellation

def big_log(mib: int = 16) -> str:
    "A log of about `mib` MiB whose lines differ, so the log compressor has work to do."
    line = '2026-05-01T10:00:{s:02d}Z INFO worker-{w} request {k} served in {m} ms path=/api/v1/items/{k} status=200\n'
    out, n, k = [], 0, 0
    while n < mib << 20:
        l = line.format(s=k % 60, w=k % 8, k=k, m=k % 97); out.append(l); n += len(l); k += 1
    return ''.join(out)


def test_ping_and_small_call_answered_before_a_16_mib_compress(tmp_path):
    "While a 16 MiB compress runs, a ping and a stats call sent after it are answered before it (causality, not a timer)."
    text = big_log()
    with Live('caveman-mcp', CAVEMAN_MCP_MAX_INBOUND_BYTES=str(64 << 20), CAVEMAN_HOME=str(tmp_path / 'home'), CAVEMAN_MCP_EPHEMERAL='0') as s:
        s.send(call(1, 'caveman_compress', {'input': text}), req(2), call(3, 'caveman_stats', {}))
        first_two = [s.reply(timeout=900)['id'] for _ in range(2)]
        assert sorted(first_two) == [2, 3], first_two      # both answered while 1 had not been
        s.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}')
        assert s.close() == 0


def test_cancelled_compress_is_never_answered_and_frees_its_worker(tmp_path):
    "One worker: a 16 MiB compress is cancelled; it is never answered, its original is never stored, and the next tool call on the same (only) worker is answered."
    text = big_log()
    home = tmp_path / 'home'
    with Live('caveman-mcp', CAVEMAN_MCP_MAX_INBOUND_BYTES=str(64 << 20), CAVEMAN_HOME=str(home), CAVEMAN_MCP_EPHEMERAL='0',
              CAVEMAN_MCP_WORKERS='1') as s:
        _compress(s, 0, _log('warm'))                       # the engine and store are built
        s.send(call(1, 'caveman_compress', {'input': text}), req(2))
        assert s.reply(timeout=600) == ok(2)
        s.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}')
        after = _log('after the cancel')
        s.send(call(3, 'caveman_compress', {'input': after}))
        reply = s.reply(timeout=600)
        assert reply['id'] == 3, reply                       # not 1: the cancelled one is never answered
        h3 = json.loads(tool_text(reply)[0])['recovery_handle']
        s.p.stdin.close()
        assert s.lines.get(timeout=600) is None              # nothing more: id 1 never answered
        assert s.p.wait(timeout=60) == 0
    got = read_back(str(home / 'ccr.db'), [expected_handle(text.encode()), h3])
    assert got[expected_handle(text.encode())] == 'missing'
    assert got[h3] == hashlib.sha256(after.encode()).hexdigest()


@pytest.mark.parametrize('fault', ['hold-the-logging-lock', 'stuck-in-c'])
def test_a_cancelled_call_never_holds_the_exit(tmp_path, fault):
    "A cancelled call that left a lock held (the logging module's, as an interrupt landing between its acquire and its try does) or that is stuck in C code does not keep the server alive after EOF: exit 0, after at most the grace for cancelled calls."
    started = tmp_path / 'started'
    with Live('caveman-mcp+faults', CAVEMAN_FAULT_STARTED=str(started), CAVEMAN_HOME=str(tmp_path / 'home')) as s:
        s.send(call(1, 'caveman_toon_decode', {'input': fault}))
        deadline = time.monotonic() + 120
        while not started.exists():
            assert time.monotonic() < deadline and s.p.poll() is None, 'the planted fault never started'
            time.sleep(0.05)
        s.send(req(2)); assert s.reply() == ok(2)
        s.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}')
        assert s.close(timeout=90) == 0       # fails on the old server: it waits for call 1 or for the lock forever


@pytest.mark.parametrize('sig,code', [(signal.SIGTERM, 0), (signal.SIGINT, 130)])
def test_signal_ends_the_server_quietly_with_the_store_closed(tmp_path, sig, code):
    "SIGTERM exits 0 and SIGINT 130, no traceback, every stdout line whole JSON, the store closed (its WAL checkpointed and removed)."
    home = tmp_path / 'home'
    with Live('caveman-mcp', stderr=subprocess.PIPE, CAVEMAN_HOME=str(home), CAVEMAN_MCP_EPHEMERAL='0') as s:
        h = _compress(s, 1, _log('before the signal'))['recovery_handle']
        assert (home / 'ccr.db-wal').exists()
        s.send(req(2)); assert s.reply() == ok(2)
        s.p.send_signal(sig)
        assert s.p.wait(timeout=60) == code
        while (line := s.lines.get(timeout=60)) is not None: json.loads(line)
        err = s.p.stderr.read().decode()
    assert 'Traceback' not in err and 'KeyboardInterrupt' not in err, err
    assert not (home / 'ccr.db-wal').exists()
    assert read_back(str(home / 'ccr.db'), [h])[h] != 'missing'


def test_sigterm_during_a_compress_exits_cleanly(tmp_path):
    "SIGTERM while a 16 MiB compress runs: exit 0 quietly, the compress unanswered, stdout whole lines only."
    text = big_log()
    with Live('caveman-mcp', stderr=subprocess.PIPE, CAVEMAN_MCP_MAX_INBOUND_BYTES=str(64 << 20), CAVEMAN_HOME=str(tmp_path / 'home'),
              CAVEMAN_MCP_EPHEMERAL='0') as s:
        s.send(call(1, 'caveman_compress', {'input': text}), req(2))
        assert s.reply(timeout=600) == ok(2)
        s.p.send_signal(signal.SIGTERM)
        assert s.p.wait(timeout=120) == 0
        while (line := s.lines.get(timeout=60)) is not None: assert line.endswith(b'\n') and json.loads(line)['id'] != 1
        err = s.p.stderr.read().decode()
    assert 'Traceback' not in err, err
