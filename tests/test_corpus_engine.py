"""Every corpus payload through the real `Engine` with a file store in a temp dir: what must survive
survives (checked with code independent of the compressors), every compressed payload comes back
byte for byte (also from a second process), the same input gives the same bytes in two interpreters,
and compressing a compressed view changes nothing further.

Run as a script for the per-file table (type, o200k tokens before/after, ratio, median compress time):
`python tests/test_corpus_engine.py`."""
import hashlib, json, os, re, statistics, subprocess, sys, time

import pytest

from _html_text import hidden_only_text

from caveman import ccr
from caveman.corpus import corpus_files
from caveman.detect import unwrap
from caveman.engine import Engine, default_registry
from fastcore.xtras import modified_env
from conftest import child_env

KIND = dict(json='json', log='log', csv='tabular', diff='diff', search='search-result', html='html',
            yaml='config', terminal='terminal', code='code', prose='text')
FILES = corpus_files()
NEW_KINDS = ('tabular', 'text', 'config', 'search-result', 'terminal')

def kind_of(path) -> str: return KIND[path.name.split('_')[0]]


@pytest.fixture(scope='module')
def store_path(tmp_path_factory):
    return tmp_path_factory.mktemp('ccr') / 'ccr.db'

@pytest.fixture(scope='module')
def engine(store_path):
    return Engine(ccr.open_store(str(store_path)))

@pytest.fixture(scope='module')
def results(engine):
    "path -> Result of compressing the file as given (no query), computed once."
    return {p: engine.compress(p.read_bytes()) for p in FILES}


# ---------------------------------------------------------------- recovery, determinism, idempotence
@pytest.mark.parametrize('path', FILES, ids=lambda p: p.name)
def test_byte_exact_recovery_and_idempotence(path, engine, results, store_path):
    data, r = path.read_bytes(), results[path]
    assert r.content_type == kind_of(path)
    assert r.basis == 'inferred' and 'verified' not in json.dumps(r.to_dict())
    if r.passed_through:
        assert r.output == data and r.tokens_after == r.tokens_before
        return
    assert r.tokens_after < r.tokens_before and r.recovery_handle == ccr.handle_for(data)
    assert engine.retrieve(r.recovery_handle) == data
    assert ccr.open_store(str(store_path)).get(r.recovery_handle) == data          # a second connection
    again = engine.compress(r.output, type=r.content_type)
    assert again.passed_through or again.output == r.output


def test_every_new_kind_is_exercised(results):
    "The five compressors built here each compress at least one corpus payload through the engine."
    done = {r.content_type for r in results.values() if not r.passed_through}
    assert {'tabular', 'text', 'config', 'search-result', 'terminal'} <= done, done


def test_recovery_from_another_process(results, store_path):
    handles = {r.recovery_handle: hashlib.sha256(p.read_bytes()).hexdigest() for p, r in results.items() if r.recovery_handle}
    script = ('import hashlib, json, sys\nfrom caveman import ccr\ns = ccr.open_store(sys.argv[1])\n'
              'print(json.dumps({h: hashlib.sha256(s.get(h)).hexdigest() for h in json.loads(sys.stdin.read())}))')
    out = subprocess.run([sys.executable, '-c', script, str(store_path)], input=json.dumps(list(handles)), capture_output=True,
                         text=True, timeout=300, check=True).stdout
    assert json.loads(out) == handles and len(handles) >= 20


DIGESTS = ('import hashlib, sys\nfrom caveman import ccr\nfrom caveman.corpus import corpus_files\nfrom caveman.engine import Engine\n'
           'e = Engine(ccr.open_store(":memory:"))\n'
           'for p in corpus_files():\n'
           '    r = e.compress(p.read_bytes())\n'
           '    print(p.name, r.content_type, r.tokens_after, hashlib.sha256(r.output).hexdigest())\n')

@pytest.mark.slow
def test_determinism_across_processes():
    "Hash randomisation and process state must not change any output: two interpreters, two hash seeds."
    runs = [subprocess.run([sys.executable, '-c', DIGESTS], capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
                           env=child_env(PYTHONHASHSEED=seed), check=True).stdout for seed in ('1', '2')]
    assert runs[0] == runs[1] and runs[0].count('\n') == len(FILES)


@pytest.mark.parametrize('kind', NEW_KINDS)
@pytest.mark.parametrize('path', FILES, ids=lambda p: p.name)
def test_forced_new_kinds_never_raise_and_are_idempotent(kind, path):
    "Forcing any of the five new types on any payload: no exception, same bytes twice, a second pass changes nothing."
    e = Engine(ccr.open_store(':memory:'))
    data = path.read_bytes()
    r = e.compress(data, type=kind)
    assert r.content_type == kind
    assert e.compress(data, type=kind).output == r.output
    if not r.passed_through:
        assert r.tokens_after < r.tokens_before and e.retrieve(r.recovery_handle) == data
        again = e.compress(r.output, type=kind)
        assert again.passed_through or again.output == r.output


# ---------------------------------------------------------------- pathological inputs
_KEYS = b''.join(b'k%d: v\n' % i for i in range(20))
PATHOLOGICAL = {
    'dashes before a key': _KEYS + b'- ' * 50000 + b'a: 1\n' + _KEYS,
    'colons in a value': _KEYS + b'x: ' + b'a:' * 100000 + b'\n' + _KEYS,
    'block headers': _KEYS + b'x: |\n' * 20000 + _KEYS,
    'deep nesting': b''.join(b' ' * i + b'k%d:\n' % i for i in range(3000)) + _KEYS,
    'unclosed scripts': b'<html><body>' + b'<script>' * 50000 + b'<!--' * 50000 + b'\n\n' + b'word ' * 5000,
    'fences': b'```\n' * 100000,
    'escape starts': b'\x1b[' * 100000 + b'\n' * 10,
    'open osc': b'\x1b]' + b'a' * 300000 + b'\n' * 10,
    'redraws': (b'x\r' * 50000 + b'\n') * 4,
    'wide csv': (b'a,' * 127 + b'a\n') * 2000,
    'quoted csv': b'a,b\n' + b'"x,""y""",1\n' * 20000,
    'many hits': b''.join(b'p%d.py:%d: x\n' % (i, i) for i in range(20000)),
    'flag words': b'error fail key\n' * 50000,
}

@pytest.mark.parametrize('kind', NEW_KINDS)
@pytest.mark.parametrize('name', PATHOLOGICAL)
def test_pathological_input_is_handled(kind, name):
    "Inputs that would trip quadratic scans or catastrophic regexes: each compressor answers (speed is for `make bench`, not a timed test)."
    comp, data = default_registry()[kind], PATHOLOGICAL[name]
    r = comp(data)                                   # the compressor alone: the engine's token count is not under test
    assert r is None or r.output != data


# ---------------------------------------------------------------- retention
# the words come from each compressor's keep rule (reference §3.5, §3.10, §3.11)
LOG_WORDS = re.compile(r'\b(?:error|fatal|panic|exception|traceback|fail|failed|failure|warn|warning)\b', re.I | re.A)
TERMINAL_WORDS = re.compile(r'\b(?:error|err|fatal|panic|exception|traceback|fail|failed|failure|warn|warning)\b', re.I | re.A)
SEARCH_WORDS = re.compile(r'\b(?:error|fail|failed|panic)\b', re.I | re.A)
ESCAPES = re.compile(r'\x1b(?:\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[\x20-\x2f]+[\x30-\x7e]|[\x30-\x7e])')

def screen(line: str) -> str:
    "A terminal line as shown: escapes removed, then the last non-empty carriage-return segment (own final CR dropped)."
    line = ESCAPES.sub('', line[:-1] if line.endswith('\r') else line)
    return [s for s in line.split('\r') if s][-1] if line.replace('\r', '') else ''

def view_lines(r) -> set[str]:
    return {l.rstrip('\r') for l in r.output.decode('utf-8').split('\n')}

NUMBERED = re.compile(r'(\d+)([:-])(.*)\Z', re.S)

def ungroup(lines: list[str]) -> list[str]:
    "A grouped search view (a path line, then `N:text` / `N-text` lines) read back as the tool printed it: `path:N:text`."
    out, path = [], None
    for k, line in enumerate(lines):
        m = NUMBERED.match(line)
        if m and path is not None: out.append(f'{path}{m[2]}{m[1]}{m[2]}{m[3]}'); continue
        if path is not None and (line == '--' or 'elided (caveman)' in line): out.append(line); continue
        after = lines[k + 1] if k + 1 < len(lines) else ''
        path = (line if line and line != '--' and not re.search(r'[\s:]', line) and not line.isdigit()
                and (NUMBERED.match(after) or 'elided (caveman)' in after) else None)
        if path is None: out.append(line)
    return out

@pytest.mark.parametrize('path', corpus_files('log') + corpus_files('terminal') + corpus_files('search'), ids=lambda p: p.name)
def test_failure_lines_survive(path, results):
    r = results[path]
    text = path.read_bytes().decode('utf-8')
    if kind_of(path) == 'terminal': lines, words = [screen(l) for l in text.split('\n')], TERMINAL_WORDS
    else: lines, words = [l.rstrip('\r') for l in text.split('\n')], (SEARCH_WORDS if kind_of(path) == 'search-result' else LOG_WORDS)
    must = [l for l in lines if words.search(l)]
    view = view_lines(r)
    if kind_of(path) == 'search-result': view |= set(ungroup(r.output.decode('utf-8').split('\n')))   # hits of one file come grouped
    assert [l for l in must if l not in view] == []
    CHECKED[path.name] = len(must)

CHECKED = {}

def test_failure_lines_were_there_to_check():
    "Runs after the test above: the corpus really holds failure lines in logs, terminals and searches."
    assert sum(CHECKED.values()) > 50 and sum(v > 0 for v in CHECKED.values()) >= 7, CHECKED


@pytest.mark.parametrize('query', ['', 'error timeout', 'Seattle snow'])
@pytest.mark.parametrize('path', corpus_files('csv'), ids=lambda p: p.name)
def test_table_header_survives(path, engine, query):
    import csv, io
    r = engine.compress(path.read_bytes(), query=query)
    orig = next(csv.reader(io.StringIO(path.read_text(), newline='')))
    got = list(csv.reader(io.StringIO(r.output.decode(), newline='')))
    assert got[0] == orig and len({len(row) for row in got}) == 1


def test_markdown_table_header_survives(engine):
    md = '| id | host | state |\n|---|---|---|\n' + ''.join(f'| {i} | web-{i:03} | healthy |\n' for i in range(80))
    r = engine.compress(md)
    assert r.content_type == 'tabular' and r.method == 'tabular'
    assert r.output.decode().split('\n')[:2] == ['| id | host | state |', '| --- | --- | --- |']


@pytest.mark.parametrize('path', corpus_files('html'), ids=lambda p: p.name)
def test_html_view_has_no_script_style_nav_text(path, results):
    r = results[path]
    assert r.method == 'html'
    only_hidden = hidden_only_text(path.read_text())
    flat = ' '.join(r.output.decode().split())
    assert [t for t in only_hidden if t in flat] == []
    HIDDEN[path.name] = len(only_hidden)

HIDDEN = {}

def test_html_had_hidden_text_to_drop():
    "Runs after the test above: at least two pages had script/style/nav text found nowhere else."
    assert sum(v > 0 for v in HIDDEN.values()) >= 2, HIDDEN


# ---------------------------------------------------------------- best-of, dry run (reference §10.6)
def test_best_of_simulate_is_not_lossy_but_requires_the_store():
    from caveman.compressors import json as json_mod, toon as toon_mod
    rows = json.dumps([{'id': i, 'state': 'charged'} for i in range(40)]).encode()
    counts = {rows.decode(): 100, toon_mod.COMPRESSOR(rows).output.decode(): 10, json_mod.COMPRESSOR(rows).output.decode(): 20}
    class Fixed:
        name = 'fixed'
        def count(self, text): return counts.get(text, 1)
    store = ccr.open_store(':memory:')
    with modified_env(CAVE_ENGINE_TOON='best-of'): engine = Engine(store, counter=Fixed())
    sim = engine.simulate(rows)
    assert (sim['method'], sim['lossy'], sim['requires_ccr'], sim['recoverable'], sim['tokens_after']) == ('toon', False, True, True, 10)
    assert store.summary()['totals']['count'] == 0
    with modified_env(CAVE_ENGINE_TOON='best-of'): no_store = Engine(counter=Fixed())
    assert no_store.compress(rows).passed_through          # S4 without a store: pass-through


# ---------------------------------------------------------------- the table for the report
def measure(runs: int = 5) -> list[tuple]:
    e = Engine(ccr.open_store(':memory:'))
    rows = []
    for p in FILES:
        data = p.read_bytes()
        r = e.compress(data)
        ts = []
        for _ in range(runs):
            t0 = time.perf_counter(); e.compress(data); ts.append(time.perf_counter() - t0)
        rows.append((p.name, r.content_type, r.tokens_before, r.tokens_after, r.ratio, statistics.median(ts) * 1e3))
    return rows

if __name__ == '__main__':
    print(f'{"file":46s} {"type":14s} {"tokens":>8s} {"after":>8s} {"ratio":>6s} {"ms":>7s}')
    for name, kind, before, after, ratio, ms in measure():
        print(f'{name:46s} {kind:14s} {before:8d} {after:8d} {ratio:6.3f} {ms:7.1f}')


# ---------------------------------------------------------------- tables of distinct records (guard cap)
@pytest.mark.parametrize('query, code', [('France Paris', 'FRA'), ('Japan Tokyo', 'JPN'), ('Kenya Nairobi', 'KEN')])
def test_entity_table_keeps_what_a_query_asks_for(query, code):
    "The country table is elided to its rule rows; a query brings back the row it names, whole, header and width intact."
    import csv, io
    from caveman.corpus import corpus_path
    e = Engine(ccr.open_store(':memory:'))
    data = corpus_path('csv_country_codes.csv').read_bytes()
    orig = list(csv.reader(io.StringIO(data.decode(), newline='')))
    target = next(r for r in orig if r[2] == code)
    plain, asked = e.compress(data), e.compress(data, query=query)
    plain_rows = list(csv.reader(io.StringIO(plain.output.decode(), newline='')))
    rows = list(csv.reader(io.StringIO(asked.output.decode(), newline='')))
    assert target not in plain_rows and target in rows and rows[0] == orig[0] and {len(r) for r in rows} == {len(orig[0])}
    assert plain.tokens_after < plain.tokens_before * 0.2


# ---------------------------------------------------------------- configs: what an agent needs survives
@pytest.mark.parametrize('path', corpus_files('yaml'), ids=lambda p: p.name)
def test_config_skeleton_and_flags_survive(path, results):
    "Every top-level key, every flagged line and every document's first comment line are in the view; the view parses as YAML."
    import yaml
    r = results[path]
    text = path.read_text()
    lines = text.split('\n')
    view = view_lines(r)
    flag = re.compile(r'\b(?:ERROR|FAIL|FAILED|FATAL|PANIC|EXCEPTION|WARNING|SECURITY|SECRET|TOKEN|PASSWORD|DENIED|REJECTED|ROLLBACK)\b', re.I | re.A)
    must = [l for l in lines if (l[:1].strip() and not l.startswith(('#', '- ')) and re.match(r'[^\s#][^:]*:(\s|$)', l)) or flag.search(l)]
    must += [next(x for x in lines[i + 1:] if x.strip()) for i, l in enumerate(lines) if l == '---' and any(x.strip() for x in lines[i + 1:])]
    assert [m for m in must if m not in view] == []
    assert list(yaml.safe_load_all(r.output.decode())) is not None
    if path.name.startswith('yaml_gha'):                      # every job of the workflow is still named
        jobs = yaml.safe_load(text)['jobs']
        assert all(f'  {j}:' in view or any(l.startswith(f'  {j}:') for l in view) for j in jobs)
