"""The recovery store and caveman-mcp under load (issue 11).

- put p50/p99: 200 puts of new 1 KiB originals into a file store already holding 10, 1,000 and
  10,000 rows (filled with plain SQLite inserts, then opened once so any migration is done before
  timing). A put's cost must not grow with the store.
- 8-writer throughput: 8 processes start together on a fresh file, and on one of 10,000 rows, and
  each put 200 distinct 4 KiB originals; puts per second over the wall time of the slowest, and any
  error they report.
- ping under a 16 MiB compress: one `caveman-mcp` (file store, engine warmed up by a small compress)
  gets a ~16 MiB log to compress, then, once the server has read it, a `ping` every 100 ms until the
  compress answers; the ping round trips (p50 / max) beside the compress's own duration.

Runs against whatever `caveman` the interpreter imports, so the same file measures another checkout
(`/path/to/venv/bin/python benchmarks/bench_store.py`).
"""
import json, os, queue, shutil, sqlite3, statistics, subprocess, sys, tempfile, threading, time
from pathlib import Path

import caveman
from caveman import ccr
from _common import pct

KiB, MiB = 1024, 1 << 20
SIZES, PUTS = (10, 1_000, 10_000), 200
WRITERS, WRITER_PUTS = 8, 200


def handle(data: bytes) -> str:
    import hashlib
    return 'ccr_' + hashlib.sha256(data).hexdigest()[:32]


def fill(path: str, rows: int):
    "A store of `rows` 1 KiB recoveries, written with plain SQLite in the upstream schema, then opened once by caveman."
    ccr.open_store(path).close()
    c = sqlite3.connect(path, isolation_level=None)
    c.execute('BEGIN')
    for i in range(rows):
        data = f'row {i} '.encode().ljust(KiB, b'.')
        c.execute("INSERT INTO recoveries (handle, created_at, content_type, compressor, tokens_before, tokens_after, original) "
                  "VALUES (?, '2026-01-01T00:00:00.000000000Z', 'text', 'text', 256, 10, ?)", (handle(data), data))
    c.execute('COMMIT'); c.close()
    try:  # a store with running totals must count what the plain inserts added (its triggers did)
        ccr.open_store(path).close()
    except Exception: pass


def put_latency(rows: int) -> list[float]:
    d = tempfile.mkdtemp()
    try:
        path = os.path.join(d, 'ccr.db')
        fill(path, rows)
        out = []
        with ccr.open_store(path) as s:
            for i in range(PUTS):
                data = f'new {i} '.encode().ljust(KiB, b'#')
                t = time.perf_counter(); s.put(data, content_type='text', compressor='text', tokens_before=256, tokens_after=10)
                out.append(time.perf_counter() - t)
        return out
    finally: shutil.rmtree(d, ignore_errors=True)


WRITER = r'''
import json, sys, time
from caveman.ccr import open_store
w, n, path, t0 = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
errors = []
with open_store(path) as s:
    while time.time() < t0: time.sleep(0.001)
    for i in range(n):
        try: s.put(f"writer {w} put {i} ".encode().ljust(4096, b"="), content_type="text", tokens_before=1000, tokens_after=10)
        except Exception as e: errors.append(f"{type(e).__name__}: {e}")
print(json.dumps({"done": time.time(), "errors": errors}))
'''

def writers(rows: int = 0) -> tuple[float, list[str]]:
    d = tempfile.mkdtemp()
    try:
        path = os.path.join(d, 'ccr.db')
        fill(path, rows)
        t0 = time.time() + 2.0
        ps = [subprocess.Popen([sys.executable, '-c', WRITER, str(w), str(WRITER_PUTS), path, str(t0)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for w in range(WRITERS)]
        outs = [json.loads(p.communicate(timeout=1800)[0]) for p in ps]
        wall = max(o['done'] for o in outs) - t0
        return WRITERS * WRITER_PUTS / wall, [e for o in outs for e in o['errors']]
    finally: shutil.rmtree(d, ignore_errors=True)


def big_log(mib: int = 16) -> str:
    line = '2026-05-01T10:00:{s:02d}Z INFO worker-{w} request {k} served in {m} ms path=/api/v1/items/{k} status=200\n'
    out, n, k = [], 0, 0
    while n < mib * MiB:
        l = line.format(s=k % 60, w=k % 8, k=k, m=k % 97); out.append(l); n += len(l); k += 1
    return ''.join(out)


def pings_under_compress() -> tuple[list[float], float]:
    exe = str(Path(sys.executable).with_name('caveman-mcp'))
    d = tempfile.mkdtemp()
    env = {k: v for k, v in os.environ.items() if not k.startswith('CAVEMAN_')}
    env.update(CAVEMAN_HOME=os.path.join(d, 'home'), CAVEMAN_MCP_MAX_INBOUND_BYTES=str(64 * MiB))
    p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(json.loads(l)) for l in iter(p.stdout.readline, b'')], daemon=True).start()
    def send(obj): p.stdin.write(json.dumps(obj).encode() + b'\n'); p.stdin.flush()
    def call(i, name, args): send({'jsonrpc': '2.0', 'id': i, 'method': 'tools/call', 'params': {'name': name, 'arguments': args}})
    try:
        send({'jsonrpc': '2.0', 'id': 0, 'method': 'initialize', 'params': {'protocolVersion': '2024-11-05', 'capabilities': {}, 'clientInfo': {'name': 'b', 'version': '0'}}})
        lines.get(timeout=120)
        call(1, 'caveman_compress', {'input': big_log(1)}); lines.get(timeout=600)   # engine and store warm
        t_big = time.perf_counter()
        call(2, 'caveman_compress', {'input': big_log(16)})
        rtts, big_done, k = [], None, 100
        while big_done is None:
            time.sleep(0.1)
            send({'jsonrpc': '2.0', 'id': k, 'method': 'ping'}); t = time.perf_counter()
            while True:
                m = lines.get(timeout=1800)
                if m['id'] == 2: big_done = time.perf_counter() - t_big; continue
                if m['id'] == k: rtts.append(time.perf_counter() - t); break
            k += 1
        return rtts, big_done
    finally:
        p.stdin.close(); p.wait(timeout=600); shutil.rmtree(d, ignore_errors=True)


def run() -> str:
    rows = []
    for n in SIZES:
        xs = put_latency(n)
        rows.append(f'| {n:,} | {statistics.median(xs) * 1000:.2f} | {pct(xs, 99) * 1000:.2f} |')
    w = [(n, *writers(n)) for n in (0, 10_000)]
    rtts, big = pings_under_compress()
    return '\n'.join([
        '## store', '',
        f'caveman {caveman.__version__} from `{Path(caveman.__file__).parent}`; what each figure is: `benchmarks/bench_store.py`.', '',
        f'| rows already in the store | put p50 (ms) | put p99 (ms) |', '|---:|---:|---:|', *rows, '',
        *(f'8 writers x {WRITER_PUTS} puts of 4 KiB on a store of {n:,} rows: **{rate:,.0f} puts/s**, {len(errors)} errors'
          + (f' (first: `{errors[0]}`)' if errors else '') + '  ' for n, rate, errors in w), '',
        f'ping while a 16 MiB compress runs ({big:.1f} s): {len(rtts)} pings, p50 **{statistics.median(rtts) * 1000:.1f} ms**, '
        f'max {max(rtts) * 1000:.1f} ms',
    ])


if __name__ == '__main__': print(run())
