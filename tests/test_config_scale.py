"""The YAML config compressor on big payloads (issue 12): its compact layout (`Entries`: machine-int arrays, paths
made on reading) agrees with PyYAML's pure-Python composer on every entry, and the views of the scale bench's
payloads — as built, with CRLF line ends and with a BOM — tell the truth by `test_marker_truth.check_config`, a judge that reads the original with its own code."""
import sys
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
    import caveman.compressors.config as config
    body = variants(build('yaml', 20_000))['crlf'] + '\U0001F600 last'.encode()
    for block in (1, 7, 4096):
        monkeypatch.setattr(config, 'DECODE_BLOCK', block)
        assert decoded_lines(body) == body.decode().split('\n')
