"""Every elision marker tells the truth about the units it replaced.

For each payload we run the `json`, `log` and `tabular` compressors, map every marker back to the exact original
units it hides by walking the output against the original (kept units must appear verbatim, in
order), and recompute each stated claim from every field of those units with `tests/_truth.py` (the issue-10
grammar, typed values, positional table cells; written independently of `caveman.compressors.base`):
constants, ranges, enumerations (counts summing to the run, the `absent` bucket), dense and bounded coverage. Credential-shaped names are never mentioned.
Also: determinism, idempotence (a second pass declines) and never raising, on every corpus file.
"""
import csv, io, json, random, re, statistics, time, timeit
from decimal import Decimal

import pytest
from hypothesis import given, settings, HealthCheck, strategies as st

from caveman.corpus import corpus_files, corpus_path
from caveman.compressors.json import compress_json, COMPRESSOR as JSON_COMPRESSOR
from caveman.compressors.log import compress_log, COMPRESSOR as LOG_COMPRESSOR
from caveman.compressors.tabular import compress_table

import _truth   # the grammar, the field rules and the claim checks (independent of caveman)

ELL = '\u2026'
MARKER, INV, NOTE = '__caveman_elided__', '__caveman_invariants__', '__caveman_note__'
CONTRACT_PREFIX = ELL + ' caveman: elided '
CREDENTIAL = re.compile(r'secret|passw|token|api[-_]?key|authoriz|credential|cookie|session', re.I)
NUMBER = re.compile(r'[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z')
LOG_MARKER = re.compile(ELL + r' (\d+) lines? elided \(caveman\)(?:: (.*))? ' + ELL + r'\r?\Z')


# ---------------------------------------------------------------------------------------------------
# independent JSON reading: numbers as their lexemes

class Lex(str):
    "A JSON number, kept as the exact text it was written as."

def no_constant(s): raise ValueError(s)

def parse(text):
    return json.loads(text, parse_int=Lex, parse_float=Lex, parse_constant=no_constant)

def canon(v) -> str:
    "Compact JSON, sorted keys, raw non-ASCII, numbers as written."
    if isinstance(v, dict):
        return '{' + ','.join(json.dumps(k, ensure_ascii=False) + ':' + canon(v[k]) for k in sorted(v)) + '}'
    if isinstance(v, list): return '[' + ','.join(map(canon, v)) + ']'
    if isinstance(v, Lex): return str(v)
    if v is True: return 'true'
    if v is False: return 'false'
    if v is None: return 'null'
    return json.dumps(v, ensure_ascii=False)

def nbytes(s: str) -> int: return len(s.encode('utf-8', 'surrogatepass'))

# ---------------------------------------------------------------------------------------------------
# the summary grammar and its claims

def budget(elided: int) -> int:
    if elided <= 0: return 160
    return min(160, elided // 2, max(96, elided // 4))

KINDS = {}   # claim kind -> how many claims of that kind were checked (for the coverage test below)

def seen(kind: str): KINDS[kind] = KINDS.get(kind, 0) + 1

def check_summary(summary: str, units: list[dict], elided_bytes: int):
    "Assert that every claim of `summary` holds on the units' fields (`_truth` field dicts, one per unit): the grammar and the claims are `_truth`'s."
    n = len(units)
    if n < 2:
        assert summary == '', (summary, units[:3])
        return
    if not summary: return
    assert nbytes(summary) <= budget(elided_bytes), summary
    problems = []
    for c in _truth.parse_summary(summary):
        problems += _truth.check_claim(c, units, 'marker')
        kind = {'const': 'constant', 'enum': 'enumeration', 'bounded': 'bounded', 'range': 'range', 'dense': 'dense'}.get(c['kind'], c['kind'])
        if c['kind'] == 'enum' and any(v[0] == 'absent' for v, _ in c['counts']) or c['kind'] == 'bounded' and c['absent']: kind += ' absent'
        seen(kind)
    assert not problems, problems

def json_units(elements) -> list[dict]:
    return [_truth.record_fields(_truth.parse_json(canon(e))) for e in elements]


# ---------------------------------------------------------------------------------------------------
# mapping markers back to units

STRING_MARK = re.compile(ELL + r' (\d+) chars? elided \(caveman\) ' + ELL)
FAIL_WORD = re.compile(r'(?<![A-Za-z0-9_])(?:error|errors|exception|failed|failure|critical|fatal|crash|panic|abort|timeout'
                       r'|denied|rejected)(?![A-Za-z0-9_])', re.I)
CUT = []     # (original, cut) of every string the compressor shortened (coverage below)

def check_cut_string(orig: str, out: str):
    "A cut string: verbatim fragments of the original in order, each gap exactly counted, every short failure line kept."
    assert len(orig) > 1000
    parts = STRING_MARK.split(out)
    kept, counts = parts[0::2], [int(c) for c in parts[1::2]]
    assert counts and all(c >= 64 for c in counts), out[:200]
    pos = 0
    for frag, n in zip(kept, counts + [0]):
        assert orig[pos:pos + len(frag)] == frag
        pos += len(frag) + n
    assert pos == len(orig)
    assert kept[0] and orig.startswith(kept[0][:min(len(kept[0]), 120)])
    for line in orig.split('\n'):
        if len(line) <= 400 and FAIL_WORD.search(line): assert line in out, line
    CUT.append((orig, out))

def keyed_table(obj: dict) -> bool:
    "Independent restatement of the keyed-table rule: > 32 members, scalar values, >= 90% of keys with a digit."
    return (len(obj) > 32 and not any(isinstance(v, (dict, list)) for v in obj.values())
            and sum(bool(re.search(r'\d', k)) for k in obj) >= 0.9 * len(obj))

def json_runs(orig, out, runs: list):
    "Walk the output against the original; collect (marker, hidden elements, hidden bytes) in document order."
    if isinstance(orig, dict):
        assert isinstance(out, dict)
        if MARKER in out and MARKER not in orig:                 # a keyed table lost members
            assert keyed_table(orig) and set(out) - set(orig) <= {MARKER, INV, NOTE}
            hidden = [k for k in orig if k not in out]
            assert isinstance(out[MARKER], Lex) and int(out[MARKER]) == len(hidden) >= 1
            runs.append((out, [{'key': k, 'value': orig[k]} for k in hidden],
                         sum(nbytes(canon({k: orig[k]})) + 1 for k in hidden)))
            keys = [k for k in orig if k in out]
        else:
            assert set(orig) == set(out)
            keys = orig
        for k in sorted(keys): json_runs(orig[k], out[k], runs)
    elif isinstance(orig, list):
        assert isinstance(out, list)
        p = 0
        for e in out:
            if isinstance(e, dict) and MARKER in e:
                assert isinstance(e[MARKER], Lex) and e[MARKER].isdigit()    # a JSON integer
                n = int(e[MARKER])
                assert n >= 1
                assert set(e) <= {MARKER, INV, NOTE}
                assert p + n <= len(orig)
                runs.append((e, orig[p:p + n], sum(nbytes(canon(x)) + 1 for x in orig[p:p + n])))
                p += n
            else:
                assert p < len(orig)
                json_runs(orig[p], e, runs)
                p += 1
        assert p == len(orig)
    elif isinstance(orig, str) and not isinstance(orig, Lex) and isinstance(out, str) and orig != out:
        check_cut_string(orig, out)
    else:
        assert type(orig) is type(out) and orig == out, (orig, out)

def check_json(body: bytes, query: str = ''):
    out = compress_json(body, query)
    assert out == compress_json(body, query)                      # deterministic
    if out is None: return None
    out.decode('utf-8')                                          # valid UTF-8
    orig, doc = parse(body.decode('utf-8')), parse(out.decode('utf-8'))
    runs = []
    json_runs(orig, doc, runs)                                   # no runs and no cut strings: the same value, minified
    total = 0
    for marker, hidden, size in runs:
        total += size
        summary = marker.get(INV, '')
        assert summary != ''  if INV in marker else True
        assert 'verified' not in summary.lower() and 'caveman' not in summary
        check_summary(summary, json_units(hidden), size)
        if len(hidden) < 3: assert summary and 2 * (nbytes(summary) + 56) <= size   # worth eliding
    notes = [i for i, (m, _, _) in enumerate(runs) if NOTE in m]
    if total >= 4096:
        assert notes == [0]                                      # once, on the first marker in document order
        note = runs[0][0][NOTE]
        assert note.startswith(CONTRACT_PREFIX + 'elements ') and note.endswith(' ' + ELL) and 'verified' not in note.lower()
    else: assert notes == []
    assert compress_json(out, query) is None                     # a second pass (same query) changes nothing
    return out, runs

def check_log(body: bytes, query: str = ''):
    out = compress_log(body, query)
    assert out == compress_log(body, query)
    if out is None: return None
    text, orig = out.decode('utf-8'), body.decode('utf-8')
    olines, lines = orig.split('\n'), text.split('\n')
    assert (olines[-1] == '') == (lines[-1] == '')               # the final newline is kept or not kept
    if olines[-1] == '': olines.pop(); lines.pop()
    crlf = orig.count('\r\n') * 2 > orig.count('\n')
    runs, p, total, contract = [], 0, 0, 0
    for k, line in enumerate(lines):
        if p < len(olines) and line == olines[p]: p += 1; continue
        if line.startswith(CONTRACT_PREFIX):
            assert k == len(lines) - 1 and line.rstrip('\r').startswith(CONTRACT_PREFIX + 'lines ')
            assert 'verified' not in line.lower() and line.endswith('\r') == crlf
            contract += 1; continue
        m = LOG_MARKER.match(line)
        assert m, line
        assert line.endswith('\r') == crlf
        n = int(m.group(1))
        hidden = olines[p:p + n]
        assert len(hidden) == n
        size = sum(nbytes(h) + 1 for h in hidden)
        total += size
        summary = m.group(2) or ''
        check_summary(summary, [_truth.log_line_fields(h) for h in hidden], size)
        if n < 3: assert summary and 2 * nbytes(line.rstrip('\r')) <= size
        runs.append((line, hidden))
        p += n
    assert p == len(olines) and runs
    assert contract == (1 if total >= 4096 else 0)
    assert compress_log(out) is None
    return out, runs


# ---------------------------------------------------------------------------------------------------
# the corpus

@pytest.mark.parametrize('path', corpus_files('json'), ids=lambda p: p.name)
def test_json_corpus_markers_tell_the_truth(path):
    check_json(path.read_bytes())

@pytest.mark.parametrize('path', corpus_files('log'), ids=lambda p: p.name)
def test_log_corpus_markers_tell_the_truth(path):
    check_log(path.read_bytes())

@pytest.mark.parametrize('path', corpus_files() + corpus_files(catalogs=True), ids=lambda p: p.name)
def test_every_corpus_file_compresses_or_declines(path):
    body = path.read_bytes()
    for c in (JSON_COMPRESSOR, LOG_COMPRESSOR):
        for q in ('', 'error timeout'):
            r = c(body, q)
            assert r is None or (isinstance(r.output, bytes) and r.output != body)
            assert r == c(body, q)

def test_the_corpus_actually_exercises_markers():
    compressed = [r for p in corpus_files('json') if (r := check_json(p.read_bytes()))]
    compressed += [r for p in corpus_files('log') if (r := check_log(p.read_bytes()))]
    assert len(compressed) >= 5
    assert sum(len(runs) for _, runs in compressed) > 50


def test_corpus_exercises_cut_strings_and_keyed_tables():
    CUT.clear()
    _, pip_runs = check_json(corpus_path('json_pip_inspect.json').read_bytes())
    assert len(CUT) >= 3                                         # READMEs of the kept distributions
    _, npm_runs = check_json(corpus_path('json_npm_view_express.json').read_bytes())
    assert any(MARKER in m and isinstance(h[0], dict) and set(h[0]) == {'key', 'value'} for m, h, _ in npm_runs)


def test_minified_json_is_the_same_value():
    body = json.dumps({'b': [1, 2, 3], 'a': {'x': '1.10', 'y': None}, 'n': 1.50}, indent=2).encode().replace(b'"1.10"', b'1.10')
    out = compress_json(body)
    assert out == b'{"b":[1,2,3],"a":{"x":1.10,"y":null},"n":1.5}' and check_json(body)[1] == []
    assert JSON_COMPRESSOR(body, '').method == 'minify' and compress_json(out) is None


def test_random_long_strings_are_cut_truthfully():
    rng = random.Random(11)
    words = ['alpha', 'beta', 'error', 'Timeout', 'ok', 'fine', 'x' * 30, 'line\n', 'é', '😀', 'denied.', 'errors_url']
    CUT.clear()
    for trial in range(60):
        text = ' '.join(rng.choice(words) for _ in range(rng.randint(150, 900)))
        doc = {'id': trial, 'body': text, 'items': [text[:rng.randint(900, 1500)]] * rng.randint(1, 3), 'message': text}
        out = check_json(json.dumps(doc).encode())
        if out: assert json.loads(out[0])['message'] == text         # preserved key: never cut
    assert len(CUT) > 15


# ---------------------------------------------------------------------------------------------------
# synthetic ledgers

def test_json_200_charged_rows():
    rows = [{'id': i, 'state': 'charged', 'currency': 'EUR'} for i in range(200)]
    out, runs = check_json(json.dumps(rows).encode())
    assert [m.get(INV) for m, _, _ in runs] == ['all currency="EUR" state="charged"; range id=10..197']

def test_json_ledger_with_everything():
    rng = random.Random(5)
    rows = []
    for i in range(400):
        rows.append({'txn': f'txn-{10000 + i}', 'amount': f'{rng.randint(5, 19999) / 100:.2f}', 'state': 'charged',
                     'currency': rng.choice(['EUR', 'EUR', 'EUR', 'USD']), 'api_key': 'sk-live-1234', 'session_id': 's-1',
                     'Authorization': 'Bearer x', 'note': rng.choice(['', 'retry', None]), 'qty': rng.randint(1, 3),
                     'big': 10 ** 30 + i, 'ok': True, 'tags': ['a', 'b']})
    rows[123]['state'] = 'failed'
    body = json.dumps({'page': 1, 'rows': rows}).encode()
    body = body.replace(b'"amount": "', b'"amount": ').replace(b'", "state"', b', "state"')   # amounts as numbers like 5.00
    out, runs = check_json(body)
    text = out.decode()
    assert '"state":"failed"' in text                            # (kept numbers' spelling is checked by json_runs)
    for m, _, _ in runs:
        assert not CREDENTIAL.search(m.get(INV, ''))

def test_json_query_and_nested():
    doc = {'hosts': [{'host': f'web-{i:03}', 'zone': 'eu-1', 'checks': [{'name': f'c{j}', 'ok': True} for j in range(12)]}
                     for i in range(30)]}
    doc['hosts'][17]['host'] = 'quarantined-host-omega'
    for q in ('', 'quarantined-host-omega', 'zone'):
        check_json(json.dumps(doc).encode(), q)

def test_log_600_line_logfmt():
    body = ''.join(f'ts=2026-11-30T07:{i // 60:02}:{i % 60:02}Z level=INFO service=ledger msg="charge {i} settled" status=200 '
                   f'latency_ms={20 + i % 80} req=req-{i:04} token=t-{i} session=abc\n' for i in range(600)).encode()
    out, runs = check_log(body)
    assert len(runs) == 1 and 'all level="INFO" service="ledger" status="200"' in runs[0][0]
    assert 'token' not in runs[0][0] and 'session' not in runs[0][0]
    # over the 160-byte budget the range is shed before the coverage entries (reference §3.2 order)
    assert 'req: "req-0002".."req-0597" all 596 present' in runs[0][0] and 'range' not in runs[0][0]

def test_log_crlf_ndjson_and_mixed():
    nd = ''.join(json.dumps({'delivery_id': f'wh-{1000 + i}', 'status': 'retrying' if i % 3 == 0 else 'delivered',
                             'password': 'hunter2', 'n': i % 7}) + '\r\n' for i in range(300)).encode()
    check_log(nd)
    mixed = b''.join((f'level=WARN k={i % 3}' if i % 50 == 0 else f'level=INFO k={i % 3} user=u{i % 4}').encode() +
                     (b'\r\n' if i % 3 else b'\n') for i in range(300))
    check_log(mixed)
    check_log(mixed, 'user u2')


# ---------------------------------------------------------------------------------------------------
# random payloads: whatever the compressors decide, every marker must be true

_names = st.sampled_from(['id', 'state', 'zone', 'amount', 'note', 'api_key', 'kind', 'x y', 'ref'])
_values = st.one_of(st.sampled_from(['a', 'b', 'charged', 'absent', '', 'EUR', 'two words', 'dlv-2000', 'dlv-2001',
                                     'dlv-2003', 'n-9', 'n-10', '5.00', '1e2', '-3', '007']),
                    st.integers(-5, 2000), st.booleans(), st.none())

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.dictionaries(_names, _values, max_size=6), min_size=9, max_size=60), st.sampled_from(['', 'charged', 'dlv']))
def test_random_json_markers_tell_the_truth(rows, query):
    check_json(json.dumps({'rows': rows, 'n': len(rows)}).encode(), query)

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.dictionaries(_names.filter(lambda n: ' ' not in n), _values, max_size=5), min_size=4, max_size=80))
def test_random_logfmt_markers_tell_the_truth(rows):
    def fmt(v):
        v = json.dumps(v) if not isinstance(v, str) else v
        return f'"{v}"' if ' ' in v or not v else v
    body = '\n'.join(' '.join(f'{k}={fmt(v)}' for k, v in r.items()) or 'plain text line' for r in rows) + '\n'
    check_log(body.encode())


def test_seeded_random_payloads_state_every_kind_of_claim_truthfully():
    rng = random.Random(2026)
    KINDS.clear()
    compressed = 0
    for trial in range(150):
        n = rng.randint(9, 120)
        pools = {'state': rng.sample(['charged', 'refunded', 'failed', 'held', 'void', 'open'], rng.randint(1, 6)),
                 'zone': ['eu-1', 'us-2'][:rng.randint(1, 2)], 'note': ['retry', 'absent', 'x y', 'manual']}
        rows = []
        for i in range(n):
            r = {}
            if rng.random() < 0.9: r['id'] = f'dlv-{2000 + i + (rng.random() < 0.05)}' if trial % 2 else i * rng.choice([1, 1, 3])
            if rng.random() < 0.95: r['state'] = rng.choice(pools['state'])
            if rng.random() < 0.97: r['zone'] = rng.choice(pools['zone'])
            if rng.random() < 0.3: r['note'] = rng.choice(pools['note'])
            r['amount'] = rng.choice([f'{rng.randint(1, 9999) / 100:.2f}', rng.randint(1, 50)])
            r['token'] = f't-{rng.randint(0, 3)}'
            rows.append(r)
        if check_json(json.dumps(rows).encode()): compressed += 1
        log = '\n'.join(' '.join(f'{k}={v}' for k, v in r.items() if ' ' not in str(v)) for r in rows) + '\n'
        if check_log(log.encode()): compressed += 1
    assert compressed > 150
    for kind in ('constant', 'range', 'dense', 'bounded', 'bounded absent', 'enumeration', 'enumeration absent'):
        assert KINDS.get(kind, 0) > 0, (kind, KINDS)


# ---------------------------------------------------------------------------------------------------
# tables: read with the csv module (or by splitting markdown on '|'), walk the output rows against the
# original records, recompute each marker row's claims from the header-named cells it hides

ROW_MARKER = re.compile(ELL + r' (\d+) rows? elided \(caveman\)(?:: (.*))? ' + ELL + r'\Z')

def read_table(text: str, markdown: bool, delimiter: str) -> list[list[str]]:
    if markdown:
        return [[c.strip() for c in l.strip()[1:-1].split('|')] for l in text.replace('\r\n', '\n').strip().split('\n')]
    return [r for r in csv.reader(io.StringIO(text, newline=''), delimiter=delimiter) if r]

def check_table(body: bytes, query: str = '', markdown: bool = False, delimiter: str = ','):
    out = compress_table(body, query)
    assert out == compress_table(body, query)
    if out is None: return None
    text, orig_text = out.decode('utf-8'), body.decode('utf-8')
    orig, rows = read_table(orig_text, markdown, delimiter), read_table(text, markdown, delimiter)
    hr = 2 if markdown else 1
    assert rows[:hr] == orig[:hr] and len({len(r) for r in rows}) == 1 and len(rows[0]) == len(orig[0])
    assert text.endswith('\n') == orig_text.endswith('\n')
    crlf = orig_text.count('\r\n') * 2 > orig_text.count('\n')
    assert (text.count('\r\n') == text.count('\n')) if crlf else '\r\n' not in text.replace('"\r\n', '')
    header, records, p, total, runs, contract = orig[0], orig[hr:], 0, 0, [], 0
    for k, row in enumerate(rows[hr:]):
        if p < len(records) and row == records[p]: p += 1; continue
        assert all(c == '' for c in row[1:]), row
        if row[0].startswith(CONTRACT_PREFIX):
            assert k == len(rows) - hr - 1 and row[0].startswith(CONTRACT_PREFIX + 'rows ') and 'verified' not in row[0].lower()
            contract += 1; continue
        m = ROW_MARKER.match(row[0])
        assert m, row
        n = int(m.group(1))
        hidden = records[p:p + n]
        assert len(hidden) == n
        size = sum(nbytes(','.join(h)) + 1 for h in hidden)
        total += size
        summary = m.group(2) or ''
        check_summary(summary, [_truth.row_record(header, h) for h in hidden], size)
        if n < 3: assert summary and 2 * nbytes(row[0]) <= size
        runs.append((row[0], hidden))
        p += n
    assert p == len(records) and runs
    assert contract == (1 if total >= 4096 else 0)
    assert compress_table(out) is None                                # a second pass changes nothing
    return out, runs

@pytest.mark.parametrize('path', corpus_files('csv'), ids=lambda p: p.name)
@pytest.mark.parametrize('query', ['', 'snow Seattle', 'USA'])
def test_table_corpus_markers_tell_the_truth(path, query):
    check_table(path.read_bytes(), query)

def test_the_table_corpus_exercises_markers():
    got = [r for p in corpus_files('csv') if (r := check_table(p.read_bytes()))]
    assert got and sum(len(runs) for _, runs in got) >= 10

def ledger_rows(n=400, seed=9):
    rng = random.Random(seed)
    rows = [['txn', 'amount', 'state', 'currency', 'api_key', 'note', 'region']]
    for i in range(n):
        rows.append([f'txn-{10000 + i}', f'{rng.randint(500, 19999) / 100:.2f}', 'charged', rng.choice(['EUR', 'EUR', 'USD']),
                     'sk-live-1', rng.choice(['', 'retry, later', 'say "hi"']), rng.choice(['emea', 'emea', 'apac'])])
    rows[123][2] = 'FAILED'
    return rows

def test_table_ledger_csv_tsv_markdown_crlf():
    rows = ledger_rows()
    def csv_text(rows, d=',', eol='\n'):
        buf = io.StringIO(); csv.writer(buf, delimiter=d, lineterminator=eol).writerows(rows); return buf.getvalue()
    out, runs = check_table(csv_text(rows).encode())
    assert rows[123] in read_table(out.decode(), False, ',')
    assert any('all state=""charged""' in m or 'all state="charged"' in m for m, _ in runs) and not any('api_key' in m for m, _ in runs)
    check_table(csv_text(rows).encode(), 'txn-10200')
    check_table(csv_text(rows, '\t').encode(), delimiter='\t')
    check_table(csv_text(rows, eol='\r\n').encode()[:-2])                           # CRLF, no final newline
    md = '| ' + ' | '.join(rows[0]) + ' |\n|' + '---|' * len(rows[0]) + '\n' + ''.join(
        '| ' + ' | '.join(c.replace('"', '') for c in r) + ' |\n' for r in rows[1:])
    check_table(md.encode(), markdown=True)

_cells = st.sampled_from(['a', 'b', 'charged', 'absent', '', 'EUR', 'two words', 'x,y', 'q"q', ' lead', 'dlv-2000', 'dlv-2001',
                          '5.00', '1e2', '-3', '007', 'FAILED', 'n-9', 'n-10'])

TABLE_TRIALS = {'run': 0, 'compressed': 0}

@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(['id', 'state', 'zone', 'amount', 'note', 'token', 'kind', '', 'x y']),
                          st.lists(_cells, min_size=1, max_size=4)), min_size=2, max_size=6),
       st.integers(12, 90), st.randoms(use_true_random=False), st.sampled_from(['', 'charged', 'dlv']))
def test_random_table_markers_tell_the_truth(columns, n, rng, query):
    "Each column draws from a small pool of cells, so runs repeat and markers get summaries; an id-like column sometimes counts up."
    header = [name for name, _ in columns]
    rows = [[f'dlv-{2000 + i}' if name == 'id' and pool[0] == 'a' else rng.choice(pool) for name, pool in columns] for i in range(n)]
    buf = io.StringIO(); csv.writer(buf, lineterminator='\n').writerows([header] + rows)
    TABLE_TRIALS['run'] += 1
    if check_table(buf.getvalue().encode(), query): TABLE_TRIALS['compressed'] += 1

def test_random_tables_were_compressed():
    "Runs after the property above: a good share of the random tables really were compressed."
    assert TABLE_TRIALS['run'] == 0 or TABLE_TRIALS['compressed'] * 4 >= TABLE_TRIALS['run'], TABLE_TRIALS


def test_log_template_runs_keep_both_ends_and_every_failure():
    "Template runs (one varying field, digits masked): both ends kept, every must-keep line kept, the run's lines really share the template."
    from caveman.compressors.log import template_runs, must_keep_lines
    for name in ('log_pytest_requests_failures.log', 'log_npm_install_verbose.log', 'log_pip_install_verbose.log'):
        body = corpus_path(name).read_text()
        lines = body.split('\n')[:-1]
        kept = set(compress_log(body.encode()).decode().split('\n'))
        runs = template_runs(lines)
        assert len(runs) >= 3, name
        for a, b, _ in runs:
            assert b - a >= 4 and lines[a] in kept and lines[b - 1] in kept
            first = re.sub(r'[0-9]+', '#', lines[a]).split()
            slots = set()
            for line in lines[a:b]:
                f = re.sub(r'[0-9]+', '#', line).split()
                assert len(f) == len(first) >= 2
                slots |= {k for k in range(len(f)) if f[k] != first[k]}
            assert len(slots) <= 1
        assert all(l in kept for l, must in zip(lines, must_keep_lines(lines)) if must)


# ---------------------------------------------------------------------------------------------------
# one record per line behind a `word N:` prefix (issue 13: `item 0: status=ok size=0` … read as text, `item0: …` as a
# YAML mapping; both passed through with 0% saving). Generated and live payloads must now be a log whose markers tell
# the truth, keep their failure line and save most of their tokens; YAML with numbered keys stays config.

import subprocess, sys
from pathlib import Path

def _detect(body: bytes) -> str:
    from caveman.engine import Engine
    return Engine().detect(body)

def numbered_records(spelling: str, n: int = 3001, seed: int = 13) -> bytes:
    rnd = random.Random(seed)
    rows = [spelling.format(i=i, s=rnd.choice(['ok', 'ok', 'ok', 'slow']), z=rnd.randrange(0, 10**6)) for i in range(n - 1)]
    return ('\n'.join(rows + [spelling.format(i=n - 1, s='FAILED', z=0) + ' error=disk full']) + '\n').encode()

@pytest.mark.parametrize('spelling', ['item {i}: status={s} size={z}', 'item{i}: status={s} size={z}', 'worker-{i}: state={s} jobs={z}',
                                      'job_{i}: {s} in {z} ms', '  row {i}: status={s} bytes={z}'])
def test_numbered_record_lines_are_a_log_whose_markers_tell_the_truth(spelling):
    body = numbered_records(spelling)
    assert _detect(body) == 'log'
    out, runs = check_log(body)
    assert len(out) * 4 < len(body), (len(out), len(body))
    assert numbered_records(spelling).decode().rstrip('\n').rsplit('\n', 1)[1] in out.decode()     # the FAILED line

def _site() -> Path: return Path(next(p for p in sys.path if p.endswith('site-packages')))

LIVE_RECORDS = {    # real commands on this machine printing one `word N: key=value …` record per line
    'find_inodes': ['find', '{site}/pip', '-name', '*.py', '-printf', 'file%i: size=%s name=%f\n'],
    'ps_records': ['sh', '-c', "ps -eo pid=,rss=,comm= | awk '{print \"proc \" $1 \": rss=\" $2 \" cmd=\" $3}'"],
    'ls_records': ['sh', '-c', "ls -1 {site} | awk '{print \"entry \" NR \": name=\" $0 \" len=\" length($0)}'"],
}

@pytest.mark.parametrize('name', sorted(LIVE_RECORDS))
def test_live_numbered_records_are_a_log_whose_markers_tell_the_truth(name):
    argv = [a.replace('{site}', str(_site())) for a in LIVE_RECORDS[name]]
    body = subprocess.run(argv, capture_output=True, timeout=120, stdin=subprocess.DEVNULL).stdout
    if name == 'ps_records' and body.count(b'\n') < 12:           # a quiet container: pad with this machine's own listing
        body += subprocess.run(['sh', '-c', f"ls -1 {_site()} | awk '{{print \"proc \" NR+100000 \": rss=0 cmd=\" $0}}'"],
                               capture_output=True, timeout=120).stdout
    assert body.count(b'\n') >= 12, body[:300]
    assert _detect(body) == 'log', body[:300]
    out, runs = check_log(body)
    assert len(out) * 2 < len(body), (len(out), len(body))

def test_yaml_with_numbered_keys_stays_config():
    for path in corpus_files('yaml'): assert _detect(path.read_bytes()) == 'config', path.name
    configmap = b'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n' + b''.join(b'  key%d: value%d\n' % (i, i) for i in range(40))
    servers = b''.join(b'server%d:\n  host: h%d.example.com\n  port: %d\n' % (i, i, 8000 + i) for i in range(40))
    matrix = (b'name: ci\non: [push]\njobs:\n' + b''.join(b'  test%d:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make t%d\n' % (i, i)
                                                             for i in range(20)))
    for body in (configmap, servers, matrix): assert _detect(body) == 'config', body[:80]


# ---------------------------------------------------------------------------------------------------
# configs: walk the output lines against the original lines; each marker's hidden lines are checked
# with PyYAML's own node positions (pure-Python parser, not the compressor's code): comment runs are
# comment lines outside every scalar, whose removal leaves the loaded value unchanged; `same as P`
# hides exactly the lines of the entry at path P; `lines` markers sit inside a block scalar's body,
# clear of its first 3 and last 2 lines.

import yaml
from caveman.compressors.config import compress_config

CONFIG_MARKER = re.compile(r'([ \t]*)# ' + ELL + r' (\d+) (config lines?|comment lines?|lines?) elided \(caveman\)(?:: (.*))? ' + ELL + r'\r?\Z')
CONFIG_FLAG = re.compile(r'\b(?:ERROR|FAIL|FAILED|FATAL|PANIC|EXCEPTION|WARNING|SECURITY|SECRET|TOKEN|PASSWORD|DENIED|REJECTED|ROLLBACK)\b',
                         re.I | re.A)
PATH_PART = re.compile(r'\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')
CONFIG_KINDS = {}

def parse_path(text: str) -> tuple[list, int]:
    "yq path text (`.a.b[0][\"c.d\"]`, optional ` of document N`) -> (parts, document index from 0)."
    doc = 0
    if m := re.fullmatch(r'(.*) of document (\d+)', text): text, doc = m.group(1), int(m.group(2)) - 1
    parts, pos = [], 0
    while pos < len(text):
        m = PATH_PART.match(text, pos)
        assert m, text
        parts.append(m.group(1) if m.group(1) else int(m.group(2)) if m.group(2) else json.loads(m.group(3)))
        pos = m.end()
    return parts, doc

def node_last_line(n, lines) -> int:
    "Last line holding any character of node `n`'s content."
    if isinstance(n, yaml.ScalarNode):
        e = n.end_mark.line - (n.end_mark.column == 0)
        if n.style in ('|', '>'):
            while e > n.start_mark.line and not lines[e].strip(): e -= 1
        return e
    if n.flow_style: return n.end_mark.line - (n.end_mark.column == 0)
    kids = [x for kv in n.value for x in kv] if isinstance(n, yaml.MappingNode) else n.value
    return max([n.start_mark.line] + [node_last_line(k, lines) for k in kids])

def entry_lines(docs, lines, path_text: str) -> tuple[int, int]:
    "[start, end) lines of the entry at `path_text`: a key from its own line, an item from its node's line."
    parts, d = parse_path(path_text)
    node, start = docs[d], None
    for p in parts:
        if isinstance(p, int):
            assert isinstance(node, yaml.SequenceNode)
            node = node.value[p]; start = node.start_mark.line
        else:
            assert isinstance(node, yaml.MappingNode)
            k, node = next((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == p)
            start = k.start_mark.line
    return start, node_last_line(node, lines) + 1

def scalar_spans(docs, lines) -> list[tuple[int, int, str]]:
    "(first line, last content line, style) of every scalar node."
    out, stack = [], list(docs)
    while stack:
        n = stack.pop()
        if n is None: continue
        if isinstance(n, yaml.ScalarNode): out.append((n.start_mark.line, node_last_line(n, lines), n.style))
        elif isinstance(n, yaml.MappingNode): stack += [x for kv in n.value for x in kv]
        else: stack += n.value
    return out

def entry_spans(docs, lines) -> list[tuple[int, int]]:
    "[start, end) of every block-mapping key entry and block-sequence item, from the parser's marks."
    out, stack = [], [d for d in docs if d is not None]
    while stack:
        n = stack.pop()
        if isinstance(n, yaml.MappingNode) and not n.flow_style:
            for k, v in n.value:
                out.append((k.start_mark.line, node_last_line(v, lines) + 1)); stack.append(v)
        elif isinstance(n, yaml.SequenceNode) and not n.flow_style:
            for v in n.value:
                out.append((v.start_mark.line, node_last_line(v, lines) + 1)); stack.append(v)
    return out

def check_config(body: bytes, query: str = ''):
    out = compress_config(body, query)
    assert out == compress_config(body, query)
    if out is None: return None
    text, orig = out.decode('utf-8'), body.decode('utf-8')
    olines, lines = orig.split('\n'), text.split('\n')
    assert (olines[-1] == '') == (lines[-1] == '')
    if olines[-1] == '': olines.pop(); lines.pop()
    is_yaml = True
    try: docs = list(yaml.compose_all(orig, Loader=yaml.SafeLoader))
    except yaml.YAMLError: is_yaml = False
    if is_yaml: assert all(d is None or isinstance(d, yaml.Node) for d in docs)
    runs, p = [], 0
    for line in lines:
        if p < len(olines) and line == olines[p]: p += 1; continue
        m = CONFIG_MARKER.match(line)
        assert m, line
        n, unit, claim = int(m.group(2)), m.group(3) if m.group(3).endswith('s') else m.group(3) + 's', m.group(4) or ''
        hidden = olines[p:p + n]
        assert len(hidden) == n >= 1
        assert not any(CONFIG_FLAG.search(h) for h in hidden if unit != 'config lines' or claim), hidden   # flagged lines stay
        runs.append((unit, claim, p, n))
        p += n
    assert p == len(olines) and runs
    for l in olines:
        if CONFIG_FLAG.search(l): assert l in lines, l
    if is_yaml:
        assert yaml.safe_load_all(out) is not None and list(yaml.compose_all(out, Loader=yaml.SafeLoader)) is not None
        spans = scalar_spans(docs, olines)
        comment_rows = set()
        for unit, claim, a, n in runs:
            if unit == 'comment lines':
                assert all(l.lstrip(' \t')[:1] in ('#', ';') for l in olines[a:a + n])
                assert not any(s < i <= e for s, e, _ in spans for i in range(a, a + n))          # never text of a scalar
                comment_rows.update(range(a, a + n))
                CONFIG_KINDS['comment'] = CONFIG_KINDS.get('comment', 0) + 1
            elif unit == 'lines':
                blocks = [(s, e) for s, e, style in spans if style in ('|', '>') and s < a and a + n - 1 <= e]
                assert len(blocks) == 1, (a, n)
                s, e = blocks[0]
                assert a >= s + 1 + 3 and a + n - 1 <= e - 2                                      # both ends of the body stay
                CONFIG_KINDS['block'] = CONFIG_KINDS.get('block', 0) + 1
            elif claim:
                m = re.fullmatch(r'same as (under )?(.+)', claim)
                assert m, claim
                s, e = entry_lines(docs, olines, m.group(2))
                if m.group(1): s += 1
                assert olines[s:e] == olines[a:a + n], (claim, a)
                key = s - 1 if m.group(1) else s                                                # the entry's own key or item line: the
                assert s < a and olines[key] in lines                                           # first occurrence is earlier and shown (comments inside may be elided)
                CONFIG_KINDS['same as'] = CONFIG_KINDS.get('same as', 0) + 1
        hidden_rows = {i for _, _, a, n in runs for i in range(a, a + n)}
        for s0, e0 in entry_spans(docs, olines):                # every shown line inside an entry shows the entry's key line too
            if s0 in hidden_rows and any(i not in hidden_rows and olines[i].strip() and not olines[i].lstrip().startswith('#')
                                         for i in range(s0 + 1, e0)):
                raise AssertionError(f'line {s0 + 1} ({olines[s0].strip()!r}) is hidden but lines under it are shown')
        if comment_rows and all(u == 'comment lines' for u, *_ in runs):
            assert list(yaml.safe_load_all(out)) == list(yaml.safe_load_all(body))
        elif comment_rows:   # the same comment lines removed from the original: the loaded value is unchanged
            stripped = '\n'.join(l for i, l in enumerate(olines) if i not in comment_rows)
            assert list(yaml.safe_load_all(stripped)) == list(yaml.safe_load_all(body))
    assert compress_config(out, query) is None
    return out, runs

@pytest.mark.parametrize('path', corpus_files('yaml'), ids=lambda p: p.name)
@pytest.mark.parametrize('query', ['', 'checkout persist-credentials', 'prometheus retention'])
def test_config_corpus_markers_tell_the_truth(path, query):
    assert check_config(path.read_bytes(), query) is not None

def test_config_corpus_exercises_every_new_marker():
    CONFIG_KINDS.clear()
    for p in corpus_files('yaml'): check_config(p.read_bytes())
    assert CONFIG_KINDS.get('comment', 0) > 500 and CONFIG_KINDS.get('same as', 0) > 50 and CONFIG_KINDS.get('block', 0) >= 4, CONFIG_KINDS

def test_config_toml_ini_comments():
    "Distinct sections (nothing for the guard to elide), each documented by a comment paragraph: only comments go."
    words = 'ledger billing search mailer cache queue auth audit export import backup metrics'.split()
    keys = 'host port pool timeout retries region owner tier'.split()
    toml = '\n'.join(['title = "services"', ''] + [l for i, w in enumerate(words) for l in (
        f'# {w}: the primary store of the {w} team', '# keep the pool small, the proxy multiplexes', '# see the runbook',
        f'[{w}]', f'{keys[i % 8]} = "{w}-{i}.internal"', f'{keys[(i + 3) % 8]} = {5400 + i}', '')] +
        ['# WARNING: metrics is shared', '[payments]', 'host = "pay.internal"', 'port = 6000']) + '\n'
    out = compress_config(toml.encode()).decode()
    assert out.count('comment lines elided (caveman)') >= 10 and '# WARNING: metrics is shared' in out
    assert 'config lines elided' not in out
    try:
        import tomllib
        assert tomllib.loads(out) == tomllib.loads(toml)        # comments only: the same configuration
    except ImportError: pass
    ini = toml.replace('"', '').replace('title = services', '; services')
    out = compress_config(ini.encode()).decode()
    import configparser
    a, b = configparser.ConfigParser(interpolation=None), configparser.ConfigParser(interpolation=None)
    a.read_string(ini); b.read_string(out)
    assert {s: dict(a[s]) for s in a} == {s: dict(b[s]) for s in b} and out.count('comment lines elided (caveman)') >= 10
    indented = ini.replace('# see the runbook', '  # see the runbook')      # an indented INI line continues a value: not a comment
    assert '  # see the runbook' in compress_config(indented.encode()).decode()

_step_names = st.sampled_from(['checkout', 'setup', 'lint', 'test', 'build'])

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.tuples(_step_names, st.integers(0, 2), st.booleans()), min_size=1, max_size=6), min_size=2, max_size=8),
       st.integers(0, 12), st.booleans())
def test_random_workflows_markers_tell_the_truth(jobs, script_lines, documented):
    "Workflows built from a few step shapes (so entries repeat), optional comment paragraphs, a script of random length."
    out = ['name: generated', 'on: push', 'jobs:']
    for j, steps in enumerate(jobs):
        if documented: out += [f'  # job {j} runs the {steps[0][0]} stage', '  # on every push to main', '  # and on tags']
        out += [f'  job-{j}:', '    runs-on: ubuntu-latest', '    steps:']
        for name, variant, with_script in steps:
            out += [f'      - uses: actions/{name}@9c091bb21b7c1c1d1991bb908d89e4e9dddfe3e0', '        with:', f'          level: {variant}']
            if with_script and script_lines:
                out += ['      - run: |'] + [f'          echo step {k} of {name}' for k in range(script_lines)]
            out.append('')
    WORKFLOW_TRIALS['run'] += 1
    if (got := check_config(('\n'.join(out) + '\n').encode())) and any(claim for _, claim, _, _ in got[1]): WORKFLOW_TRIALS['same as'] += 1

WORKFLOW_TRIALS = {'run': 0, 'same as': 0}

def test_random_workflows_were_compressed():
    "Runs after the property above: most generated workflows got `same as` markers."
    assert WORKFLOW_TRIALS['run'] == 0 or WORKFLOW_TRIALS['same as'] * 2 >= WORKFLOW_TRIALS['run'], WORKFLOW_TRIALS


# ---------------------------------------------------------------------------------------------------
# search results: the grouped view read back (independently of the compressor) must be the original's
# lines in order, each marker standing for exactly its count of lines, all of the file named above it
# when it sits in a file's group; flagged hits always stay.

from caveman.compressors.search import compress_search

SEARCH_MARKER = re.compile(ELL + r' (\d+) search result lines? elided \(caveman\) ' + ELL + r'\r?\Z')
SEARCH_FLAG = re.compile(r'\b(?:ERROR|FAIL|FAILED|PANIC|ACTION|FOLLOWUP|SECURITY|SECRET|TOKEN|PASSWORD|KEY)\b', re.I | re.A)
NUMBERED_HIT = re.compile(r'(\d+)([:-])(.*)\Z', re.S)

def read_grouped(lines: list[str]) -> list[tuple[str, str | None]]:
    "(line as the tool printed it, or the marker itself; the file path of the group it sits in, None outside groups)."
    out, path = [], None
    for k, line in enumerate(lines):
        m = NUMBERED_HIT.match(line)
        if m and path is not None: out.append((f'{path}{m[2]}{m[1]}{m[2]}{m[3]}', path)); continue
        if path is not None and (line == '--' or SEARCH_MARKER.match(line)): out.append((line, path)); continue
        after = lines[k + 1] if k + 1 < len(lines) else ''
        path = (line if line and line != '--' and not re.search(r'[\s:]', line) and not line.isdigit()
                and (NUMBERED_HIT.match(after) or SEARCH_MARKER.match(after)) else None)
        if path is None: out.append((line, None))
    return out

def check_search(body: bytes, query: str = ''):
    out = compress_search(body, query)
    assert out == compress_search(body, query)
    if out is None: return None
    olines = [l for l, _ in read_grouped(body.decode('utf-8').split('\n'))]     # grouped input is read back the same way
    view = out.decode('utf-8').split('\n')
    p, runs = 0, []
    for line, path in read_grouped(view):
        if m := SEARCH_MARKER.match(line):
            n = int(m.group(1))
            hidden = olines[p:p + n]
            assert len(hidden) == n >= 3                                        # no summary: three lines or more
            if path is not None:
                assert all(h == '--' or h.startswith(path + ':') or h.startswith(path + '-') for h in hidden), (path, hidden[:3])
            assert not any(SEARCH_FLAG.search(h) for h in hidden)
            runs.append((n, path)); p += n
            continue
        assert p < len(olines) and line == olines[p], (line, olines[p] if p < len(olines) else None)
        p += 1
    assert p == len(olines)
    assert compress_search(out, query) is None
    return out, runs

@pytest.mark.parametrize('path', corpus_files('search'), ids=lambda p: p.name)
@pytest.mark.parametrize('query', ['', 'timeout session', 'model_validator mode wrap'])
def test_search_corpus_views_read_back(path, query):
    got = check_search(path.read_bytes(), query)
    assert got is not None and len(got[0]) < len(path.read_bytes())

_files = st.sampled_from(['src/app.py', 'src/app-2.py', 'lib/x-10-y.js', 'tests/test_app.py', 'docs/a b.md', 'README'])
_texts = st.sampled_from(['    client.send(request, timeout=30)', '', 'timeout = 5  # KEY', 'return x:1:2', '--', 'def f(a-1-b):'])

@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_files, st.integers(1, 400), st.booleans(), _texts), min_size=18, max_size=90), st.booleans(), st.booleans())
def test_random_search_views_read_back(hits, heading, command):
    "grep/rg-like output with matches and context lines, flat or already grouped: read back exactly, a second pass is a no-op."
    lines = ['$ rg -n -C1 timeout'] if command else []
    prev = None
    for path, n, match, text in hits:
        sep = ':' if match else '-'
        if heading:
            if path != prev: lines.append(path)
            lines.append(f'{n}{sep}{text}')
        else: lines.append(f'{path}{sep}{n}{sep}{text}')
        prev = path
    SEARCH_TRIALS['run'] += 1
    if (got := check_search(('\n'.join(lines) + '\n').encode())) and got[1]: SEARCH_TRIALS['elided'] += 1

SEARCH_TRIALS = {'run': 0, 'elided': 0}

def test_random_searches_were_compressed():
    "Runs after the property above: a good share of the generated searches had runs elided."
    assert SEARCH_TRIALS['run'] == 0 or SEARCH_TRIALS['elided'] * 4 >= SEARCH_TRIALS['run'], SEARCH_TRIALS


# ---------------------------------------------------------------------------------------------------
# terminal sessions: the view walks the rendered input (escapes removed, redraws collapsed: recomputed
# here) line by line; every marker hides exactly its count; command lines and failure lines stay.

from caveman.compressors.terminal import compress_terminal

TERM_ESC = re.compile(r'\x1b(?:\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[\x20-\x2f]+[\x30-\x7e]|[\x30-\x7e])')
TERM_FAIL = re.compile(r'\b(?:error|err|fatal|panic|exception|traceback|fail|failed|failure|warn|warning)\b', re.I | re.A)
TERM_PROMPT = re.compile(r'[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+:[^$#]*[$#](?: |\Z)|\$ |>>> |\.\.\. |In \[\d+\]: |PS [^>]*> ')
TERM_MARKER = re.compile(ELL + r' (\d+) lines? elided \(caveman\) ' + ELL + r'\r?\Z')

def screen_line(line: str) -> str:
    cr = line.endswith('\r')
    body = TERM_ESC.sub('', line[:-1] if cr else line)
    if '\r' in body: body = ([s for s in body.split('\r') if s] or [''])[-1]
    return body + ('\r' if cr else '')

TERM_FRAMES = re.compile(ELL + r' caveman: (\d+) frames? drawn over by a carriage return not shown ' + ELL + r'\Z')

def drawn_over(line: str) -> int:
    "Frames of one original line that a screen does not show: its non-empty carriage-return segments but the last."
    body = TERM_ESC.sub('', line[:-1] if line.endswith('\r') else line)
    return max(0, sum(1 for s in body.split('\r') if s) - 1) if '\r' in body else 0

def check_terminal(body: bytes):
    out = compress_terminal(body)
    assert out == compress_terminal(body)
    if out is None: return None
    olines = [screen_line(l) for l in body.decode('utf-8').split('\n')]
    vlines = out.decode('utf-8').split('\n')
    frames = sum(drawn_over(l) for l in body.decode('utf-8').split('\n'))
    notes = [k for k, l in enumerate(vlines) if TERM_FRAMES.match(l)]
    if frames:                                                 # the view says how many frames it does not show, once, last
        assert notes == [len(vlines) - 1 - (vlines[-1] == '')] and int(TERM_FRAMES.match(vlines[notes[0]])[1]) == frames, (notes, frames)
        del vlines[notes[0]]
    else: assert notes == []
    p, runs = 0, []
    for line in vlines:
        if (m := TERM_MARKER.match(line)) and not (p < len(olines) and olines[p] == line):
            n = int(m.group(1))
            hidden = olines[p:p + n]
            assert len(hidden) == n >= 3
            assert not any(TERM_FAIL.search(h) or TERM_PROMPT.match(h) for h in hidden), hidden
            runs.append(n); p += n; continue
        assert p < len(olines) and line == olines[p], (line, olines[p] if p < len(olines) else None)
        p += 1
    assert p == len(olines)
    assert compress_terminal(out) is None
    return out, runs

@pytest.mark.parametrize('path', corpus_files('terminal'), ids=lambda p: p.name)
def test_terminal_corpus_views_walk_back(path):
    out, runs = check_terminal(path.read_bytes())
    assert runs and sum(runs) > 40

_outputs = st.lists(st.sampled_from(['ok', 'total 8', 'drwxr-xr-x 2 root root 4096 .', 'Error: nope', 'step 3 done', '',
                                     '\x1b[32mPASSED\x1b[0m', 'progress 10%\rprogress 100%', 'warning: old', 'x' * 50]), max_size=40)

@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(['root@vm:/srv# ls -la', '$ make', '>>> help(len)', 'dev@box:~$ git log']), _outputs),
                min_size=1, max_size=8))
def test_random_sessions_walk_back(session):
    lines = [l for cmd, outs in session for l in [cmd] + [f'{o} {i}' if o else o for i, o in enumerate(outs)]]
    check_terminal(('\n'.join(lines) + '\n').encode())


# ---------------------------------------------------------------------------------------------------
# text: the view's sections, walked against the original's, are kept sections verbatim or markers
# counting exactly the sections they replaced; headings, fenced code and flagged sections always stay.

from caveman.compressors.text import compress_text

TEXT_MARKER = re.compile(ELL + r' (\d+) sections? elided \(caveman\) ' + ELL + r'\Z')
TEXT_FLAG = re.compile(r'\b(?:ERROR|WARNING|IMPORTANT|NOTE|ACTION|FOLLOWUP|SECURITY|SUMMARY|CONCLUSION|DECISION|RECOMMENDATION)\b', re.I | re.A)

def paragraphs(text: str) -> list[str]:
    "Sections the simple way: blank-line separated blocks, a ``` / ~~~ fence (to its closing fence) kept whole."
    out, cur, fence = [], [], None
    for line in text.split('\n'):
        s = line.strip()
        if fence:
            cur.append(line)
            if s and set(s) == {fence[0]} and len(s) >= len(fence) and len(line) - len(line.lstrip(' ')) <= depth + 3:
                out.append('\n'.join(cur)); cur, fence = [], None
            continue
        if m := re.match(r'( *)(```+|~~~+)', line):
            if cur: out.append('\n'.join(cur))
            cur, fence, depth = [line], m.group(2), len(m.group(1))
            continue
        if not s:
            if cur: out.append('\n'.join(cur)); cur = []
        else: cur.append(line)
    if cur: out.append('\n'.join(cur))
    return [p.strip() for p in out if p.strip()]

def check_text(body: bytes, query: str = ''):
    out = compress_text(body, query)
    assert out == compress_text(body, query)
    if out is None: return None
    orig, view = paragraphs(body.decode()), paragraphs(out.decode())
    i, runs = 0, 0
    for s in view:
        if m := TEXT_MARKER.fullmatch(s):
            n = int(m.group(1))
            hidden = orig[i:i + n]
            assert len(hidden) == n >= 1
            for h in hidden:
                assert not h.startswith('#') and not re.match(r'(```|~~~)', h) and not TEXT_FLAG.search(h), h[:80]   # headings, code, flags stay
            i += n; runs += 1; continue
        assert s == orig[i], (s[:80], orig[i][:80]); i += 1
    assert i == len(orig)
    assert compress_text(out, query) is None
    return out, runs

@pytest.mark.parametrize('path', corpus_files('prose'), ids=lambda p: p.name)
@pytest.mark.parametrize('query', ['', 'deprecated option', 'validation error'])
def test_text_corpus_views_walk_back(path, query):
    got = check_text(path.read_bytes(), query)
    assert got is not None and got[1] >= 10
