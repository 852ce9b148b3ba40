"""The search-result compressor on big payloads (issue 12): its hits are machine-int arrays over the input's own lines
(no object per hit, a flat hit is its own line), its view is written a piece at a time — and still tells the truth by
`test_marker_truth.check_search`, a judge that reads the original with its own code — and its peak memory stays a small
multiple of the payload (it was 17x: a `Hit` per line, the flat lines, texts and output lines as lists, the view as a str)."""
import sys, tracemalloc
from array import array
from pathlib import Path

import pytest
from caveman.compressors import search
from caveman.compressors.search import compress_search, decoded_lines, scan_hits
from test_marker_truth import check_search

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'benchmarks'))
from bench_scale import build   # noqa: E402


def test_hits_are_arrays_over_the_lines():
    "Per line, three 4-byte ints; a flat hit's spelling is the input line itself, not a copy; one name per path."
    lines = build('search', 150_000).decode().split('\n')
    s = scan_hits(lines)
    for a in (s.pid, s.npos, s.tpos): assert isinstance(a, array) and a.itemsize == 4 and len(a) == len(lines)
    hits = [i for i in range(len(lines)) if s.pid[i] >= 0]
    assert len(hits) > len(lines) // 2 and not s.headers
    assert all(s.flat(i) is lines[i] for i in hits)
    assert len(s.paths) == len({s.hit(i).path for i in hits}) < len(hits) // 10


@pytest.mark.parametrize('crlf', [False, True])
def test_scale_views_read_back_in_pieces(monkeypatch, crlf):
    "A view written in pieces of a few lines reads back as the original, and is the view written in pieces of 4,096."
    body = build('search', 150_000)
    if crlf: body = body.replace(b'\n', b'\r\n')
    whole = compress_search(body)
    monkeypatch.setattr(search, '_SEGMENT', 5)
    got = check_search(body)
    assert got is not None and got[0] == whole and len(got[1]) > 20


def test_decoded_lines_cut_anywhere(monkeypatch):
    "Lines decoded a block at a time are the lines of the whole text, wherever a block ends; invalid UTF-8 still raises."
    body = build('search', 20_000) + 'é\n\nü'.encode()
    for block in (1, 2, 3, 50, 4096):
        assert decoded_lines(body, block) == body.decode().split('\n')
    with pytest.raises(UnicodeDecodeError): decoded_lines(body + b'\n\xff')


@pytest.mark.slow
def test_compressor_peak_memory_is_a_small_multiple_of_the_payload():
    "tracemalloc's peak over one `compress_search` of a 3 MB payload: under 5x the payload (17x before issue 12's fix)."
    body = build('search', 3_000_000)
    tracemalloc.start()
    try:
        out = compress_search(body)
        peak = tracemalloc.get_traced_memory()[1]
    finally: tracemalloc.stop()
    assert out is not None and len(out) < len(body) * 0.8
    assert peak < 5 * len(body), peak / len(body)


def test_flag_words_found_beside_the_signals_on_non_ascii_lines():
    "The flag words found in the signals' pass (`signals.FlagWords`, lines folded and lowered) flag the same lines as `flagged` line by line, on lines with ſ, the Kelvin sign, İ and a lone surrogate."
    from caveman.signals import OUTPUT
    lines = build('search', 100_000).decode().split('\n')
    lines = [l + (' ſecret \u212aey İ é' if i % 3 == 0 else '') for i, l in enumerate(lines)] + ['Token é', 'x\ud800 KEY']
    got = search._FLAGGED.flags(lines, OUTPUT)[1]
    assert [bool(b) for b in got] == [search.flagged(l) for l in lines] and any(got)
