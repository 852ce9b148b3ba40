"""`caveman.report.align` on real payloads and generated ones: the runs tile both texts, each marker is paired
with exactly the units it replaced, and every claim a real compressor wrote holds on those units."""
import json, random

import pytest
from hypothesis import given, settings, HealthCheck, strategies as st

from caveman import ccr
from caveman.compressors.base import elide_runs, log_fields, summarize_elided, json_fields
from caveman.corpus import corpus_files
from caveman.engine import Engine
from caveman.report import MARKER_KEY, INVARIANTS_KEY, align, parse_invariants, check_claims, report_html


def tiles(a) -> bool:
    "View spans tile the view in order; original spans (sorted) tile the original."
    if ''.join(a.view_text(r) for r in a.runs) != a.view: return False
    pos = 0
    for s, e in sorted(r.original for r in a.runs if r.original is not None):
        if s != pos: return False
        pos = e
    return pos == len(a.original)


ENGINE = Engine(ccr.open_store(':memory:'))


@pytest.mark.parametrize('path', corpus_files(), ids=lambda p: p.name)
def test_corpus(path):
    data = path.read_bytes()
    r = ENGINE.compress(data)
    a = align(data, r.output, r.content_type)
    assert tiles(a)
    if r.passed_through: assert [x.kind for x in a.runs] == ['kept']
    if r.content_type in ('json', 'log', 'diff', 'tabular', 'search-result', 'config', 'terminal', 'text') and not r.passed_through:
        assert a.exact, path.name
    for run in a.elided:
        if run.marker.unit == 'lines': assert a.original_text(run).count('\n') == run.marker.count
        assert all(c.holds is not False for c in run.claims), [(c.text, c.holds) for c in run.claims]
    if r.content_type == 'json' and a.elided:
        for run in a.elided:   # the indented original run parses back to exactly `count` elements (or, for a
            got = json.loads('[' + a.original_text(run).strip().rstrip(',') + ']')   # keyed table, members)
            shown = json.loads(a.view_text(run).strip().rstrip(','))
            if len(got) == 1 and isinstance(shown, dict) and MARKER_KEY in shown and not shown.keys() <= {MARKER_KEY, INVARIANTS_KEY, '__caveman_note__'}:
                assert len(set(got[0]) - set(shown)) == run.marker.count
            else: assert len(got) == run.marker.count
    page = report_html(data, r, source=path.name)
    assert page.count('class="cv-mark"') == len(a.elided)


# ------------------------------------------------------------------------------- generated logs through elide_runs

levels = st.sampled_from(['info', 'debug', 'warn'])
line = st.builds(lambda lvl, i, ms, word: f'ts=2026-01-01 level={lvl} req=r-{i:04d} ms={ms} msg={word}',
                 levels, st.integers(0, 9999), st.integers(0, 500), st.sampled_from(['ok', 'retry', 'done', 'queued']))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(line, min_size=4, max_size=60), st.data(), st.booleans())
def test_log_views(lines, data, trailing):
    keep = data.draw(st.lists(st.booleans(), min_size=len(lines), max_size=len(lines)))
    out, _ = elide_runs(lines, keep, 'lines', log_fields)
    original = '\n'.join(lines) + ('\n' if trailing else '')
    view = '\n'.join(out) + ('\n' if trailing else '')
    a = align(original, view, 'log')
    assert tiles(a) and a.exact
    # every marker stands for exactly the lines dropped there, and its claims hold on them
    i = 0
    for run in a.runs:
        if run.kind == 'elided':
            n = run.marker.count
            assert a.original_text(run).split('\n')[:n] == lines[i:i + n]
            assert all(c.holds for c in run.claims), [(c.text, c.holds) for c in run.claims]
            i += n
        elif run.kind == 'kept':
            i += a.original_text(run).count('\n') + (0 if a.original_text(run).endswith('\n') else 1)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.fixed_dictionaries({'id': st.integers(0, 10**6), 'state': st.sampled_from(['ok', 'failed', 'queued']),
                                       'amount': st.decimals(0, 1000, places=2).map(str)}), min_size=9, max_size=40),
       st.data())
def test_json_views(records, data):
    "Arrays with runs replaced by marker objects whose summaries come from the real summarizer."
    n = len(records)
    cut = sorted(data.draw(st.sets(st.integers(0, n), min_size=2, max_size=6)))
    runs = [(a, b) for a, b in zip(cut[::2], cut[1::2]) if b > a]
    view_items, pos = [], 0
    for a, b in runs:
        view_items += records[pos:a]
        units = [json_fields(r) for r in records[a:b]]
        summary = summarize_elided(units, sum(len(json.dumps(r)) + 1 for r in records[a:b]))
        view_items.append({MARKER_KEY: b - a, **({INVARIANTS_KEY: summary} if summary else {})})
        pos = b
    view_items += records[pos:]
    original = json.dumps({'items': records, 'page': 1}, indent=data.draw(st.sampled_from([None, 1, 2, 4])))
    view = json.dumps({'items': view_items, 'page': 1}, separators=(',', ':'), sort_keys=True)
    a = align(original, view, 'json')
    assert tiles(a) and a.exact and a.reindented
    assert len(a.elided) == len(runs)
    for run, (lo, hi) in zip(a.elided, runs):
        assert json.loads('[' + a.original_text(run).strip().rstrip(',') + ']') == records[lo:hi]
        assert all(c.holds for c in run.claims), [(c.text, c.holds) for c in run.claims]


def test_false_claims_are_caught():
    "A marker lying about its run is reported: each claim kind recomputed from the units."
    units = [[('state', '"ok"'), ('id', f'"r-{i:02d}"'), ('ms', str(10 + i))] for i in range(6)]
    truth = 'all state="ok"; range ms=10..15; id: "r-00".."r-05" all 6 present'
    assert all(c.holds for c in check_claims(parse_invariants(truth), units))
    for lie in ['all state="failed"', 'range ms=10..16', 'id: "r-00".."r-05" all 7 present', 'state: "ok"×5 "failed"×1',
                'id: 6 distinct, "r-01".."r-05"', 'all state=ok', 'all ms="10"', 'id: 6 distinct, "r-00".."r-05"']:
        assert [c.holds for c in check_claims(parse_invariants(lie), units)] == [False], lie


def test_terminal_and_table_rerenderings_line_up():
    "Kept lines a compressor re-renders (ANSI stripped, CSV re-quoted) still align by the loose key."
    orig = 'a\n\x1b[31mERROR\x1b[0m x\n' + ''.join(f'line {i}\n' for i in range(10)) + 'end\n'
    view = 'a\nERROR x\n… 10 lines elided (caveman) …\nend\n'
    a = align(orig, view, 'terminal')
    assert a.exact and [r.kind for r in a.runs] == ['kept', 'elided', 'kept']
    csv_orig = 'name,n\n"alpha",1\n' + ''.join(f'"r{i}",{i}\n' for i in range(15)) + '"omega",99\n'
    csv_view = 'name,n\nalpha,1\n"… 15 rows elided (caveman): range n=""0""..""14"" …",\nomega,99\n'
    a = align(csv_orig, csv_view, 'tabular')
    assert [r.kind for r in a.runs] == ['kept', 'elided', 'kept']
    assert a.original_text(a.elided[0]).count('\n') == 15 and a.elided[0].claims[0].holds


def test_unknown_text_never_raises():
    rnd = random.Random(7)
    alphabet = ['a', ' ', '\n', '\r', '"', '{', '}', '[', ']', ',', ':', '…', '\x1b', '… 3 lines elided (caveman) …', MARKER_KEY]
    for _ in range(300):
        o = ''.join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 60)))
        v = ''.join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 60)))
        a = align(o, v)
        assert ''.join(a.view_text(r) for r in a.runs) == a.view
