"""A view is never compressed again, and a text that merely mentions a marker is compressed like any other
(issue 10: own-view detection precise, both ways).

- A caveman view wrapped in JSON — an MCP tool result, an API response, an array of earlier results —
  comes back with every view string byte for byte (the JSON around it may be minified).
- A payload of every line-oriented kind with a marker *mentioned* inside one of its lines (in a
  sentence, in quotes, in a cell) is still compressed: a view needs a whole marker line.
"""
import json

import pytest

from caveman import ccr
from caveman.corpus import corpus_files
from caveman.engine import Engine

ENGINE = Engine(ccr.open_store(':memory:'))
KINDS = ('log', 'csv', 'search', 'terminal', 'prose', 'yaml')


def _views() -> list[tuple[str, str]]:
    "(name, view text) for every shared-corpus payload of a line-oriented kind whose view elides something."
    out = []
    for kind in KINDS:
        for p in corpus_files(kind):
            r = ENGINE.compress(p.read_bytes())
            if not r.passed_through and '(caveman)' in r.output.decode('utf-8', 'replace'):
                out.append((p.name, r.output.decode('utf-8')))
    return out

VIEWS = _views()


def test_there_are_views_to_wrap():
    assert len(VIEWS) >= 10


@pytest.mark.parametrize('name,view', VIEWS, ids=[n for n, _ in VIEWS])
def test_a_wrapped_view_is_not_compressed_again(name, view):
    wrappings = [{'result': view},
                 {'jsonrpc': '2.0', 'id': 7, 'result': {'content': [{'type': 'text', 'text': view}], 'isError': False}},
                 {'history': [{'tool': 'caveman_compress', 'output': view, 'n': i} for i in range(40)]}]
    for doc in wrappings:
        data = json.dumps(doc, indent=2).encode()
        r = ENGINE.compress(data)
        assert json.loads(r.output) == doc, (name, r.method)


MENTIONS = [' (docs: a run reads "… 3 lines elided (caveman) …" in a view)',
            ' see `… 12 sections elided (caveman): all level="info" …` for the marker',
            ' note … 4 rows elided (caveman) … is what a marker looks like']


def _mentioning(data: bytes, i: int, comment: bool = False) -> bytes:
    "`data` with a marker mentioned at the end of its third non-blank line (inside the last cell of a CSV row; in a `#` comment when `comment`)."
    lines = data.split(b'\n')
    k = [j for j, l in enumerate(lines) if l.strip()][2]
    line = lines[k].rstrip(b'\r')
    mention = (' #' if comment else '') + MENTIONS[i % len(MENTIONS)].replace('"', "'")
    mention = mention.encode()
    lines[k] = line + mention + lines[k][len(line):]
    return b'\n'.join(lines)


PAYLOADS = [(p.name, p.read_bytes()) for kind in KINDS for p in corpus_files(kind)]


@pytest.mark.parametrize('i,name,data', [(i, n, d) for i, (n, d) in enumerate(PAYLOADS)], ids=[n for n, _ in PAYLOADS])
def test_a_text_that_mentions_a_marker_is_compressed(i, name, data):
    plain = ENGINE.compress(data)
    if plain.passed_through: pytest.skip('not compressed even without a mention')
    r = ENGINE.compress(_mentioning(data, i, comment=name.endswith(('.yml', '.yaml'))))
    assert not r.passed_through and r.tokens_after < r.tokens_before, name
    assert ENGINE.compress(r.output).passed_through                         # and its view is a view


def test_a_readme_that_quotes_a_view_is_still_cut():
    "Package metadata embedding a README that quotes a view in a fenced block and a JSON marker in prose is no view: its long description is cut as any other."
    readme = ('# tool\n\nIt replaces runs with markers such as `{"__caveman_elided__": 8}` and `… 3 lines elided (caveman) …`.\n\n'
              '```\nline one\n… 3 lines elided (caveman) …\nline five\n```\n\n'
              + '\n'.join(f'Line {i} of the documentation explains one more feature in some detail.' for i in range(60)))
    doc = {'installed': [{'metadata': {'name': f'pkg{i}', 'description': readme}} for i in range(3)]}
    r = ENGINE.compress(json.dumps(doc, indent=1).encode())
    assert all('chars elided (caveman)' in d['metadata']['description'] for d in json.loads(r.output)['installed'])
