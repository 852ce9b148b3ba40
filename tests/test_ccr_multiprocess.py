"""Many OS processes on one CCR file (SPEC §4, reference §4.3–4.5): nothing lost, never "database is
locked", readers undisturbed by writers, and the budget holds across processes.

Each worker is this file run as a script (`python test_ccr_multiprocess.py < spec.json`), so the
payload recipe is shared by the workers and by the checks. Workers report JSON on stdout and record
every exception instead of dying, so a failure shows what went wrong where."""
import hashlib, json, os, subprocess, sys, time
from pathlib import Path
from conftest import child_env

HERE = Path(__file__).resolve()
N_WORKERS, N_PUTS = 4, 200
MiB = 1 << 20


def payload(worker: int, i: int, max_size: int = 65536) -> bytes:
    "Deterministic payload; every third item is the same bytes for all workers (overlap), the rest are the worker's own. 10 B .. `max_size` (64 KiB)."
    key = f'shared-{i}' if i % 3 == 0 else f'w{worker}-{i}'
    size = (i * 7919) % max_size
    block = hashlib.sha256(key.encode()).digest()
    return key.encode() + b'|' + (block * (size // 32 + 1))[:size]


def expected_handle(data: bytes) -> str:
    "Handle recomputed here from the definition (reference §4.1), independent of `caveman.ccr.handle_for`."
    return 'ccr_' + hashlib.sha256(data).digest()[:16].hex()


def digest(data: bytes) -> str: return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------- worker side (runs in a child process)

def _err(e: BaseException) -> str: return f'{type(e).__name__}: {e}'


def _wait_until(t: float):
    while time.time() < t: time.sleep(0.001)


def _worker_put(spec: dict) -> dict:
    from caveman.ccr import open_store
    w, out = spec['worker'], {'handles': [], 'errors': [], 'mismatches': 0}
    _wait_until(spec['start_at'])  # all workers open a fresh file at the same moment
    with open_store(spec['path']) as store:
        for i in range(spec['n']):
            data = payload(w, i, spec.get('max_size', 65536))
            try:
                h = store.put(data, content_type='text', compressor='text', tokens_before=len(data) // 4 + 1,
                              tokens_after=1, metadata=f'w{w}'.encode())
                out['handles'].append(h)
                if store.get(h) != data: out['mismatches'] += 1
                if i % 10 == 0: store.put_object(data, 'CommandResult', f'sess-{w}', source=f'item-{i}')
            except Exception as e: out['errors'].append(_err(e))
    return out


def _worker_read(spec: dict) -> dict:
    "Read the seeded handles (always present) and the writers' future handles (absent or exact) until told to stop."
    from caveman.ccr import open_store, NotFound
    out = {'reads': 0, 'found_new': 0, 'errors': [], 'mismatches': 0}
    seeded, future = spec['seeded'], spec['future']
    with open_store(spec['path']) as store:
        _wait_until(spec['start_at'])
        deadline = time.time() + 60
        while not os.path.exists(spec['stop']) and time.time() < deadline:
            for h, d in seeded:
                try:
                    if digest(store.get(h)) != d: out['mismatches'] += 1
                    out['reads'] += 1
                except Exception as e: out['errors'].append(_err(e))
            for h, d in future:
                try:
                    if digest(store.get(h)) != d: out['mismatches'] += 1
                    out['found_new'] += 1
                except NotFound: pass
                except Exception as e: out['errors'].append(_err(e))
            try: store.summary()
            except Exception as e: out['errors'].append(_err(e))
    return out


def _worker_verify(spec: dict) -> dict:
    from caveman.ccr import open_store
    out = {'bad': [], 'errors': []}
    with open_store(spec['path']) as store:
        for h, d in spec['expect']:
            try:
                if digest(store.get(h)) != d: out['bad'].append(h)
            except Exception as e: out['errors'].append(f'{h}: {_err(e)}')
        out['metadata'] = {h: store.get_metadata(h).decode() for h in spec.get('metadata_of', [])}
        out['sessions'] = {s: sorted(digest(o.data) for o in store.list_session_objects(s, limit=1000)) for s in spec.get('sessions', [])}
        out['summary'] = store.summary()
        out['used'] = store.used_bytes()
    return out


def _worker_budget(spec: dict) -> dict:
    "Try each payload once; report 'ok', 'budget' or the unexpected error, per payload."
    from caveman.ccr import open_store, BudgetExceeded
    out = {'outcomes': []}
    with open_store(spec['path']) as store:  # budget from CAVEMAN_CCR_MAX_BYTES
        _wait_until(spec['start_at'])
        for seed, size in spec['payloads']:
            data = (hashlib.sha256(seed.encode()).digest() * (size // 32 + 1))[:size]
            try: store.put(data, content_type='text', tokens_before=size // 4, tokens_after=1); out['outcomes'].append('ok')
            except BudgetExceeded: out['outcomes'].append('budget')
            except Exception as e: out['outcomes'].append(_err(e))
    return out


ROLES = {'put': _worker_put, 'read': _worker_read, 'verify': _worker_verify, 'budget': _worker_budget}

if __name__ == '__main__':
    spec = json.loads(sys.stdin.read())
    print(json.dumps(ROLES[spec['role']](spec)))
    sys.exit(0)


# ---------------------------------------------------------------- test side

import pytest


@pytest.fixture
def env(tmp_path):
    "Child environment: the store budget unset and the home pointed into the temp dir, so nothing touches ~/.caveman."
    return child_env(CAVEMAN_HOME=str(tmp_path / 'home'))


def start(spec: dict, env: dict) -> subprocess.Popen:
    "Start a worker; its spec goes on stdin (too long for a command line)."
    p = subprocess.Popen([sys.executable, str(HERE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, text=True)
    p.stdin.write(json.dumps(spec)); p.stdin.close()
    return p


def finish(procs, timeout: float = 180) -> list[dict]:
    outs = []
    for p in procs:
        p.stdin = None  # already written and closed
        out, err = p.communicate(timeout=timeout)
        assert p.returncode == 0, f'worker exited {p.returncode}: {err[-2000:]}'
        outs.append(json.loads(out))
    return outs


def run(specs, env) -> list[dict]: return finish([start(s, env) for s in specs])


def seed(path: str, items, max_bytes: int | None = None) -> list[tuple[str, str]]:
    from caveman.ccr import open_store
    with open_store(path, max_bytes=max_bytes) as store:
        return [(store.put(d, content_type='text', tokens_before=len(d) // 4 + 1, tokens_after=1), digest(d)) for d in items]


def test_concurrent_puts_lose_nothing(tmp_path, env):
    "4 processes x 200 puts (a third of them the same bytes in every process) on one fresh file, all started at once."
    path = str(tmp_path / 'store' / 'ccr.db')
    t0 = time.time() + 1.5
    outs = run([{'role': 'put', 'worker': w, 'path': path, 'n': N_PUTS, 'start_at': t0} for w in range(N_WORKERS)], env)
    for w, out in enumerate(outs):
        assert out['errors'] == [], out['errors'][:5]
        assert out['mismatches'] == 0
        assert out['handles'] == [expected_handle(payload(w, i)) for i in range(N_PUTS)]

    distinct = {expected_handle(payload(w, i)): payload(w, i) for w in range(N_WORKERS) for i in range(N_PUTS)}
    shared = [expected_handle(payload(0, i)) for i in range(0, N_PUTS, 3)]
    assert len(distinct) == N_WORKERS * N_PUTS - (N_WORKERS - 1) * len(shared)
    [v] = run([{'role': 'verify', 'path': path, 'expect': [(h, digest(d)) for h, d in distinct.items()],
                'metadata_of': shared, 'sessions': [f'sess-{w}' for w in range(N_WORKERS)]}], env)
    assert v['errors'] == [] and v['bad'] == []
    assert v['summary']['totals']['count'] == len(distinct)
    assert v['summary']['totals']['tokens_before'] == sum(len(d) // 4 + 1 for d in distinct.values())
    assert all(m in {f'w{w}' for w in range(N_WORKERS)} for m in v['metadata'].values())  # first-retained, never empty
    for w in range(N_WORKERS):
        assert v['sessions'][f'sess-{w}'] == sorted(digest(payload(w, i)) for i in range(0, N_PUTS, 10))
    for f in ('ccr.db', 'ccr.db-wal', 'ccr.db-shm'):
        p = tmp_path / 'store' / f
        if p.exists(): assert p.stat().st_mode & 0o777 == 0o600, f
    assert (tmp_path / 'store').stat().st_mode & 0o777 == 0o700
    assert not (tmp_path / 'home').exists()


def test_readers_while_writers_write(tmp_path, env):
    "2 writers put 200 new payloads each while 2 readers keep reading 60 seeded handles and polling for the writers' ones."
    path = str(tmp_path / 'ccr.db')
    seeded = seed(path, [payload(9, i) for i in range(60)])
    future = [(expected_handle(payload(w, i)), digest(payload(w, i))) for w in range(2) for i in range(N_PUTS)]
    stop = str(tmp_path / 'stop')
    t0 = time.time() + 1.5
    readers = [start({'role': 'read', 'path': path, 'seeded': seeded, 'future': future, 'stop': stop, 'start_at': t0}, env) for _ in range(2)]
    writers = [start({'role': 'put', 'worker': w, 'path': path, 'n': N_PUTS, 'start_at': t0}, env) for w in range(2)]
    wouts = finish(writers)
    Path(stop).touch()
    routs = finish(readers)
    for out in wouts: assert out['errors'] == [] and out['mismatches'] == 0
    for out in routs:
        assert out['errors'] == [], out['errors'][:5]
        assert out['mismatches'] == 0
        assert out['reads'] >= len(seeded)
    [v] = run([{'role': 'verify', 'path': path, 'expect': seeded + future}], env)
    assert v['errors'] == [] and v['bad'] == []
    assert v['summary']['totals']['count'] == len({h for h, _ in seeded} | {h for h, _ in future})  # seeded 'shared-' items overlap


def snapshot(path: str, env) -> dict:
    from caveman.ccr import open_store
    with open_store(path, max_bytes=MiB) as store:
        rows = store._conn.execute('SELECT handle, created_at, content_type, compressor, tokens_before, tokens_after, original, metadata FROM recoveries ORDER BY handle').fetchall()
        return {'rows': rows, 'used': store.used_bytes(), 'summary': store.summary()}


def test_over_budget_puts_change_nothing(tmp_path, env):
    "Budget 1 MiB holding 600 KiB: 4 processes each try three 500 KiB payloads -> all BudgetExceeded, store exactly as before."
    path = str(tmp_path / 'ccr.db')
    first = payload(0, 1) * 10  # ~ 80 KB
    big = (b'0123456789abcdef' * 64) * 600  # 600 KiB
    seeded = seed(path, [big, first], max_bytes=MiB)
    before = snapshot(path, env)
    env = {**env, 'CAVEMAN_CCR_MAX_BYTES': str(MiB)}
    outs = run([{'role': 'budget', 'path': path, 'start_at': time.time() + 1.0,
                 'payloads': [(f'w{w}-{k}', 500 * 1024) for k in range(3)]} for w in range(N_WORKERS)], env)
    assert [o['outcomes'] for o in outs] == [['budget'] * 3] * N_WORKERS
    after = snapshot(path, env)
    assert after == before
    [v] = run([{'role': 'verify', 'path': path, 'expect': seeded}], env)
    assert v['errors'] == [] and v['bad'] == []


def test_budget_race_admits_only_what_fits(tmp_path, env):
    "Empty 1 MiB store, 4 processes each put one 400 KiB payload at once: exactly two fit, the other two get BudgetExceeded."
    path = str(tmp_path / 'ccr.db')
    seed(path, [], max_bytes=MiB)
    env = {**env, 'CAVEMAN_CCR_MAX_BYTES': str(MiB)}
    specs = [{'role': 'budget', 'path': path, 'start_at': time.time() + 1.0, 'payloads': [(f'race-{w}', 400 * 1024)]} for w in range(N_WORKERS)]
    outcomes = sorted(o['outcomes'][0] for o in run(specs, env))
    assert outcomes == ['budget', 'budget', 'ok', 'ok']
    after = snapshot(path, env)
    assert len(after['rows']) == 2 and after['used'] == 2 * 400 * 1024 <= MiB


def _probe_write_lock(path: str) -> subprocess.CompletedProcess:
    "Another process tries to take the write lock without waiting."
    code = f'import sqlite3; c = sqlite3.connect({path!r}, timeout=0, isolation_level=None); c.execute("BEGIN IMMEDIATE")'
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_opening_again_in_process_keeps_sqlite_locks(tmp_path):
    "POSIX drops all of a process's locks on a file when it closes any descriptor of it: re-securing the files on a second open must not release the first connection's write lock."
    from caveman.ccr import open_store
    path = str(tmp_path / 'ccr.db')
    with open_store(path) as a:
        h = a.put(b'held')
        a._conn.execute('BEGIN IMMEDIATE')
        try:
            assert 'locked' in _probe_write_lock(path).stderr
            with open_store(path) as b: assert b.get(h) == b'held'  # secures db, -wal and -shm again
            probe = _probe_write_lock(path)
            assert probe.returncode != 0 and 'locked' in probe.stderr, probe.stderr
        finally: a._conn.execute('ROLLBACK')
    assert _probe_write_lock(path).returncode == 0


@pytest.mark.skipif(not hasattr(os, 'fork'), reason='needs fork()')
def test_store_refuses_use_after_fork(tmp_path):
    "A SQLite connection must not cross fork(): the child gets a clear StoreError, the parent's store keeps working."
    from caveman.ccr import open_store, StoreError
    with open_store(str(tmp_path / 'ccr.db')) as store:
        h = store.put(b'before fork')
        pid = os.fork()
        if pid == 0:  # child: report through the exit status only
            try: store.get(h); code = 1
            except StoreError as e: code = 0 if 'another process' in str(e) else 2
            except BaseException: code = 3
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert store.get(h) == b'before fork'
