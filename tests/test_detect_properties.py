"""Property tests for caveman.detect: gutter and `<file>` round trips, restoration after elision,
the table parser against an independent writer, and "never raises" on arbitrary bytes."""
import csv, io, re

from hypothesis import HealthCheck, assume, given, settings, strategies as st

from caveman.detect import (DETECTED_TYPES, FileWrapper, Gutter, classify_config, detect, parse_table,
                            rewrap, strip_file_wrapper, strip_gutter, unwrap)
from caveman.detect import _read_delimited, _read_fields, _lf_records

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------- listings
# A source line: empty, or text that does not start with whitespace (so a line is blank iff empty).
text_line = st.one_of(st.just(b''), st.binary(max_size=40).filter(
    lambda b: b'\n' not in b and b[:1] not in b' \t\r\x0b\x0c' and b.strip() != b''))

@st.composite
def listings(draw):
    "(source lines, listing bytes): one consistent gutter style, as a read tool would write it."
    lines = draw(st.lists(text_line, min_size=8, max_size=40).filter(lambda ls: sum(1 for l in ls if l) >= 1))
    sep = draw(st.sampled_from([b'\t', b' | ', b': ']))
    style = draw(st.sampled_from(['cat', 'plain', 'zero']))
    blank = draw(st.sampled_from(['sep', 'bare', 'none']))
    if blank == 'none': assume(sum(1 for l in lines if l) >= 8)           # 8 numbered lines needed
    first = draw(st.integers(1, 5000))
    gaps = draw(st.lists(st.integers(1, 3), min_size=len(lines), max_size=len(lines)))
    nums, n = [], first
    for g in gaps: nums.append(n); n += g
    width = len(str(nums[-1]))
    field = {'cat': lambda k: b'%6d' % k, 'plain': lambda k: b'%d' % k,
             'zero': lambda k: str(k).zfill(width + 1).encode()}[style]
    out = []
    for k, l in zip(nums, lines):
        if l or blank == 'sep': out.append(field(k) + sep + l)
        elif blank == 'bare': out.append(field(k))
        else: out.append(l)
    trailing = draw(st.booleans())
    return lines, b'\n'.join(out) + (b'\n' if trailing else b''), trailing

@FAST
@given(listings())
def test_listing_round_trip(case):
    lines, listing, trailing = case
    body, gutter = strip_gutter(listing)
    assert body == b'\n'.join(lines) + (b'\n' if trailing else b'')
    assert gutter.wrap(body) == listing

def numbers_of(listing: bytes) -> list:
    return [int(m) for m in re.findall(rb'(?m)^ *(\d+)(?:\t| \| |: |$)', listing)]

@FAST
@given(listings(), st.data())
def test_elision_keeps_numbers_and_order(case, data):
    lines, listing, trailing = case
    body, gutter = strip_gutter(listing)
    src = gutter.lines
    keep = data.draw(st.lists(st.booleans(), min_size=len(src), max_size=len(src)))
    out, kept = [], []
    for i, ((n, text, _, _), k) in enumerate(zip(src, keep)):
        if k: out.append(text); kept.append((n, text))
        elif not out or out[-1] != b'# ~ elided ~': out.append(b'# ~ elided ~')
    nonblank = sum(1 for l in out if l.strip())
    traced = sum(1 for _, t in kept if t.strip())
    restored = gutter.restore(b'\n'.join(out) + b'\n')
    if traced * 2 < nonblank:
        assert restored is None
        return
    again = strip_gutter(restored) if len(out) >= 8 else None
    nums = numbers_of(restored)
    assert nums == sorted(nums)                                   # never out of order
    if again is not None: assert again[0] == b'\n'.join(out) + b'\n'
    source = {(n, t) for n, t, _, _ in src}
    unique = {t for t in (t for _, t, _, _ in src) if sum(1 for _, u, _, _ in src if u == t) == 1}
    for n, text in kept:
        if not text.strip(): continue
        m = re.search(rb'(?m)^ *0*(\d+)(?:\t| \| |: )' + re.escape(text) + rb'$', restored)
        assert m and (int(m.group(1)), text) in source              # numbered as a source line with that text
        if text in unique: assert int(m.group(1)) == n              # ... its own line when the text is unique

@FAST
@given(st.binary(max_size=300))
def test_unwrap_rewrap_recovers_the_body(data):
    body, layers = unwrap(data)
    if not any(isinstance(l, Gutter) for l in layers): assert rewrap(body, layers) == data
    again, layers2 = unwrap(rewrap(body, layers))
    assert again == body and len(layers2) == len(layers)

# ---------------------------------------------------------------- <file> wrapper
attr_value = st.text(alphabet='ab >/<="\'', max_size=8)

@FAST
@given(st.binary(max_size=200), st.lists(st.tuples(st.sampled_from(['path', 'n', 'x']), attr_value), max_size=3),
       st.sampled_from([b'', b'\n', b'  \n\t']), st.sampled_from([b'', b'\n', b' \n\n']))
def test_file_wrapper_round_trip(inner, attrs, lead, tail):
    assume(inner.strip() and b'<file' not in inner and b'</file>' not in inner)
    parts = []
    for k, v in attrs:
        q = '"' if '"' not in v else "'"
        assume(q not in v)
        parts.append(f' {k}={q}{v}{q}')
    opening = ('<file' + ''.join(parts) + '>').encode()
    assume(opening.count(b'<file') == 1 and b'</file>' not in opening)
    data = lead + opening + inner + b'</file>' + tail
    got = strip_file_wrapper(data)
    assert got == (inner, FileWrapper(lead + opening, b'</file>' + tail))
    assert got[1].wrap(got[0]) == data

# ---------------------------------------------------------------- tables
cell = st.text(alphabet=st.characters(blacklist_categories=('Cs',), blacklist_characters='\x00'), max_size=6)

@FAST
@given(st.lists(st.lists(cell, min_size=2, max_size=5), min_size=2, max_size=12), st.sampled_from([',', '\t']),
       st.booleans(), st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]))
def test_table_reads_back_what_a_csv_writer_wrote(rows, d, crlf, quoting):
    w = len(rows[0])
    rows = [r[:w] + [''] * (w - len(r)) for r in rows]
    assume(all(any(c for c in r) or len(r) > 1 for r in rows))
    assume(not any(c.strip() == '' and c for c in rows[0]))              # no whitespace-only header cells
    other = '\t' if d == ',' else ','
    assume(not any(other in c or '\n' in c or '\r' in c for c in rows[0]))   # the first line decides the delimiter
    if quoting == csv.QUOTE_MINIMAL and not crlf:                          # Python quotes CR only if it is in the terminator
        assume(not any('\r' in c for r in rows for c in r))
    buf = io.StringIO()
    csv.writer(buf, delimiter=d, lineterminator='\r\n' if crlf else '\n', quoting=quoting).writerows(rows)
    text = buf.getvalue()
    assume(text.split('\n', 1)[0].strip())                                  # not blank: the header line decides
    t = parse_table(text.encode())
    expected = [list(r) for r in rows]                                     # a CRLF inside a quoted cell stays (Go would make it LF)
    assert t is not None and t.rows == expected and t.delimiter == d and t.header_rows == 1

@FAST
@given(st.text(alphabet=',"\n\rab\t ', max_size=60), st.sampled_from([',', '\t']))
def test_fast_and_exact_csv_paths_agree(text, d):
    rows = _read_delimited(text, d)
    if rows is None: return
    norm = _lf_records(text)                                              # record ends LF, a CRLF inside a quoted field kept
    if norm.endswith('\r'): norm = norm[:-1]
    if '"' in norm: assert rows == _read_fields(norm, d)
    else: assert rows == [l.split(d) for l in norm.split('\n') if l]

# ---------------------------------------------------------------- never raises
@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=400))
def test_total_on_arbitrary_bytes(data):
    assert detect(data) in DETECTED_TYPES
    assert detect(unwrap(data)[0]) in DETECTED_TYPES
    assert classify_config(data) in (None, 'yaml', 'toml', 'ini')
    t = parse_table(data)
    assert t is None or (len(t.rows) >= 2 and len(set(map(len, t.rows))) == 1)

line_soup = st.lists(st.sampled_from([b'key: value', b'- item', b'[section]', b'a = 1', b'     3\tx', b'INFO ok',
                                      b'src/a.py:3: x', b'| a | b |', b'|---|---|', b'a,b', b'<div>', b'{', b'}',
                                      b'', b'  run: |', b'    echo', b'---', b'$ cmd', b'u@h:~$ ls', b'+x', b'-y',
                                      b'@@ -1 +1 @@', b'def f():', b'    return 1', b'\x1b[1m', b'x\ry']),
                     max_size=30).map(lambda ls: b'\n'.join(ls))

@settings(max_examples=500, deadline=None)
@given(line_soup)
def test_total_on_line_soup(data):
    body, layers = unwrap(data)
    assert detect(body) in DETECTED_TYPES
    assert classify_config(data) in (None, 'yaml', 'toml', 'ini')
    assert classify_config(data, block_scalars=False) in (None, 'yaml', 'toml', 'ini')
    parse_table(data)
