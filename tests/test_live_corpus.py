"""The live corpus (tests/_live.py: ~50 real commands run on this machine now) through the real `Engine`:
compressing never raises, every handle comes back byte for byte in a FRESH process sharing the store
file, compressing a view changes nothing further, no marker states a false fact (tests/_truth.py) and
no signal line is hidden without a marker that counts it (tests/_signals.py). Both checkers read the
original with their own code; this module imports them lazily so one missing checker fails only
its own test. Failures name the capture, so a problem is reproducible with `python tests/_live.py`."""
import hashlib, json, re, subprocess, sys, traceback

import pytest

from _live import live_corpus, MIN_CAPTURES   # noqa: F401  (session fixture)

from caveman import ccr
from caveman.engine import Engine

pytestmark = pytest.mark.slow


@pytest.fixture(scope='module')
def store_path(tmp_path_factory):
    return tmp_path_factory.mktemp('live-ccr') / 'ccr.db'

@pytest.fixture(scope='module')
def compressed(live_corpus, store_path):
    "name -> (original, Result or the exception text) for every capture, compressed once."
    eng, out = Engine(ccr.open_store(str(store_path))), {}
    for name, data in live_corpus:
        try: out[name] = (data, eng.compress(data))
        except Exception: out[name] = (data, traceback.format_exc())
    return out

def _results(compressed):
    return [(n, d, r) for n, (d, r) in compressed.items() if not isinstance(r, str)]


def test_live_corpus_is_large_enough(live_corpus):
    names = [n for n, _ in live_corpus]
    assert len(names) >= MIN_CAPTURES and len(set(names)) == len(names)
    assert all(isinstance(d, bytes) and d.strip() for _, d in live_corpus)


def test_live_compress_never_raises(compressed):
    raised = {n: r for n, (_, r) in compressed.items() if isinstance(r, str)}
    assert raised == {}


def test_live_views_are_smaller_or_passed_through(compressed):
    bad = [n for n, d, r in _results(compressed)
           if not (r.passed_through and r.output == d) and not (r.recovery_handle and r.tokens_after < r.tokens_before)]
    assert bad == []
    assert sum(1 for _, _, r in _results(compressed) if not r.passed_through) >= MIN_CAPTURES // 2


def test_live_recovery_from_a_fresh_process(compressed, store_path):
    "Every handle resolves to the exact original in another interpreter that opens the same store file."
    want = {r.recovery_handle: hashlib.sha256(d).hexdigest() for _, d, r in _results(compressed) if r.recovery_handle}
    assert want
    code = ('import hashlib, json, sys\nfrom caveman import ccr\ns = ccr.open_store(sys.argv[1])\n'
            'print(json.dumps({h: hashlib.sha256(s.get(h)).hexdigest() for h in json.loads(sys.stdin.read())}))')
    p = subprocess.run([sys.executable, '-c', code, str(store_path)], input=json.dumps(sorted(want)).encode(),
                       capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    got = json.loads(p.stdout)
    assert {h for h in want if got.get(h) != want[h]} == set()


def test_live_compressing_a_view_changes_nothing(compressed):
    eng = Engine(ccr.open_store(':memory:'))
    changed = []
    for n, _, r in _results(compressed):
        if r.passed_through: continue
        again = eng.compress(r.output, type=r.content_type)
        if not (again.passed_through or again.output == r.output): changed.append(n)
    assert changed == []


def test_live_no_false_claims(compressed):
    from _truth import false_claims
    problems = {n: p for n, d, r in _results(compressed) if not r.passed_through
                for p in [false_claims(d, r.output, r.content_type)] if p}
    assert problems == {}


def test_live_no_hidden_signals(compressed):
    from _signals import hidden_signals
    problems = {n: p for n, d, r in _results(compressed) if not r.passed_through
                for p in [hidden_signals(d, r.output, r.content_type)] if p}
    assert problems == {}


def _man_headings(text: str) -> list[str]:
    "Heading lines of a manual page, by the test's own rule: at most 3 spaces deep, capitalised, at most 8 words and no sentence end, after a blank line and over a deeper-indented line."
    lines, out = text.split('\n'), []
    for i in range(1, len(lines) - 1):
        l, nxt = lines[i], lines[i + 1]
        depth = len(l) - len(l.lstrip(' '))
        if (depth <= 3 and l[depth:depth + 1].isupper() and len(l.split()) <= 8 and not re.search(r'[.!?]', l)
                and not lines[i - 1].strip() and nxt.strip() and len(nxt) - len(nxt.lstrip(' \t')) > depth):
            out.append(l)
    return out

def test_live_man_headings_are_kept(compressed):
    "Every section and subsection heading of every manual page capture is a line of its view (issue 10, class 8)."
    checked, lost, pages = 0, {}, 0
    for n, d, r in _results(compressed):
        if not n.startswith('man_'): continue
        pages += b'\nNAME\n' in d                 # a manual, not "No manual entry" (an image without man pages)
        heads, view = _man_headings(d.decode('utf-8', 'replace')), set(r.output.decode('utf-8', 'replace').split('\n'))
        checked += len(heads)
        if gone := [h for h in heads if h not in view]: lost[n] = gone
    assert lost == {} and checked >= 5 * pages
