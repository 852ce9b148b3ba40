"""The recovery store on PostgreSQL beside SQLite (issue 19).

- put and get p50/p95 for originals of 1 KB, 100 KB and 10 MB: each put a new original (so every
  put writes and commits), each get reads it back; on a SQLite file store and on a PostgreSQL
  database served on loopback by a server this script starts (tests/_pg.py: initdb + pg_ctl,
  fsync off — the server's disk is not what is measured; each session commits synchronously).
- 8 concurrent writers: 8 processes start together on a fresh store and each put 200 distinct
  4 KiB originals; puts per second over the wall time of the slowest, and any error they report.
- client memory for a 64 MiB original: peak RSS above the process's baseline (the original itself
  already allocated) for a put and, in a fresh process, for a get — in units of the original's size.

Runs against whatever `caveman` the interpreter imports. Needs the PostgreSQL binaries (the
`postgresql` package) and psycopg (`caveman-context[postgres]`).
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

from _common import pct
from caveman import ccr

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / 'tests'))
SIZES = ((1_000, '1 KB', 100), (100_000, '100 KB', 60), (10_000_000, '10 MB', 8))
WRITERS, WRITER_PUTS = 8, 200


def latencies(target: str, size: int, n: int) -> tuple[list, list]:
    "Put and get times (ms) of `n` new originals of `size` bytes."
    puts, gets = [], []
    block = os.urandom(size)
    with ccr.open_store(target, max_bytes=4 << 30) as s:
        s.put(b'warm up')
        for i in range(n):
            data = i.to_bytes(4, 'big') + block[4:]
            t = time.perf_counter(); h = s.put(data, content_type='text', tokens_before=size // 4, tokens_after=1); puts.append(time.perf_counter() - t)
            t = time.perf_counter(); got = s.get(h); gets.append(time.perf_counter() - t)
            assert got == data
    return [x * 1000 for x in puts], [x * 1000 for x in gets]


WRITER = r'''
import json, os, sys, time
from caveman import ccr
target, w, n, t0 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
errors = 0
with ccr.open_store(target) as s:
    while time.time() < t0: time.sleep(0.001)
    for i in range(n):
        try: s.put(f'writer {w} item {i} '.encode().ljust(4096, b'.'), content_type='text', tokens_before=1000, tokens_after=10)
        except Exception: errors += 1
print(json.dumps({'errors': errors, 'end': time.time()}))
'''


def writers(target: str) -> tuple[float, int]:
    "Puts per second of 8 writer processes started together on `target`, and their error count."
    ccr.open_store(target).close()
    t0 = time.time() + 2
    env = {k: v for k, v in os.environ.items() if not k.startswith('CAVEMAN_CCR')}
    procs = [subprocess.Popen([sys.executable, '-c', WRITER, target, str(w), str(WRITER_PUTS), str(t0)], stdout=subprocess.PIPE,
                              text=True, env=env, stdin=subprocess.DEVNULL) for w in range(WRITERS)]
    outs = [json.loads(p.communicate(timeout=600)[0]) for p in procs]
    wall = max(o['end'] for o in outs) - t0
    return WRITERS * WRITER_PUTS / wall, sum(o['errors'] for o in outs)


MEMORY = r'''
import json, os, resource, sys
from caveman import ccr
st = ccr.open_store(sys.argv[1], max_bytes=1 << 34)
size = 64 << 20
if sys.argv[2] == 'put':
    data = os.urandom(size); st.used_bytes()
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    st.put(data)
else:
    st.used_bytes()
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    data = st.get(sys.argv[3])
    assert len(data) == size
print(json.dumps({'extra': (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024 / size, 'handle': ccr.handle_for(data)}))
'''


def memory(target: str) -> tuple[float, float]:
    "Peak client memory above baseline, in units of a 64 MiB original, for a put (the original already held) and a get (in a fresh process)."
    def one(*args):
        r = subprocess.run([sys.executable, '-c', MEMORY, target, *args], capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
        if r.returncode: raise RuntimeError(r.stderr[-2000:])
        return json.loads(r.stdout)
    put = one('put')
    return put['extra'], one('get', put['handle'])['extra']


def run() -> str:
    from _pg import PgServer
    server = PgServer()
    d = tempfile.mkdtemp()
    try:
        rows = ['| original | backend | put p50 | put p95 | get p50 | get p95 | n |', '|---|---|---:|---:|---:|---:|---:|']
        for size, name, n in SIZES:
            for backend, target in (('SQLite', os.path.join(d, f'lat-{size}.db')), ('PostgreSQL', server.url(f'lat_{size}'))):
                puts, gets = latencies(target, size, n)
                rows.append(f'| {name} | {backend} | {pct(puts, 50):.2f} ms | {pct(puts, 95):.2f} ms | {pct(gets, 50):.2f} ms | {pct(gets, 95):.2f} ms | {n} |')
        rows += ['', f'| {WRITERS} writers x {WRITER_PUTS} puts of 4 KiB | puts/s | errors |', '|---|---:|---:|']
        for backend, target in (('SQLite', os.path.join(d, 'writers.db')), ('PostgreSQL', server.url('writers'))):
            rate, errors = writers(target)
            rows.append(f'| {backend} | {rate:,.0f} | {errors} |')
        rows += ['', '| 64 MiB original | put: peak above baseline | get: peak above baseline |', '|---|---:|---:|']
        for backend, target in (('SQLite', os.path.join(d, 'memory.db')), ('PostgreSQL', server.url('memory'))):
            put, get = memory(target)
            rows.append(f'| {backend} | {put:.2f}x | {get:.2f}x |')
    finally:
        server.close(); shutil.rmtree(d, ignore_errors=True)
    return ('## postgres — the recovery store on PostgreSQL beside SQLite\n\n'
            'Each put stores a new original (a write and a commit); each get reads it back. PostgreSQL on loopback '
            '(started by the bench, fsync off, synchronous commit per session); SQLite a WAL file store. Budget 4 GiB.\n\n' + '\n'.join(rows))


if __name__ == '__main__': print(run())
