"""Engine speed and ratio on the corpus json_* and log_* payloads, beside tiktoken's own counting time.

Target (issue: foundation): on payloads >= 100 KB, one `Engine.compress` (unwrap, detect, count before,
compress, count after, commit the original to a file store) takes <= 2x the time tiktoken alone
takes to count the input."""
import statistics, tempfile, time
from pathlib import Path

from caveman import ccr
from caveman.corpus import corpus_files
from caveman.engine import Engine
from caveman.tokens import o200k_encoding

RUNS = 5

def median_time(fn, runs=RUNS):
    ts = []
    for _ in range(runs):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)

def run() -> str:
    enc = o200k_encoding()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for f in corpus_files('json') + corpus_files('log'):
            data = f.read_bytes(); text = data.decode('utf-8', 'replace')
            store = ccr.open_store(str(Path(tmp) / f'{f.stem}.db'))
            eng = Engine(store)
            eng.compress(data)  # warm-up (also the first, writing, put)
            r = eng.compress(data)
            count_t = median_time(lambda: enc.encode_ordinary(text))
            # each timed run uses a fresh file store, so every run includes a real write of the original
            stores = [ccr.open_store(str(Path(tmp) / f'{f.stem}-{i}.db')) for i in range(RUNS)]
            it = iter(stores)
            comp_t = median_time(lambda: Engine(next(it), counter=eng.counter).compress(data))
            for s in stores + [store]: s.close()
            rows.append((f.name, len(data), r.content_type, r.tokens_before, r.tokens_after, r.ratio, comp_t, count_t))
    md = ['## Engine: json and log payloads', '',
          '| payload | bytes | type | tokens before | tokens after | ratio | compress (ms) | tiktoken count (ms) | compress / count |',
          '|---|---:|---|---:|---:|---:|---:|---:|---:|']
    for name, n, ct, b, a, ratio, ctime, ttime in rows:
        md.append(f'| {name} | {n:,} | {ct} | {b:,} | {a:,} | {ratio:.1%} | {ctime*1e3:.1f} | {ttime*1e3:.1f} | {ctime/ttime:.2f}x |')
    big = [r for r in rows if r[1] >= 100_000]
    md += ['', f'Target: compress <= 2x tiktoken count on payloads >= 100 KB: ' +
           (', '.join(f'{r[0]} {r[6]/r[7]:.2f}x ({"met" if r[6] <= 2 * r[7] else "NOT met"})' for r in big) or 'no payload >= 100 KB') + '.',
           '', 'compress = one `Engine.compress` call end to end (unwrap, detect, count before, compress, count after, write the original '
           'to a fresh SQLite file store); count = `tiktoken.Encoding.encode_ordinary` on the same text. Medians of 5 runs.']
    return '\n'.join(md)
