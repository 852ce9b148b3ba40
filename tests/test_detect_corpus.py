"""caveman.detect on the real corpus: every payload detects as its kind, wrappers round-trip, and
unwrap + detect stay fast (no quadratic scans, no catastrophic regexes).

Run as a script to print the per-file timing table: `python tests/test_detect_corpus.py`."""
import csv, io, statistics, time

import pytest

from caveman.corpus import corpus_files
from caveman.detect import DETECTED_TYPES, classify_config, detect, parse_table, rewrap, unwrap

KIND = dict(json='json', log='log', csv='tabular', diff='diff', search='search-result', html='html',
            yaml='config', terminal='terminal', code='code', prose='text')
FILES = corpus_files()

def kind_of(path) -> str: return KIND[path.name.split('_')[0]]

def timing(data: bytes, runs: int = 15) -> tuple[float, float]:
    "Median and best wall time in ms of `detect(unwrap(data)[0])`."
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter(); detect(unwrap(data)[0]); ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3, min(ts) * 1e3


def test_corpus_has_every_kind():
    assert sorted({p.name.split('_')[0] for p in FILES}) == sorted(KIND)
    # every detected type but the three for everyday shell output and binary, which the shared corpus
    # has no file of; tests/test_detect_everyday.py captures those on the machine at test time
    assert set(KIND.values()) == set(DETECTED_TYPES) - {'table', 'listing', 'binary'}


@pytest.mark.parametrize('path', FILES, ids=lambda p: p.name)
def test_detects_as_its_kind(path):
    data = path.read_bytes()
    body, layers = unwrap(data)
    assert detect(body) == kind_of(path)
    assert bool(layers) == path.name.startswith('code_')      # the code files are `cat -n` listings
    assert rewrap(body, layers) == data                        # and their gutter comes back byte for byte


@pytest.mark.parametrize('path', corpus_files('csv'), ids=lambda p: p.name)
def test_csv_parses_like_the_csv_module(path):
    data = path.read_bytes()
    t = parse_table(data)
    assert t.rows == [r for r in csv.reader(io.StringIO(data.decode(), newline='')) if r]
    assert (t.header_rows, t.markdown, t.delimiter) == (1, False, ',')


@pytest.mark.parametrize('path', corpus_files('yaml'), ids=lambda p: p.name)
def test_yaml_is_config_only_with_block_scalars_allowed(path):
    data = path.read_bytes()
    assert classify_config(data) == 'yaml'
    assert classify_config(data, block_scalars=False) is None   # the reference's veto


def test_deterministic_on_every_corpus_file():
    "Detection of each corpus file gives the same answer on every run (its speed is measured by `make bench`, never asserted here)."
    for p in FILES:
        data = p.read_bytes()
        assert len({detect(unwrap(data)[0]) for _ in range(3)}) == 1, p.name


PATHOLOGICAL = {
    'quotes': b'"' * 300_000,
    'one wide csv line': b'a,' * 150_000,
    'unclosed quoted field': b'a,b\n"' + b'x,' * 100_000,
    'tabs': b'1\t' * 150_000,
    'colons': b':' * 300_000,
    'block headers': b'k: |\n' * 60_000,
    'yaml keys': b'key: value\n' * 30_000,
    'spaces then x': b' ' * 300_000 + b'x',
    'open file tag': b'<file ' + b'"' * 100_000,
    'file tag quotes': b'<file a=' + b'"x" ' * 50_000 + b'>y</file>',
    'number column': b''.join(b'%d\n' % i for i in range(1, 60_000)),
    'long gutter line': b'     1\t' + b'x' * 300_000,
    'deep json': b'[' * 200_000,
    'diff markers': b'\n@@ ' * 50_000,
    'level words': b'INFO ' * 60_000,
    'warnings': b'warnings ' * 40_000,
    'clock-ish': b'1:22:33:44:' * 30_000,
    'clock times on one line': b'at 12:30:45 ' * 30_000,
    'unbounded clock times': b'x 12:30:45' * 30_000,
    'grep context': b'a-1-b-2-c-3-' * 25_000 + b'\n' + b'p:1: x\n' * 4,
    'search prefix': (b'x' * 239 + b'\n') * 1000,
    'markdown pipes': b'|' * 300_000,
    'ansi-ish': b'\x1b[' * 100_000,
    'prompts': b'a@b:' * 75_000,
}

@pytest.mark.parametrize('name', PATHOLOGICAL)
def test_pathological_input_is_handled(name):
    "Inputs that would trip quadratic scans or catastrophic regexes: detection answers (speed is for `make bench`, not a timed test)."
    data = PATHOLOGICAL[name]
    body, layers = unwrap(data)
    kind = detect(body)
    parse_table(data); classify_config(data)
    assert kind in DETECTED_TYPES


if __name__ == '__main__':
    rows = [(p.name, p.stat().st_size, *timing(p.read_bytes(), runs=31)) for p in FILES]
    print(f'{"file":46s} {"KiB":>7s} {"median ms":>10s} {"best ms":>8s}')
    for name, size, med, best in sorted(rows, key=lambda r: -r[1]):
        print(f'{name:46s} {size / 1024:7.1f} {med:10.2f} {best:8.2f}')
