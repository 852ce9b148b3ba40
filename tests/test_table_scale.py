"""The table detector and compressor on big `ls -laR` output (issue 12, perf10): the column finder reads an ASCII block's
lines whole (one int per line, no token-by-token loop), the compressor reads an `ls -l` row's summary fields only for the
rows it elides and at most once, and neither keeps a list of every line of the text — counted (calls, traced bytes), not
timed. Before: every row's fields were read about four times (is the table `ls`, which rows to keep, the summary, the
cache's misses), every line of every block went through the token loop once per preamble tried, and detection plus
compression traced about 12x the payload."""
import re, subprocess, sys, textwrap
from pathlib import Path

import pytest
from caveman import detect
from caveman.compressors import listing

ROOT = Path(__file__).resolve().parents[1]


def ls_lr(dirs: int) -> bytes:
    "A deterministic `ls -laR` of `dirs` directories of 1-14 entries each (files, links, subdirectories), ASCII."
    out = []
    for d in range(dirs):
        n = 1 + d % 14
        rows = [('drwxr-xr-x', 2 + n, 4096, '.'), ('drwxr-xr-x', 9, 4096, '..')]
        for k in range(n):
            if k % 5 == 3: rows.append(('lrwxrwxrwx', 1, 12, f'link{k} -> ../target{k}.so'))
            elif k % 7 == 6: rows.append(('drwxr-xr-x', 2, 4096, f'sub{k}'))
            else: rows.append(('-rw-r--r--', 1, (d * 7919 + k * 104729) % 900_000, f'file_{d}_{k}.py'))
        w = max(len(str(s)) for _, _, s, _ in rows)
        out.append(f'/usr/lib/pkg{d}:\ntotal {4 * n}\n' + ''.join(
            f'{m} {l:2d} root root {s:>{w}} May {1 + (d + k) % 28:2d}  2025 {name}\n' for k, (m, l, s, name) in enumerate(rows)))
    return '\n'.join(out).encode()


BODY = ls_lr(400)


def elided_rows(view: bytes) -> int:
    return sum(int(m) for m in re.findall(rb'\xe2\x80\xa6 (\d+) rows? elided \(caveman\)', view))


def spy(monkeypatch, module, name: str) -> list:
    "Calls of `module.name` from now on (the first argument of each), each passed through to the real function."
    calls, real = [], getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: calls.append(a[0] if a else None) or real(*a, **k))
    return calls


def compress_afresh(body: bytes = BODY):
    "The table compressor's view of `body`, with detection's per-payload caches empty before and after."
    detect.forget_payloads()
    try: return listing.compress_fixed(body)
    finally: detect.forget_payloads()


def test_payload_is_a_recursive_listing():
    assert detect.detect(BODY) == 'table'
    view = listing.compress_fixed(BODY)
    assert view is not None and elided_rows(view) > 1000


def test_column_finder_reads_ascii_lines_without_the_token_loop(monkeypatch):
    "ASCII lines become their column fill in one C-level step: the token regex is never run over them (it ran once per line per preamble tried)."
    calls = []
    class Counting:
        def __init__(self, pat): self.pat = pat
        def finditer(self, *a): calls.append(1); return self.pat.finditer(*a)
        def __getattr__(self, name): return getattr(self.pat, name)
    monkeypatch.setattr(detect, '_TOKEN', Counting(detect._TOKEN))
    detect.forget_payloads()
    try: assert detect.detect(BODY) == 'table'
    finally: detect.forget_payloads()
    assert calls == []


def test_ls_fields_read_once_and_only_for_elided_rows(monkeypatch):
    "Summary fields are read only for rows the keep rules drop (a marker hides most of them), each once: fewer reads than rows (four a row before); which rows to keep needs only the grammar's match."
    calls = spy(monkeypatch, listing, 'ls_fields')
    view = compress_afresh()
    rows = len(re.findall(rb'(?m)^[-dl][rwx-]{9} ', BODY))
    assert elided_rows(view) <= len(calls) < rows, (elided_rows(view), len(calls), rows)


def test_detection_and_compression_trace_a_few_times_the_payload(tmp_path):
    "In a fresh process: tracemalloc's peak over detection plus the table compressor stays under 6x the payload (about 4x now, the process's fixed tables built before; 15x when each kept a list of every line, two copies of the text and a per-row cache)."
    big = tmp_path / 'ls.txt'
    big.write_bytes(ls_lr(2000))                                  # ~0.6 MB
    code = textwrap.dedent(f'''
        import tracemalloc
        from caveman import detect
        from caveman.compressors import listing
        from caveman.signals import signal_flags
        body = open({str(big)!r}, 'rb').read()
        signal_flags(['warm'], 'output')        # the process's fixed tables first (literal automaton, the catalogs' phrases: ~2 MB)
        tracemalloc.start()
        assert detect.detect(body) == 'table'
        assert listing.compress_fixed(body) is not None
        print(tracemalloc.get_traced_memory()[1] / len(body))
    ''')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) < 6.0, out.stdout


def test_each_summary_rendered_once(monkeypatch):
    "perf11: shedding entries over the budget is arithmetic on their lengths; a summary is rendered once, at the end (it was rendered again per shed step: about 5.6 renders a summary on `ls -laR`)."
    from caveman.compressors import base
    renders, summaries = spy(monkeypatch, base, '_render'), spy(monkeypatch, base, 'summary_text')
    assert compress_afresh() is not None
    assert summaries and len(renders) <= len(summaries), (len(renders), len(summaries))


def test_value_facts_judged_once_per_payload(monkeypatch):
    "perf11: a literal's order (`value_order`, two regexes) is judged about once per payload (`SummaryMemo`, re-judged only after the bounded memo empties), not once per field per elided run it appears in (6x the distinct literals before)."
    from caveman.compressors import base
    calls = spy(monkeypatch, base, 'value_order')
    assert compress_afresh() is not None
    assert calls and len(calls) < 1.5 * len(set(calls)), (len(calls), len(set(calls)))


def test_ls_rows_read_by_the_grammar_once(monkeypatch):
    "perf12: the compressor reads each `ls -l` record by `ls`'s grammar about once (`_ls_matches`, handed to `ls_record_keep` and `ls_fields`); it read each about three times (is the block `ls`, which rows are files, the elided rows' fields)."
    calls = spy(monkeypatch, listing, 'ls_row')
    assert compress_afresh() is not None
    rows = len(re.findall(rb'(?m)^[-dl][rwx-]{9} ', BODY))
    assert len(calls) < 1.2 * rows, (len(calls), rows)


def test_short_runs_summarised_a_column_at_a_time(monkeypatch):
    "perf12: a short elided run (most are the two rows `.` and `..` of a block) is summarised a column at a time (`_summarize_few`): no `_Field.add` per literal (one per field literal of every elided row before)."
    from caveman.compressors import base
    adds = []
    real = base._Field.add
    monkeypatch.setattr(base._Field, 'add', lambda self, *a, **k: adds.append(1) or real(self, *a, **k))
    view = compress_afresh()
    assert view is not None and elided_rows(view) > 1000
    assert len(adds) == 0, len(adds)
