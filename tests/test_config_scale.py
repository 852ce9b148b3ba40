"""The YAML config compressor on big payloads (issue 12): its compact layout (`Entries`: machine-int arrays, paths
made on reading) agrees with PyYAML's pure-Python composer on every entry, and the views of the scale bench's
payloads — as built, with CRLF line ends and with a BOM — tell the truth by `test_marker_truth.check_config`, a judge that reads the original with its own code."""
import bisect, sys
from pathlib import Path

import pytest, yaml
from caveman.compressors.config import Entries, compress_config, decoded_lines, yaml_layout
from caveman.corpus import corpus_files
from test_marker_truth import check_config, entry_lines, entry_spans

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'benchmarks'))
from bench_scale import build   # noqa: E402


def variants(body: bytes) -> dict[str, bytes]:
    "The payload as built and with each line-break oddity the layout reads differently."
    return {'plain': body, 'crlf': body.replace(b'\n', b'\r\n'), 'bom': '\ufeff'.encode() + body}


def payloads():
    yield from ((p.name, p.read_bytes()) for p in corpus_files('yaml'))
    yield from ((f'scale {k}', v) for k, v in variants(build('yaml', 150_000)).items())


@pytest.mark.parametrize('name,body', list(payloads()), ids=lambda x: x if isinstance(x, str) else '')
def test_entries_agree_with_the_composer(name, body):
    "Every entry with a path spans the lines the composer gives the node at that path; read one by one or walked, and found by path, the same entries."
    text = body.decode('utf-8')
    lines = text.split('\n')
    layout = yaml_layout(body, lines)
    from_str = yaml_layout(text, lines)                                      # bytes or str: one layout
    assert isinstance(layout.entries, Entries) and list(layout.entries) == list(from_str.entries) and layout[1:] == from_str[1:]
    docs = list(yaml.compose_all(text.removeprefix('\ufeff'), Loader=yaml.SafeLoader))
    walked = list(layout.entries)
    assert walked == [layout.entries[i] for i in range(len(walked))]
    with_path = [e for e in walked if e.path is not None]
    assert len(with_path) > 100
    for e in with_path: assert entry_lines(docs, lines, e.path) == (e.start, e.end), e
    assert {(e.start, e.end) for e in walked} <= set(entry_spans(docs, lines))
    some = {e.path for e in with_path[::37]}
    assert {walked[i].path for i in layout.entries.find(some)} == some


@pytest.mark.parametrize('kind', ['plain', 'crlf', 'bom'])
def test_scale_views_tell_the_truth(kind):
    body = variants(build('yaml', 150_000))[kind]
    got = check_config(body)
    assert got is not None and any(claim for _, claim, _, _ in got[1])


@pytest.mark.slow
def test_scale_view_of_a_megabyte_tells_the_truth():
    body = build('yaml', 1_000_000)
    assert len(compress_config(body)) < len(body) // 2
    assert check_config(body) is not None


def test_decoded_lines_cut_anywhere(monkeypatch):
    "Blocks cut after any line feed give the lines of the whole text."
    body = variants(build('yaml', 20_000))['crlf'] + '\U0001F600 last'.encode()
    for block in (1, 7, 4096):
        assert decoded_lines(body, block) == body.decode().split('\n')


def test_line_breaks_read_once(monkeypatch):
    "`yaml_layout` asks once whether the payload breaks lines only at LF and CRLF (issue 12: it asked three times, each a few scans of the payload)."
    import caveman.compressors.config as config
    calls, real = [], config._plain_breaks
    monkeypatch.setattr(config, '_plain_breaks', lambda body: calls.append(len(body)) or real(body))
    for body in variants(build('yaml', 20_000)).values():
        calls.clear()
        assert config.yaml_layout(body, decoded_lines(body)) is not None
        assert len(calls) == 1


def test_one_pass_over_the_lines_shape(monkeypatch):
    "A YAML view computes the lines' depths, parents and comments once: the context rule reads the pass the comment rule made."
    import caveman.compressors.config as config
    calls, real = [], config._yaml_shape
    monkeypatch.setattr(config, '_yaml_shape', lambda *a, **k: calls.append(1) or real(*a, **k))
    assert compress_config(build('yaml', 150_000)) is not None
    assert len(calls) == 1


def test_find_reads_only_the_named_documents(monkeypatch):
    "`Entries.find` makes paths only for entries of the documents its paths name (issue 12: it made one for every entry whose last step matched)."
    body = build('yaml', 150_000)
    entries = yaml_layout(body, decoded_lines(body)).entries
    assert entries.docs is not None and len(entries.docs) > 10
    last = next(i for i in range(len(entries) - 1, -1, -1) if entries.path(i))     # an entry of one of the last documents
    path, number = entries.path(last), bisect.bisect_right(entries.docs, last)
    assert path.endswith(f' of document {number}') and number > 10
    made, real = [], Entries._bare
    monkeypatch.setattr(Entries, '_bare', lambda self, i, memo: made.append(i) or real(self, i, memo))
    found = entries.find({path})
    assert [entries.path(i) for i in found] == [path]
    assert made and min(made) >= entries.docs[number - 1]


class _CountingLines(list):
    "A list of lines that counts the reads of one line by its index (a slice is one read of many)."
    def __init__(self, *a):
        super().__init__(*a); self.reads = 0
    def __getitem__(self, i):
        if isinstance(i, int): self.reads += 1
        return super().__getitem__(i)


def test_emit_copies_kept_lines_as_slices():
    "`_emit` copies the kept lines between two dropped runs as one slice (issue 12: it read and appended every kept line alone, ~0.05x the count at 1 MB)."
    import caveman.compressors.config as config
    lines = _CountingLines(f'k{i}: {i}' for i in range(5000))
    keep = [not (1000 <= i < 1010 or 3000 <= i < 3010) for i in range(5000)]
    out = config._emit(lines, keep, bytearray(5000), True, {}, '')
    assert len(out) == 4980 + 2 and out[1000].lstrip().startswith('# ')
    assert lines.reads <= 200, lines.reads


class _CountingMask(bytearray):
    "A byte a line that counts the reads of one byte by its index."
    reads = 0
    def __getitem__(self, i):
        type(self).reads += 1
        return super().__getitem__(i)


def test_shape_reads_the_inside_flags_without_a_call_per_line():
    "`_yaml_shape` walks the inside flags beside the lines (issue 12: one call per line to ask whether it is value text)."
    import caveman.compressors.config as config
    lines = decoded_lines(build('yaml', 50_000))
    inside = config.LineSet(len(lines), [(5, 9)])
    inside.mask = _CountingMask(inside.mask)
    _CountingMask.reads = 0
    depth, opens, parents, comment = config._yaml_shape(lines, inside)
    assert len(depth) == len(lines) and depth[6] == -1
    assert _CountingMask.reads <= 2, _CountingMask.reads


def test_a_repeated_entry_names_its_first_path_once(monkeypatch):
    "The path a `same as` marker names is made once however many repeats name it (issue 12: once a repeat)."
    import caveman.compressors.config as config
    made, real = [], config.Entries.path
    monkeypatch.setattr(config.Entries, 'path', lambda self, i: made.append(i) or real(self, i))
    out = compress_config(build('yaml', 150_000))
    markers = out.count(b'config lines elided (caveman): same as ')
    assert markers > len(set(made)) > 0, (markers, len(set(made)))        # some entry is named by several markers
    assert len(made) == len(set(made)), (len(made), len(set(made)))


@pytest.mark.parametrize('name,body', list(payloads()), ids=lambda x: x if isinstance(x, str) else '')
def test_short_one_line_entries_are_left_out(name, body):
    "With `least`, `yaml_layout` leaves out only entries of one line that no repeat can elide (top-level, or ASCII and shorter than `least`), and the repeats found are the same as with every entry (issue 12: the walk drafted every `key: value` line, and `repeated_entries` and `aligned_runs` read each)."
    import caveman.compressors.config as config
    lines = decoded_lines(body)
    trailing = lines[-1] == ''
    if trailing: lines.pop()
    full, short = yaml_layout(body, lines), yaml_layout(body, lines, config._ONE_LINE_LEAST)
    every, some = list(full.entries), list(short.entries)
    assert set(some) <= set(every) and some == [e for e in every if e in set(some)]
    for e in set(every) - set(some):
        assert e.end - e.start == 1 and (e.top or (len(lines[e.start]) + 1 < config._ONE_LINE_LEAST and lines[e.start].isascii())), e
    keep, comment = [True] * len(lines), bytearray(len(lines))
    assert config.repeated_entries(lines, full.entries, keep, comment) == config.repeated_entries(lines, short.entries, keep, comment)
    runs = [(a, min(a + 7, len(lines))) for a in range(0, len(lines), 11)]
    assert config.aligned_runs(runs, full.entries) == config.aligned_runs(runs, short.entries)


def test_the_view_drafts_few_entries(monkeypatch):
    "The compressor's layout holds under half the entries of the scale payload: a `key: value` line too short to elide as a repeat is no entry (issue 12)."
    import caveman.compressors.config as config
    body, got, real = build('yaml', 150_000), [], config.yaml_layout
    monkeypatch.setattr(config, 'yaml_layout', lambda *a: got.append(real(*a)) or got[-1])
    assert compress_config(body) is not None
    every = real(body, decoded_lines(body)[:-1]).entries
    assert len(got) == 1 and len(got[0].entries) * 2 < len(every), (len(got[0].entries), len(every))


def test_flag_words_found_in_the_signal_pass(monkeypatch):
    "The flag words are found in the signals' one Aho–Corasick pass (`signals.FlagWords.flags`): the lines are read once, for the signals and the words together, and the word pattern is tried only on the lines that hold a word's literal."
    import caveman.compressors.config as C, caveman.signals as S
    scans, tried = [], []
    scan, pattern = S._scan, C._FLAGGED.pattern
    class Counted:                                                   # the flag-word pattern, counting the lines it is tried on
        def search(self, line): tried.append(line); return pattern.search(line)
    monkeypatch.setattr(S, '_scan', lambda *a, **k: scans.append((len(a[0]), a[3] if len(a) > 3 else k.get('words'))) or scan(*a, **k))
    monkeypatch.setattr(C._FLAGGED, 'pattern', Counted())
    body = build('yaml', 150_000)
    assert C.compress_config(body) is not None
    lines = body.decode().split('\n')
    assert len(scans) == 1 and scans[0][1] == C._FLAGGED.literals, scans
    assert 0 < len(tried) < len(lines) // 20, (len(tried), len(lines))


def test_repeats_read_intact_entries_from_a_byte_a_line(monkeypatch):
    "`repeated_entries` makes one prefix count (characters before each line), not one of the breaking lines and one of the non-ASCII lines beside it: those are a byte a line, built by whole-number operations and read by `bytes.find`."
    import caveman.compressors.config as C
    made = []
    real = C.accumulate
    monkeypatch.setattr(C, 'accumulate', lambda *a, **k: made.append(1) or real(*a, **k))
    body = build('yaml', 150_000)
    body = body.replace(b'name:', 'n\u00e4me:'.encode(), 1)           # a line that is not ASCII: the non-ASCII rows are asked for
    lines = decoded_lines(body); lines.pop()
    layout = yaml_layout(body, lines, C._ONE_LINE_LEAST)
    n = len(lines)
    got = C.repeated_entries(lines, layout.entries, [True] * n, bytearray(n))
    assert got and made == [1]
