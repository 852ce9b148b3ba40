"""The diff compressor on big payloads (issue 12): the signal scan, most of its time, reads only the segments (from one
`@@` / `diff ` line to the next) that hold a large block — the only lines whose signal decides anything — and gives
each of their lines the flag a scan of the whole diff gives it."""
import sys
from pathlib import Path

import pytest
from caveman.compressors import diff
from caveman.corpus import corpus_files
from caveman.lines import split_lines
from caveman.signals import diff_signal_flags

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'benchmarks'))
from bench_scale import build   # noqa: E402


def _payloads():
    yield 'bench', build('diff', 300_000)
    for p in corpus_files('diff'): yield p.name, p.read_bytes()


@pytest.mark.parametrize('name,body', list(_payloads()), ids=lambda x: x if isinstance(x, str) else '')
def test_block_signals_are_the_whole_scans(name, body):
    "For every line of every large block: the flag read from its segments alone is the flag of the whole diff's scan."
    lines, _ = split_lines(body)
    roles = diff._roles(lines)
    spans = list(diff._blocks(body, lines, roles))
    assert spans
    whole = diff_signal_flags([l.decode('utf-8', 'replace').rstrip('\r') for l in lines])
    got = diff._block_signals(body, lines, spans)
    for a, b in spans:
        for k in range(a, b): assert got.get(k) == whole[k], (k, got.get(k), whole[k])


def test_signal_scan_reads_only_the_segments_with_a_block(monkeypatch):
    "A diff of many small edits and one new file: the signal scan is given the new file's segment, not the edits (it read every line)."
    edits = b''.join(b'diff --git a/f%d.py b/f%d.py\n--- a/f%d.py\n+++ b/f%d.py\n@@ -1,9 +1,9 @@\n' % (i, i, i, i)
                     + b''.join(b' keep %d\n' % k for k in range(4)) + b'-old = 1\n+new = 2\n'
                     + b''.join(b' tail %d\n' % k for k in range(4)) for i in range(500))
    new = b'diff --git a/n.py b/n.py\n--- /dev/null\n+++ b/n.py\n@@ -0,0 +1,40 @@\n' + b''.join(b'+v%d = %d\n' % (k, k) for k in range(40))
    body = edits + new
    read = []
    real = diff.diff_signal_flags
    monkeypatch.setattr(diff, 'diff_signal_flags', lambda ls: (read.append(len(ls)), real(ls))[1])
    out = diff.compress_diff(body)
    assert out is not None and b'added lines elided' in out and b'context lines elided' not in out
    assert read == [41], read                                   # the `@@` line and the block, of 7,544 lines
