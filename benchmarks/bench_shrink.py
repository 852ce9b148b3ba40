"""`caveman.shrink` on every real catalog: the shared corpus catalogs and the catalogs the test setup dumps from MCP
servers installed from npm and PyPI (tests/_mcp_catalogs.py), plus our translated catalog (tests/_translated_catalog.py).

Per catalog and combined: compact o200k tokens before / after, the retention facts of tests/test_shrink_retention.py that
apply to it (a fact applies wherever its tool exists and the original states it) and how many survive (must be all),
invariant violations, shrink time; beside it the token cost of the two lazy-loading alternatives (names + descriptions
only; names + input schemas only). Then what each rule saves: the combined tokens with that one rule switched off,
minus the tokens with every rule on.

Target (issue 15): >= 15% combined compact-token reduction with zero facts lost.

Scale (issue 12 item 10): catalogs of 100, 1,000 and 10,000 tools (the real tools above, cycled, each renamed with its index),
shrink CPU time against the CPU time of counting the catalog's compact form once (target: shrink <= 2x the count), and the
CPU the `caveman-shrink` command spends on 100 tools, start-up included. The floor column: what any shrink must do at the
least — parse the catalog once, write it compact, count the tokens in and out — without compressing anything. Tokens are counted on compact JSON on
both sides (SPEC §14.6), so whitespace minification is never part of a reduction."""
import json, os, resource, statistics, subprocess, sys, tempfile, time

import regex
from contextlib import contextmanager
from pathlib import Path

from caveman import ccr, toolschema
from caveman.corpus import corpus_files
from caveman.shrink import shrink, recover, compact_json
from caveman.tokens import count_tokens
from caveman.toolschema import extract_tools, compress_toolschema, dumps_compact, loads_typed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tests'))
from _toolschema_checks import check_catalog, tool_schemas, validation_differences  # noqa: E402
from _mcp_catalogs import dumped_catalogs  # noqa: E402
from _translated_catalog import TRANSLATED  # noqa: E402
from test_shrink_retention import FACTS, survives, text_at  # noqa: E402

RUNS = 5
TARGET = 0.15


def compact_tokens(doc) -> int: return count_tokens(json.dumps(doc, separators=(',', ':'), ensure_ascii=False))


def violations(x: bytes, y: bytes) -> list[str]:
    "Every broken promise of shrink on one catalog: the invariant checks, idempotence, validation equivalence."
    bad = check_catalog(x, y)
    y2, r2 = shrink(y, ':memory:')
    if y2 != y or r2.ratio != 0: bad.append('not idempotent')
    for t0, t1 in zip(extract_tools(json.loads(x)), extract_tools(json.loads(y))):
        for (key, s0), (_, s1) in zip(tool_schemas(t0), tool_schemas(t1)):
            bad += [f"{t0['name']}.{key}: {d}" for d in validation_differences(s0, s1)[0]]
    return bad


def facts(x: bytes, y: bytes) -> tuple[int, int, list[str]]:
    "(facts that apply, facts kept, the lost ones) for one catalog: every FACTS entry whose tool is here and states it."
    before = {t['name']: t for t in extract_tools(json.loads(x))}
    after = {t['name']: t for t in extract_tools(json.loads(y))}
    applied, lost = 0, []
    for _, name, where, fact, kind in FACTS:
        if name not in before: continue
        tool0 = before[name] if 'inputSchema' in before[name] else {**before[name], 'inputSchema': before[name].get('parameters', {})}
        tool1 = after[name] if 'inputSchema' in after[name] else {**after[name], 'inputSchema': after[name].get('parameters', {})}
        try: orig = text_at(tool0, where)
        except (KeyError, TypeError): continue
        if not survives(fact, orig): continue
        applied += 1
        if not survives(fact, text_at(tool1, where)): lost.append(f'{name}: {fact}')
    return applied, applied - len(lost), lost


def lazy(x: bytes) -> tuple[int, int]:
    "Compact tokens of the two lazy-loading views: [{name, description}] and [{name, inputSchema}]."
    tools = extract_tools(json.loads(x))
    names_desc = [{'name': t['name'], 'description': t.get('description', '')} for t in tools]
    names_params = [{'name': t['name'], 'inputSchema': (tool_schemas(t) or [(None, {})])[0][1]} for t in tools]
    return compact_tokens(names_desc), compact_tokens(names_params)


def catalogs() -> dict[str, bytes]:
    out = {f'shared/{p.name}': p.read_bytes() for p in corpus_files(catalogs=True)}
    out.update({f'dumped/{n}': p.read_bytes() for n, p in dumped_catalogs().items()})
    out['translated (ja/ko/de/fr/es)'] = json.dumps(TRANSLATED, ensure_ascii=False).encode()
    return out


def forget_cached():
    "Empty every cache of `caveman.toolschema`: the description cache and each `lru_cache` (what they hold was computed with every rule on)."
    toolschema._DESCRIPTION_CACHE.clear()
    for v in vars(toolschema).values():
        if hasattr(v, 'cache_clear'): v.cache_clear()


@contextmanager
def patched(**attrs):
    "Temporarily replace attributes of `caveman.toolschema` (one rule switched off)."
    old = {k: getattr(toolschema, k) for k in attrs}
    for k, v in attrs.items(): setattr(toolschema, k, v)
    forget_cached()
    try: yield
    finally:
        for k, v in old.items(): setattr(toolschema, k, v)
        forget_cached()


RULES = {   # rule -> the patch that switches it off
    'schema annotation keywords (title, examples, $comment)': dict(DROP_KEYWORDS=frozenset({'$schema'})),
    '$schema where the dialect makes no difference': dict(same_under_default_dialect=lambda s: False),
    'description units that are proven filler (praise, greetings)': dict(is_filler=lambda unit, names=(): False),
    'lead cut at a clause end (100 bytes)': dict(cap_lead=lambda s, limit=100: s),
    'Markdown decoration and whitespace': dict(tidy_lines=lambda text: [(l, False) for l in text.replace('\r\n', '\n').split('\n') if l.strip()]),
    'Args items that restate the schema': dict(restates_schema=lambda item, params: False),
    'example literals whose keys the schema names': dict(strip_schema_examples=lambda text, names: text),
    'property prose that restates its schema (optional, default, enum)': dict(drop_schema_restatements=lambda text, schema, optional=None: text),
    'property descriptions that only restate the property, tool and type names': dict(restates_name=lambda text, name, tool='', type_=None: False),
    '... of which: a plural of a name word counts as that word': dict(singular=lambda word: word),
    'shape examples joined by "or" / "and" / "," to a removed one': dict(_ALTERNATIVE=regex.compile(r'(?!)')),
    'keywords that constrain nothing (required [], minItems 0, propertyNames any string, ...)': dict(is_vacuous=lambda key, value: False),
}


SCALE = ((100, 5), (1_000, 3), (10_000, 1))   # tools, alternating count/shrink pairs


def synthetic(n: int, pool: list[dict]) -> bytes:
    "An MCP catalog of `n` tools: the real tools of `pool` cycled, each renamed `<name>_<index>`, pretty-printed as a server would send it."
    return json.dumps({'tools': [{**pool[i % len(pool)], 'name': f"{pool[i % len(pool)]['name']}_{i}"} for i in range(n)]},
                      indent=2, ensure_ascii=False).encode()


def cpu(fn) -> float:
    "CPU seconds (all threads of this process) one call of `fn` takes."
    t = time.process_time(); fn(); return time.process_time() - t


def child_cpu(cmd: list[str], env: dict) -> float:
    "CPU seconds (user + system) a child process spends."
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def scale(cats: dict[str, bytes]) -> list[str]:
    "The scale table (shrink vs count CPU at 100 / 1,000 / 10,000 tools) and the command's CPU on 100 tools."
    pool, seen = [], set()
    for x in cats.values():
        for t in extract_tools(json.loads(x)):
            key = json.dumps(t, sort_keys=True)
            if key not in seen: seen.add(key); pool.append(t)
    count_tokens('warm up')
    md = ['', '### Shrink at scale', '', f'{len(pool)} distinct real tools cycled (so from {len(pool) + 1} tools on, descriptions repeat and '
          'the description cache of `caveman.toolschema` reuses their reductions; the cache starts empty for every run). CPU seconds, '
          'median of alternating pairs.', '',
          '| tools | catalog bytes | compact tokens | count (ms) | shrink (ms) | shrink / count | floor: parse + write + count in and out (ms) | floor / count |',
          '|---:|---:|---:|---:|---:|---:|---:|---:|']
    for n, pairs in SCALE:
        x = synthetic(n, pool)
        compact = compact_json(x).decode()
        out = shrink(x, ':memory:')[0].decode()
        counts, shrinks, floors = [], [], []
        for _ in range(pairs):
            counts.append(cpu(lambda: count_tokens(compact)))
            toolschema._DESCRIPTION_CACHE.clear()    # each run starts cold: only repeats within the catalog are reused
            shrinks.append(cpu(lambda: shrink(x, ':memory:')))
            floors.append(cpu(lambda: (dumps_compact(loads_typed(x)), count_tokens(compact), count_tokens(out))))
        c, s, f = statistics.median(counts), statistics.median(shrinks), statistics.median(floors)
        md.append(f'| {n:,} | {len(x):,} | {count_tokens(compact):,} | {c * 1e3:.0f} | {s * 1e3:.0f} | {s / c:.1f}x | {f * 1e3:.0f} | {f / c:.1f}x |')
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / 'catalog.json'
        path.write_bytes(synthetic(100, pool))
        env = {**os.environ, 'CAVEMAN_CCR_DB': str(Path(tmp) / 'ccr.db')}
        exe = str(Path(sys.executable).with_name('caveman-shrink'))
        runs = {'python (nothing imported)': [sys.executable, '-c', 'pass'],
                'import caveman.shrink': [sys.executable, '-c', 'import caveman.shrink'],
                'caveman-shrink on 100 tools': [exe, str(path)]}
        md += ['', '| command | CPU (ms), median of 3 |', '|---|---:|']
        for what, cmd in runs.items():
            md.append(f'| {what} | {statistics.median(child_cpu(cmd, env) for _ in range(3)) * 1e3:.0f} |')
    return md


def pointer_savings(cats: dict[str, bytes]) -> int:
    "Compact tokens saved over all catalogs if every property description repeated verbatim (after shrinking) in a later tool became `see <first tool>`."
    saved = 0
    for x in cats.values():
        first = {}
        for t in extract_tools(json.loads(compress_toolschema(x))):
            stack = [v for k, v in t.items() if k in ('inputSchema', 'input_schema', 'parameters')]
            while stack:
                node = stack.pop()
                if isinstance(node, dict):
                    for k, v in node.items():
                        if k == 'description' and isinstance(v, str):
                            if first.setdefault(v, t['name']) != t['name']:
                                saved += max(0, count_tokens(json.dumps(v, ensure_ascii=False)) - count_tokens(json.dumps(f'see {first[v]}')))
                        elif isinstance(v, (dict, list)): stack.append(v)
                elif isinstance(node, list): stack.extend(node)
    return saved


def run() -> str:
    cats = catalogs()
    rows, lost_all, problems = [], [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, x in cats.items():
            store = ccr.open_store(str(Path(tmp) / 'ccr.db'))
            y, r = shrink(x, store)
            bad = violations(x, y)
            if r.recovery_handle and recover(r.recovery_handle, store) != x: bad.append('recover is not byte-exact')
            if not r.recovery_handle and y != x: bad.append('changed without a handle')
            store.close()
            ts = []
            for _ in range(RUNS):
                t = time.perf_counter(); shrink(x, ':memory:'); ts.append(time.perf_counter() - t)
            applied, kept, lost = facts(x, y)
            lost_all += [f'{name}: {l}' for l in lost]
            problems[name] = bad
            rows.append((name, len(extract_tools(x)), r.tokens_before, r.tokens_after, r.ratio, applied, kept, statistics.median(ts), *lazy(x)))
    md = ['## Shrink: tool catalogs', '',
          '| catalog | tools | compact tokens before | after | reduction | facts kept | invariant violations | shrink (ms) | lazy: names + descriptions | lazy: names + input schemas |',
          '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|']
    for name, n, b, a, ratio, applied, kept, t, nd, np in rows:
        md.append(f'| {name} | {n} | {b:,} | {a:,} | {ratio:.1%} | {kept}/{applied} | {len(problems[name])} | {t * 1e3:.1f} | {nd:,} | {np:,} |')
    tb, ta = sum(r[2] for r in rows), sum(r[3] for r in rows)
    fa, fk = sum(r[5] for r in rows), sum(r[6] for r in rows)
    nd, np = sum(r[8] for r in rows), sum(r[9] for r in rows)
    total_bad = sum(map(len, problems.values()))
    md.append(f'| **all {len(rows)}** | {sum(r[1] for r in rows)} | {tb:,} | {ta:,} | {(tb - ta) / tb:.1%} | {fk}/{fa} | {total_bad} | '
              f'{sum(r[7] for r in rows) * 1e3:.1f} | {nd:,} | {np:,} |')
    met = (tb - ta) / tb >= TARGET and fk == fa and total_bad == 0
    md += ['', f'Median reduction per catalog: {statistics.median(r[4] for r in rows):.1%}.']
    md += ['', f'Target: >= {TARGET:.0%} combined compact-token reduction with zero facts lost: {(tb - ta) / tb:.1%}, '
               f'{fa - fk} facts lost, {total_bad} invariant violations ({"met" if met else "NOT met"}).']
    for l in lost_all[:10]: md.append(f'- fact lost in {l}')
    for name, bad in problems.items():
        for b in bad[:5]: md.append(f'- violation in {name}: {b}')
    # what each rule saves, on all catalogs together (compressor output, compact tokens)
    def total_after() -> int: return sum(count_tokens(compress_toolschema(x).decode()) for x in cats.values())
    base = total_after()
    md += ['', '| rule (switched off alone) | combined tokens after | tokens this rule saves | share of before |', '|---|---:|---:|---:|']
    for rule, patch in RULES.items():
        with patched(**patch): off = total_after()
        md.append(f'| {rule} | {off:,} | {off - base:,} | {(off - base) / tb:.1%} |')
    saved = pointer_savings(cats)
    md.append(f'| *measured, not applied:* a property description repeated verbatim in a later tool of the catalog replaced by '
              f'"see <first tool>" | {base - saved:,} | {saved:,} | {saved / tb:.1%} |')
    md += ['', 'The last row is an indirection, not a rule: the agent would get the text back only from the first tool that carries it, '
               'in the same tools/list; a host that shows tools one at a time, filters them or loads them lazily would lose it, and the '
               "retention suite (which reads each tool alone) would count those facts lost. So it is not applied."]
    md += ['', 'Facts: the retention suite of tests/test_shrink_retention.py (valid call, tool choice, safety, behaviour and output shape; English, Chinese, '
               'and our ja/ko/de/fr/es translations), applied to every catalog holding the tool and the fact. Lazy loading: the compact '
               'tokens a host pays up front when it sends only names + descriptions (and loads schemas on demand), or only names + input '
               'schemas (no tool descriptions). shrink = one `caveman.shrink.shrink` call into an in-memory store, median of 5 runs; '
               'invariants as in the test suite (selection profile, keywords at their paths, `$ref`s, names and order, envelopes and '
               'annotations byte-identical, idempotence, byte-exact recover, validation equivalence under `jsonschema`).']
    md += scale(cats)
    return '\n'.join(md)
