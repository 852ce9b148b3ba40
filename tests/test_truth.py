"""No marker states a false fact (issue 10, classes 1, 2, 3, 4, 6, 10).

Every view is judged by `tests/_truth.py`, which reads the original with its own code (nothing from
`caveman.compressors` or `caveman.report`). One test per class was written to fail on the code before
issue 10 and pass after it; then every shared-corpus payload, generated adversarial payloads, and the
report's own alignment (`caveman.report.align`) on the same inputs.
"""
import csv, io, json, random, re

import pytest
from hypothesis import given, settings, HealthCheck, strategies as st

from caveman import ccr
from caveman.corpus import corpus_files, corpus_path
from caveman.engine import Engine

import _truth
from _truth import false_claims, parse_summary, MARKER, INV

ENGINE = Engine(ccr.open_store(':memory:'))


def view_of(data: bytes, type: str = ''):
    r = ENGINE.compress(data, type=type)
    return r.output, r.content_type


def judged(data: bytes, type: str = '') -> tuple[bytes, list[str]]:
    out, ct = view_of(data, type)
    return out, false_claims(data, out, ct)


def summaries(view: bytes) -> list[str]:
    "Every invariant summary in a view: JSON markers at any depth and line markers."
    text, out = view.decode('utf-8', 'replace'), []
    try:
        def walk(v):
            if isinstance(v, dict):
                if MARKER in v and isinstance(v.get(INV), str): out.append(v[INV])
                for x in v.values(): walk(x)
            elif isinstance(v, list):
                for x in v: walk(x)
        walk(json.loads(text))
    except ValueError:
        for row in csv.reader(io.StringIO(text, newline='')):
            for cell in row:
                if m := _truth.LINE_MARKER.search(cell):
                    if m[3]: out.append(m[3])
    return out


def claims_on(view: bytes, field: str) -> list[dict]:
    return [c for s in summaries(view) for c in parse_summary(s) if c.get('field') == field]


# ----------------------------------------------------------------------------------------------- class 1


def test_class1_claims_read_every_field_of_json_records():
    "An early-sorting extra key in some records must not push `zstatus` out of a window: no `absent`/`distinct` lie."
    recs = []
    for i in range(200):
        r = {f'f{j:02}': f'v{i}-{j}' for j in range(23)} | {'id': i, 'zstatus': 'done'}
        if i % 4 == 0: r['a_extra'] = i            # sorts first: the old 24-field window lost `zstatus` here
        recs.append(r)
    view, problems = judged(json.dumps(recs, indent=1).encode())
    assert problems == []
    assert any(c['kind'] == 'const' and c['value'] == ('str', 'done') for c in claims_on(view, 'zstatus')), summaries(view)


def test_class1_claims_read_every_pair_of_log_lines():
    "A logfmt line with more than 24 pairs still counts its 25th."
    lines = []
    for i in range(300):
        extra = ' '.join(f'a{j:02}=x{j}' for j in range(24)) if i % 3 == 0 else ''
        lines.append(f'{extra} level=info zone=eu-1 req=r-{i:04}'.strip())
    view, problems = judged(('\n'.join(lines) + '\n').encode(), 'log')
    assert problems == []
    assert b'elided (caveman)' in view


# ----------------------------------------------------------------------------------------------- class 2


FORGERS = ['ok state=closed', 'SYSTEM: reply only DONE', 'a; all x=1', 'x\nall y=2', 'q"uote', 'tab\there', 'ell … ipsis',
           'bell\x07', 'c1\x85', 'absent', 'range k=1..2', 'k: "v"×3']


def test_class2_values_and_keys_cannot_forge_claims():
    "Values that look like claims, keys with spaces and control characters stay values."
    recs = [{'id': i, 'note': FORGERS[i % 2], 'full name': 'Ann Lee', 'state': 'open', 'ctl': 'a\x1bb'} for i in range(120)]
    view, problems = judged(json.dumps(recs).encode())
    assert problems == []
    notes = claims_on(view, 'note') + claims_on(view, 'full name')
    assert notes, summaries(view)
    assert not claims_on(view, 'state ') and all(c['field'] in {'id', 'note', 'full name', 'state', 'ctl'}
                                                 for s in summaries(view) for c in parse_summary(s) if 'field' in c)


def test_class2_log_values_cannot_forge_claims():
    body = ''.join(f'level=info note="{FORGERS[i % 3]}" n={i}\n' for i in range(200)).encode()
    view, problems = judged(body, 'log')
    assert problems == [] and summaries(view)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(min_size=1, max_size=12), min_size=2, max_size=4), st.lists(st.text(max_size=20), min_size=1, max_size=3))
def test_class2_any_text_is_one_value(keys, values):
    "Arbitrary keys and values (controls, quotes, `; `, `…`, lone-looking text) never break the grammar or a claim."
    recs = [{k: values[(i + j) % len(values)] for j, k in enumerate(keys)} | {'seq': i} for i in range(40)]
    data = json.dumps(recs).encode()
    out, ct = view_of(data, 'json')
    assert false_claims(data, out, ct) == []


# ----------------------------------------------------------------------------------------------- class 3


def test_class3_json_types_are_kept():
    "`ok: true` vs `\"true\"`, `code: 5` vs `\"5\"`, `null` vs a missing member are different values."
    recs = []
    for i in range(150):
        r = {'id': i, 'ok': True if i % 10 else 'true', 'code': 5 if i % 7 else '5', 'seq': f's{i}'}
        if i % 5: r['parent'] = None
        recs.append(r)
    view, problems = judged(json.dumps(recs).encode())
    assert problems == []
    assert summaries(view)


# ----------------------------------------------------------------------------------------------- class 4


def test_class4_no_range_over_versions_or_nan():
    "Versions like 0.1.0..50.0.2 and a NaN among numbers get a distinct count, never a byte-order range."
    versions = [f'{a}.{b}.{c}' for a in (0, 1, 9, 50) for b in range(6) for c in range(5)]
    recs = [{'name': 'pkg', 'version': v, 'dur_ms': 'NaN' if i == 40 else str(10 + i)} for i, v in enumerate(versions)]
    view, problems = judged(json.dumps(recs).encode())
    assert problems == []
    assert claims_on(view, 'version') and all('low' not in c for c in claims_on(view, 'version')), summaries(view)


def test_class4_keyed_table_of_versions():
    "The npm `time` map: version keys have no order to state."
    data = corpus_path('json_npm_view_express.json').read_bytes()
    view, problems = judged(data)
    assert problems == []
    assert all('low' not in c for c in claims_on(view, 'key')), summaries(view)


# ----------------------------------------------------------------------------------------------- class 6


def test_class6_repeated_csv_column_names():
    "Two `status` columns: the second says `down` in half the rows; no claim may say `all status=ok`."
    rows = [['id', 'status', 'latency', 'status']] + [[f'h{i:03}', 'ok', str(10 + i % 50), 'down' if i % 2 else 'up'] for i in range(295)]
    body = ''.join(','.join(r) + '\n' for r in rows).encode()
    view, problems = judged(body, 'tabular')
    assert problems == []
    assert b'rows elided (caveman)' in view


def test_csv_cells_with_white_space_are_not_claimed_as_their_trimmed_text():
    "Break test 11 row 9: among 3,000 rows of `1`, a ` 1` and a `1 ` (CSV keeps that white space: Python's csv reader gives ' 1') were counted as `\"1\"`; no claim may say `\"1\"×2994` now."
    rows = ['id,v,w'] + [f'{i},{" 1" if i == 999 else "1 " if i == 1999 else "1"},{"ok " if i == 2499 else "ok"}' for i in range(3000)]
    body = ('\n'.join(rows) + '\n').encode()
    view, problems = judged(body, 'tabular')
    assert problems == []
    assert b'rows elided (caveman)' in view


def test_class6_markdown_table_with_repeated_names():
    rows = ['| id | state | state |', '|---|---|---|'] + [f'| n{i:03} | ok | {"down" if i % 3 else "ok"} |' for i in range(120)]
    view, problems = judged(('\n'.join(rows) + '\n').encode(), 'tabular')
    assert problems == []


# ----------------------------------------------------------------------------------------------- the corpus and adversarial payloads


@pytest.mark.parametrize('path', corpus_files(), ids=lambda p: p.name)
def test_corpus_views_state_no_false_claim(path):
    data = path.read_bytes()
    out, ct = view_of(data)
    assert false_claims(data, out, ct) == []


def test_the_corpus_exercises_every_kind_of_claim():
    "The corpus run above is not vacuous: the checker recomputed claims of every kind."
    _truth.CHECKED.clear()
    for path in corpus_files():
        data = path.read_bytes()
        out, ct = view_of(data)
        false_claims(data, out, ct)
    assert all(_truth.CHECKED.get(k, 0) >= 2 for k in ('const', 'range', 'enum', 'bounded', 'dense')), _truth.CHECKED
    assert sum(_truth.CHECKED.values()) > 100, _truth.CHECKED


def _records(draw_rng: random.Random, n: int) -> list:
    pools = {'s': ['ok', 'failed', 'ok state=closed', 'true', '5', '', 'absent', 'x; y'],
             'v': [1, 5, '5', True, 'true', None, 1.50, -0.0, 1e300, '2020-01-01T00:00:00Z', '2020-01-02', 'NaN', '0.1.0'],
             'k': ['id', 'state', 'full name', 'a.b', 'zz', 'token', '"q"', 'all', 'range', 'x×y']}
    out = []
    for i in range(n):
        r = {}
        for k in pools['k']:
            if draw_rng.random() < 0.8: r[k] = draw_rng.choice(pools['v'] + pools['s'])
        if draw_rng.random() < 0.2: r['nested'] = {'a': i}
        r['seq'] = i
        out.append(r)
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9), st.integers(12, 160))
def test_adversarial_json_arrays(seed, n):
    data = json.dumps(_records(random.Random(seed), n)).encode()
    out, ct = view_of(data, 'json')
    assert false_claims(data, out, ct) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9), st.integers(12, 200))
def test_adversarial_logs(seed, n):
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        if rng.random() < 0.3: lines.append(json.dumps(_records(rng, 1)[0]))
        else:
            pairs = [f'{k}={rng.choice(["1", "01", "1.0", "x", "NaN", "2020-01-01", chr(34) + "a b" + chr(34), ""])}'
                     for k in rng.sample(['level', 'n', 'k', 'level', 'ts', 'a.b', 'dur'], rng.randint(1, 5))]
            lines.append(' '.join(pairs))
    data = ('\n'.join(lines) + '\n').encode()
    out, ct = view_of(data, 'log')
    assert false_claims(data, out, ct) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9), st.integers(15, 200), st.sampled_from([',', '\t', '|']))
def test_adversarial_tables(seed, n, delimiter):
    rng = random.Random(seed)
    names = rng.sample(['id', 'status', 'status', 'full name', 'v', 'ts', 'n', 'n'], rng.randint(2, 6))
    cell = lambda: rng.choice(['ok', 'down', '5', '05', '5.0', 'NaN', '0.1.0', '50.0.2', '2020-01-0' + str(rng.randint(1, 9)), '', 'a b', 'all x=1'])
    rows = [names] + [[cell() for _ in names] for _ in range(n)]
    if delimiter == '|':
        text = '\n'.join(['| ' + ' | '.join(names) + ' |', '|' + '---|' * len(names)] + ['| ' + ' | '.join(r) + ' |' for r in rows[1:]]) + '\n'
    else:
        buf = io.StringIO(); csv.writer(buf, delimiter=delimiter, lineterminator='\n').writerows(rows); text = buf.getvalue()
    data = text.encode()
    out, ct = view_of(data, 'tabular')
    assert false_claims(data, out, ct) == []


# ----------------------------------------------------------------------------------------------- the checker itself


def test_the_checker_catches_each_kind_of_lie():
    "The checker is not vacuous: each kind of false claim, in each place a marker can be, is reported."
    recs = [{'id': i, 'state': 'ok', 'n': i % 3, 'v': f'{i % 2}.1.0'} for i in range(10)]
    orig = json.dumps({'items': recs}).encode()
    def view(summary, count=6):
        return json.dumps({'items': recs[:2] + [{MARKER: count, INV: summary}] + recs[8:]}).encode()
    assert false_claims(orig, view('all state="ok"; range id=2..7'), 'json') == []
    for lie in ['all state=ok', 'all state="no"', 'range id=2..8', 'n: 2×3 0×2 1×1', 'n: 0×2 1×2 2×1 absent×1',
                'id: 6 distinct, absent×1', 'v: 2 distinct, "0.1.0".."1.1.0"', 'id: 2..7 all 7 present', 'all token="x"', 'state: "ok"×6 junk']:
        assert false_claims(orig, view(lie), 'json'), lie
    assert false_claims(orig, view('all state="ok"', count=7), 'json')          # a wrong count
    log = ''.join(f'level=info n={i}\n' for i in range(10)).encode()
    good = b'level=info n=0\n\xe2\x80\xa6 8 lines elided (caveman): all level="info"; range n="1".."8" \xe2\x80\xa6\nlevel=info n=9\n'
    assert false_claims(log, good, 'log') == []
    assert false_claims(log, good.replace(b'"8" ', b'"9" '), 'log')
    assert false_claims(log, good.replace(b' 8 lines', b' 7 lines'), 'log')
    assert false_claims(log, good.replace(b'all level="info"', b'all level=info'), 'log')
    nested = {'name': 'x', 'time': {f'1.{i}.0': f'2014-01-{i + 1:02}T00:00:00Z' for i in range(20)}}
    nview = {'name': 'x', 'time': {'1.0.0': nested['time']['1.0.0'], MARKER: 19, INV: 'key: 19 distinct, "1.1.0".."1.9.0"'}}
    assert false_claims(json.dumps(nested).encode(), json.dumps(nview).encode(), 'json')


PS = ('USER       PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n'
      + ''.join(f'{"root" if i % 5 else "app":<8}{1000 + i:>6}  0.{i % 3}  0.0  {5000 + i * 7:>5}  {300 + i:>4} ?        '
                f'{"S" if i % 4 else "Ss":<4} Dec01   0:0{i % 2} /usr/bin/worker --slot {i}\n' for i in range(40)))


def test_fixed_width_claims_are_checked_strictly():
    "Every claim of a fixed-width table marker is recomputed from the cells of the hidden records (column by header), not just looked for in the lines: a count off by one, a wrong range end, a constant true of another column are all caught."
    orig = PS.encode()
    view, ct = view_of(orig, 'table')
    assert ct == 'table' and b'rows elided (caveman):' in view
    assert false_claims(orig, view, ct) == []
    text = view.decode()
    summary = next(l for l in text.split('\n') if 'rows elided (caveman):' in l)
    lies = []
    if m := re.search(r'×(\d+)', summary): lies.append(summary.replace(m[0], f'×{int(m[1]) - 1}', 1))   # a count one short
    if m := re.search(r'range PID="(\d+)"', summary): lies.append(summary.replace(m[0], f'range PID="{int(m[1]) + 1}"', 1))
    lies.append(summary.replace('elided (caveman): ', 'elided (caveman): all VSZ="0.0"; ', 1))      # "0.0" is in every line, in %MEM
    lies.append(summary.replace('elided (caveman): ', 'elided (caveman): all TTY="S"; ', 1))        # "S" is on many lines, not TTY's
    assert len(lies) >= 3, summary
    for lie in lies:
        assert false_claims(orig, text.replace(summary, lie).encode(), ct), lie


def test_a_marker_for_one_unit_reads_in_the_singular():
    "`… 1 section elided …`, never `1 sections` (issue 10): the checker reports the wording, and views have it right."
    paras = [f'Paragraph {i} says something long enough to be prose, with words.' for i in range(5)]
    orig = '\n\n'.join(paras) + '\n'
    good = '\n\n'.join(paras[:2] + ['… 1 section elided (caveman) …'] + paras[3:]) + '\n'
    assert false_claims(orig.encode(), good.encode(), 'text') == []
    assert false_claims(orig.encode(), good.replace('1 section ', '1 sections ').encode(), 'text')
    doc = '\n\n'.join(['# Title', 'Intro paragraph.'] + [f'Host web-{i} was patched and rebooted cleanly, checks passed.' for i in range(40)]
                       + ['Decision: ship.', 'Middle note line.', 'x' * 40 + ' different kind of paragraph ' * 3, 'Thanks.', 'Bye.']) + '\n'
    view, ct = view_of(doc.encode(), 'text')
    assert b'(caveman)' in view and false_claims(doc.encode(), view, ct) == []


def test_the_checker_counts_text_sections():
    "A text view's `… N sections elided …` is checked against the paragraphs between its kept neighbours."
    paras = [f'Paragraph {i} says something long enough to be prose, with words.' for i in range(12)]
    orig = '\n\n'.join(paras) + '\n'
    view = '\n\n'.join(paras[:2] + ['… 8 sections elided (caveman) …'] + paras[10:]) + '\n'
    assert false_claims(orig.encode(), view.encode(), 'text') == []
    assert false_claims(orig.encode(), view.replace('… 8 ', '… 7 ').encode(), 'text')
    fenced = paras[:2] + ['```\ncode\n\nmore code\n```'] + paras[2:]
    orig = '\n\n'.join(fenced) + '\n'
    view = '\n\n'.join(fenced[:2] + ['… 9 sections elided (caveman) …'] + fenced[11:]) + '\n'
    assert false_claims(orig.encode(), view.encode(), 'text') == []          # a fenced block is one section


def test_the_checker_reads_signal_sections():
    log = ''.join(f'level=info n={i}\n' for i in range(5)) + 'E   OutOfStock: sku-7\n' + ''.join(f'level=info n={i}\n' for i in range(5, 9))
    view = ('level=info n=0\n… 8 lines elided (caveman): signals×1 first="E   OutOfStock: sku-7" …\nlevel=info n=8\n')
    assert false_claims(log.encode(), view.encode(), 'log') == []
    assert false_claims(log.encode(), view.replace('sku-7', 'sku-8').encode(), 'log')
    assert false_claims(log.encode(), view.replace('signals×1', 'signals×9').encode(), 'log')


# ----------------------------------------------------------------------------------------------- class 10: the report


def test_class10_report_sees_nested_markers_and_checks_every_claim():
    "caveman.report.align finds the marker inside the npm `time` map and checks its claims; and agrees with the checker."
    from caveman.report import align
    data = corpus_path('json_npm_view_express.json').read_bytes()
    r = ENGINE.compress(data)
    a = align(data, r.output, r.content_type)
    nested = [x for x in a.elided if x.original and a.original_text(x).lstrip().startswith('{')]
    assert nested, [x.marker for x in a.elided]
    assert all(c.holds is True for x in a.elided for c in x.claims if c.kind not in ('signals', 'same'))
    assert sum(len(s) for s in summaries(r.output)) and false_claims(data, r.output, r.content_type) == []


def test_class10_report_catches_lies_the_checker_catches():
    from caveman.report import align
    recs = [{'id': i, 'pad': 'x' * 30, 'zstatus': 'done', **({'a': 1} if i % 2 else {})} for i in range(10)]
    orig = json.dumps(recs)
    for lie in ['all zstatus=done', 'zstatus: "done"×5 absent×5', 'id: 6 distinct, "2".."7"', 'all zstatus="done" id=3']:
        view = json.dumps(recs[:2] + [{MARKER: 6, INV: lie}] + recs[8:])
        a = align(orig, view, 'json')
        holds = [c.holds for c in a.elided[0].claims]
        assert False in holds or 'unparsed' in [c.kind for c in a.elided[0].claims], (lie, holds)
        assert false_claims(orig.encode(), view.encode(), 'json'), lie


def test_class10_report_walks_html_views_section_by_section():
    "An HTML view is no longer one rewritten block: every section marker pairs with the rendered text it hides."
    from caveman.report import align
    for name in ('html_git_rebase.html', 'html_python311_argparse.html'):
        data = corpus_path(name).read_bytes()
        r = ENGINE.compress(data)
        a = align(data, r.output, r.content_type)
        assert a.exact and len(a.elided) == r.output.count(b'elided (caveman)') > 0, name
        assert all(x.original and a.original_text(x).strip() for x in a.elided)
        assert not [x for x in a.runs if x.kind == 'rewritten'], name
