"Property tests: a view's count read off its original's table (`tokens.view_count`) is exactly the direct count."
import random
from hypothesis import given, settings, strategies as st, HealthCheck
from caveman.corpus import corpus_files
from caveman.tokens import O200kCounter, count_with_cuts, view_count, piece_cut, o200k_encoding, encoded_length

_ALPHA = ['\n', '\n', ' ', '  ', '\t', ',', '/', 'a', 'B', '1', '"', '\u2028', '\r', '\x85', 'é', '{', '.', "'s", ':', '…', '\xa0', '-', 'word ', '日本', '#']
_MARK = '… 3 sections elided (caveman) …'

def _direct(b: bytes) -> int: return O200kCounter().count_utf8(b)

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_ALPHA), min_size=1, max_size=60))
def test_piece_cut_splits_exactly(parts):
    t = ''.join(parts).encode()
    enc = o200k_encoding()
    whole = encoded_length(enc, t.decode())
    for p in range(len(t) + 1):
        if piece_cut(t, p): assert encoded_length(enc, t[:p].decode()) + encoded_length(enc, t[p:].decode()) == whole

_lines = st.lists(st.lists(st.sampled_from(_ALPHA[2:]), max_size=12).map(''.join), min_size=20, max_size=120)

@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_lines, st.randoms(use_true_random=False), st.integers(1, 200))
def test_view_count_is_the_direct_count(lines, rng, min_block):
    original = '\n'.join(lines).encode()
    n, cuts = count_with_cuts(original)
    assert n == _direct(original)
    if cuts is None: return
    at, before = cuts
    for k in range(0, len(at), 7): assert before[k] == _direct(original[:at[k]])
    out, k = [], 0                                        # a view: runs of lines dropped for markers, some lines changed
    while k < len(lines):
        r = rng.random()
        if r < 0.2: out.append(_MARK); k += rng.randint(1, 6)
        elif r < 0.25: out.append(lines[k].upper() + rng.choice(['', ' x', '/', '…'])); k += 1
        else: out.append(lines[k]); k += 1
    view = '\n'.join(out).encode()
    got = view_count(view, original, cuts, min_block=min_block)
    assert got is None or got == _direct(view)

def test_view_count_on_the_corpus():
    "Every corpus file as its own original, with every fifth line dropped and every seventh a marker: derived = direct, and derived at all for the prose."
    rng = random.Random(3)
    for p in corpus_files():
        data = p.read_bytes()
        n, cuts = count_with_cuts(data)
        assert n == _direct(data)
        if cuts is None: continue
        lines = data.split(b'\n')
        view = b'\n'.join(l if k % 7 else _MARK.encode() for k, l in enumerate(lines) if k % 5 or rng.random() < 0.3)
        got = view_count(view, data, cuts)
        assert got is None or got == _direct(view), p.name
        if p.name.startswith('prose'): assert got is not None, p.name

def test_failed_searches_are_bounded(monkeypatch):
    "A view none of whose stretches is in the original reads the original at most `budget` times (no search per stretch over the whole original)."
    original = ('alpha beta gamma\n' * 4000).encode()
    view = '\n'.join(f'line {k} rewritten entirely, nothing of the original here, nothing at all, none\n{_MARK}' for k in range(500)).encode()
    n, cuts = count_with_cuts(original)
    seen = []
    class Spy(bytes):
        def find(self, sub, start=0, *a):
            seen.append(len(self) - start); return bytes.find(self, sub, start, *a)
    assert view_count(view, Spy(original), cuts) is None
    assert 0 < sum(seen) <= 2 * len(original)
