"""Detection from a bounded sample (issue 12 item 4) gives the same type as reading the payload whole.

`caveman.detect` lets the log and search-result rules say a clear no from `bounded_sample` of a
payload of >= SAMPLE_MIN_BYTES. The corpus files are all smaller than that, so here the sampling is
forced onto them with tiny samples (a few KiB, so the sample is a strict part of every file but the
smallest), and onto every live capture; the 1 MB payloads of `benchmarks/bench_scale.py` (every kind
it builds, from the corpus) use the default sample. The reference answer is the same `detect` with
sampling switched off (SAMPLE_MIN_BYTES above any payload)."""
import sys
from pathlib import Path

import pytest

from _live import live_corpus   # noqa: F401  (session fixture)

import caveman.detect as D
from caveman.corpus import corpus_files

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'benchmarks'))
import bench_scale   # noqa: E402

TINY = dict(SAMPLE_MIN_BYTES=0, SAMPLE_EDGE_BYTES=1024, SAMPLE_PROBES=4, SAMPLE_PROBE_BYTES=256)

def detect_with(monkeypatch, body: bytes, **settings) -> str:
    "`detect(body)` with the sampling constants of `caveman.detect` set to `settings` for this call."
    with monkeypatch.context() as m:
        for k, v in settings.items(): m.setattr(D, k, v)
        return D.detect(body)

def whole(monkeypatch, body: bytes) -> str: return detect_with(monkeypatch, body, SAMPLE_MIN_BYTES=1 << 62)

def sampled_part(monkeypatch, body: bytes, **settings) -> bytes:
    with monkeypatch.context() as m:
        for k, v in settings.items(): m.setattr(D, k, v)
        return D.bounded_sample(body)


@pytest.mark.parametrize('path', corpus_files(), ids=lambda p: p.name)
def test_corpus_tiny_sample_agrees(path, monkeypatch):
    body = D.unwrap(path.read_bytes())[0]
    if len(body) > 16 * 1024:                                   # the sample really leaves most of the file out
        assert len(sampled_part(monkeypatch, body, **TINY)) < len(body) // 2
    assert detect_with(monkeypatch, body, **TINY) == whole(monkeypatch, body)


@pytest.mark.slow
def test_live_captures_tiny_sample_agree(live_corpus, monkeypatch):
    differ = [(name, detect_with(monkeypatch, D.unwrap(data)[0], **TINY), whole(monkeypatch, D.unwrap(data)[0]))
              for name, data in live_corpus]
    assert [d for d in differ if d[1] != d[2]] == []


@pytest.mark.parametrize('kind', bench_scale.KINDS)
def test_bench_payloads_default_sample_agrees(kind, monkeypatch):
    body = D.unwrap(bench_scale.build(kind, 1_000_000))[0]
    assert len(body) >= D.SAMPLE_MIN_BYTES                       # the default sampling applies
    assert D.detect(body) == whole(monkeypatch, body)


def test_a_clear_no_never_reads_the_whole(monkeypatch):
    "On 1 MB of prose the log and search-result rules run on the sample only (the point of sampling)."
    body = bench_scale.build('prose', 1_000_000)
    seen = []
    for name in ('_is_log', '_is_search_result'):
        rule = getattr(D, name)
        monkeypatch.setattr(D, name, lambda b, relax=1, rule=rule, name=name: (seen.append((name, len(b))), rule(b, relax=relax))[1])
    assert D.detect(body) == 'text'
    assert seen and all(n < len(body) // 2 for _, n in seen), seen


def test_a_log_is_read_whole_once(monkeypatch):
    "The bench's 1 MB log holds bare CRs, so the terminal rule asks the log rule about the whole payload; the log rule then reuses that answer instead of reading the megabyte again (issue 12 item 4), and nothing is kept once `detect` returns."
    body = bench_scale.build('log', 1_000_000)
    assert body.count(b'\r') - body.count(b'\r\n') >= 3            # the terminal rule does ask
    whole_reads = []
    rule = D._is_log
    monkeypatch.setattr(D, '_is_log', lambda b, relax=1: (whole_reads.append(len(b)) if len(b) == len(body) else None, rule(b, relax=relax))[1])
    assert D.detect(body) == 'log'
    assert whole_reads == [len(body)]
    assert D._LOG_ANSWER is None


def test_no_prose_stops_early_and_agrees():
    "`classify_config`'s TOML/INI branch asks `no_prose` (one search stopping at the first prose line) instead of seven full counts; it agrees with `prose() == 0` on every corpus file and on the 1 MB bench payloads."
    for body in [p.read_bytes() for p in corpus_files()] + [bench_scale.build(k, 1_000_000) for k in ('prose', 'yaml', 'code_py', 'log')]:
        framed = b'\n' + body + b'\n'
        assert D._LineCounts(framed).no_prose() == (D._LineCounts(framed).prose() == 0)
    c = D._LineCounts(b'\n' + bench_scale.build('prose', 1_000_000) + b'\n')
    assert c.no_prose() is False and c.totals == {}                 # answered without counting any class
