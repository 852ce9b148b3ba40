"""`caveman.shrink` on every real catalog of the corpus: compact-token reduction, shrink time, invariant violations.

Target (issue: shrink): >= 15% compact-token reduction on mcp_combined_5_servers.json with zero invariant violations.
Tokens are counted on compact JSON on both sides (SPEC §14.6), so whitespace minification is never part of a
reduction; the "as given" column shows what the pretty-printed input would count, for scale only.
The invariant checks are those of the test suite (tests/_toolschema_checks.py), run here on the shrink output."""
import json, statistics, sys, tempfile, time
from pathlib import Path

from caveman import ccr
from caveman.corpus import corpus_files
from caveman.shrink import shrink, recover
from caveman.tokens import count_tokens
from caveman.toolschema import extract_tools

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tests'))
from _toolschema_checks import check_catalog, tool_schemas, validation_differences  # noqa: E402

RUNS = 7
TARGET_FILE, TARGET = 'mcp_combined_5_servers.json', 0.15


def violations(x: bytes, y: bytes) -> list[str]:
    "Every broken promise of shrink on one catalog: the invariant checks, idempotence, exact recovery, validation equivalence."
    bad = check_catalog(x, y)
    y2, r2 = shrink(y, ':memory:')
    if y2 != y or r2.ratio != 0: bad.append('not idempotent')
    for t0, t1 in zip(extract_tools(json.loads(x)), extract_tools(json.loads(y))):
        for (key, s0), (_, s1) in zip(tool_schemas(t0), tool_schemas(t1)):
            bad += [f"{t0['name']}.{key}: {d}" for d in validation_differences(s0, s1)[0]]
    return bad


def median_time(fn, runs=RUNS) -> float:
    ts = []
    for _ in range(runs):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def run() -> str:
    rows, problems = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for f in corpus_files(catalogs=True):
            x = f.read_bytes()
            store = ccr.open_store(str(Path(tmp) / f'{f.stem}.db'))
            y, r = shrink(x, store)
            bad = violations(x, y)
            if recover(r.recovery_handle, store) != x: bad.append('recover is not byte-exact')
            store.close()
            # each timed run commits to a fresh file store, so every run includes a real write of the original
            stores = iter([ccr.open_store(str(Path(tmp) / f'{f.stem}-{i}.db')) for i in range(RUNS)])
            opened = []
            def one():
                s = next(stores); opened.append(s); shrink(x, s)
            t = median_time(one)
            for s in opened: s.close()
            problems[f.name] = bad
            rows.append((f.name, len(extract_tools(x)), len(x), count_tokens(x.decode()), r.tokens_before, r.tokens_after, r.ratio, t))
    md = ['## Shrink: tool catalogs', '',
          '| catalog | tools | bytes | tokens as given | compact tokens before | after | reduction | shrink (ms) | invariant violations |',
          '|---|---:|---:|---:|---:|---:|---:|---:|---:|']
    for name, n, size, raw, b, a, ratio, t in rows:
        md.append(f'| {name} | {n} | {size:,} | {raw:,} | {b:,} | {a:,} | {ratio:.1%} | {t * 1e3:.1f} | {len(problems[name])} |')
    tb, ta = sum(r[4] for r in rows), sum(r[5] for r in rows)
    md.append(f'| **all {len(rows)}** | {sum(r[1] for r in rows)} | {sum(r[2] for r in rows):,} | {sum(r[3] for r in rows):,} | '
              f'{tb:,} | {ta:,} | {(tb - ta) / tb:.1%} | {sum(r[7] for r in rows) * 1e3:.1f} | {sum(map(len, problems.values()))} |')
    target = next(r for r in rows if r[0] == TARGET_FILE)
    total_bad = sum(map(len, problems.values()))
    met = target[6] >= TARGET and total_bad == 0
    md += ['', f'Target: >= {TARGET:.0%} compact-token reduction on {TARGET_FILE} with zero invariant violations: '
               f'{target[6]:.1%}, {total_bad} violations ({"met" if met else "NOT met"}).']
    for name, bad in problems.items():
        for b in bad[:5]: md.append(f'- violation in {name}: {b}')
    md += ['', 'shrink = one `caveman.shrink.shrink` call (compact form, engine compress with type `toolschema`, counts, commit of the '
               'original to a fresh SQLite file store); median of 7 runs. Invariants checked per catalog: selection profile, every '
               '`enum`/`required`/`default`/`const`/`type`/`$ref` unchanged at its path, every `$ref` resolves, tool names and order, '
               'valid JSON, idempotence, byte-exact recover, and validation equivalence under `jsonschema` on generated instances.']
    return '\n'.join(md)
