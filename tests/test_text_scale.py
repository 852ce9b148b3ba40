"""The prose compressor on big payloads (issue 12): each section's heading shape is read once.

`is_heading` was asked twice of every section of a document without redundancy — by the heading rule
(`heading_keep`) and again by the outline that replaces the redundancy guard (`keep_document`) — about 6% of
the compressor's CPU on 1 MB of prose. Counted, not timed: the calls on whole sections are at most one per
section (the heading-line checks of `heading_spans` ask about first lines, not sections)."""
import sys
from pathlib import Path

from caveman.compressors import text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'benchmarks'))
from bench_scale import build   # noqa: E402


def test_each_section_is_read_as_a_heading_once(monkeypatch):
    body = build('prose', 200_000)
    t = body.decode()
    spans = text.table_spans(t, text.heading_spans(t, text.sections(t)))
    secs = {t[a:b] for a, b in spans}
    calls, real = [], text.is_heading
    monkeypatch.setattr(text, 'is_heading', lambda s: calls.append(s) or real(s))
    out = text.compress_text(body)
    assert out is not None and len(out) < len(body)
    on_sections = sum(s in secs for s in calls)
    assert len(spans) > 500 and on_sections <= len(spans)   # main: about twice the sections (heading rule, then the outline)
