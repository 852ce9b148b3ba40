"""One lexical JSON reader (issue 10, class 5).

- Structure: no module of the package configures a JSON reader of its own, and the modules that read
  payloads, catalogs and protocol messages parse JSON only through `caveman.jsonlex` (found by reading
  the package's source with `ast`, not by trusting names).
- Numbers: `1.50`, `1e9`, `-0` and a 30-digit integer come back spelled as in the source from every
  reading path (compressor codec, tool-schema reader, TOON, JSON-RPC).
- Duplicate member names are never collapsed silently: through the real `Engine`, every value of
  every repeated member is still in the view — or the view says the record has duplicate names —
  and a view that lost a value is never `method: minify` / `lossless_to_model: true`. The values are
  found in the ORIGINAL by this test's own scanner (a regex over the member text), not by caveman.
"""
import ast, json, re
from pathlib import Path

import pytest

import caveman
from caveman import ccr
from caveman.engine import Engine

PACKAGE = Path(caveman.__file__).parent
LEXICAL = {'parse_float', 'parse_int', 'parse_constant', 'object_pairs_hook', 'object_hook'}
# Modules that read payloads, catalogs or protocol messages: they parse JSON only through caveman.jsonlex.
READERS = ['compressors/json.py', 'retrieve.py', 'detect.py', 'toolschema.py', 'shrink.py',
           'toon.py', 'mcp/jsonrpc.py', 'evals.py']


def json_parsers(path: Path, plain: bool) -> list[str]:
    "JSON parser calls in one source file: `json.JSONDecoder(`, `.raw_decode(`, `json.loads/load(` with reader keywords — and any `json.loads/load(` when `plain`."
    tree, found = ast.parse(path.read_text()), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            base = f.value.id if isinstance(f.value, ast.Name) else ''
            keywords = {k.arg for k in node.keywords}
            if (base == 'json' and f.attr == 'JSONDecoder') or f.attr == 'raw_decode' or \
               (base == 'json' and f.attr in ('loads', 'load') and (plain or keywords & LEXICAL)):
                found.append(f'{path.relative_to(PACKAGE)}:{node.lineno} {base}.{f.attr}')
        if isinstance(node, ast.ImportFrom) and node.module in ('json', 'json.decoder'):
            found += [f'{path.relative_to(PACKAGE)}:{node.lineno} from json import {a.name}' for a in node.names
                      if a.name in ('loads', 'load', 'JSONDecoder')]
    return found


def test_one_lexical_json_reader_in_the_package():
    "No module configures a JSON reader of its own (number hooks, pair hooks, decoders), and the modules that read payloads call no JSON parser but caveman.jsonlex."
    others = [p for p in sorted(PACKAGE.rglob('*.py')) if p.name not in ('jsonlex.py', '_modidx.py')]
    assert [hit for p in others for hit in json_parsers(p, plain=False)] == []
    assert [hit for rel in READERS for hit in json_parsers(PACKAGE / rel, plain=True)] == []
    assert json_parsers(PACKAGE / 'jsonlex.py', plain=True)             # the reader does parse JSON (the scan works)


def test_numbers_keep_their_spelling_on_every_path():
    from caveman.jsonlex import loads_lexical, dumps_lexical
    from caveman.compressors.base import loads_lexical as compressor_reader
    from caveman.toolschema import loads_typed, dumps_compact
    from caveman.toon import parse_json
    from caveman.mcp.jsonrpc import decode_json
    src = '[1.50,1e9,-0,123456789012345678901234567890,2.5]'
    assert compressor_reader is loads_lexical                          # one reader, re-exported, not a second one
    assert dumps_lexical(loads_lexical(src)) == src
    assert dumps_compact(loads_typed(src)) == src
    assert [str(v) for v in parse_json(src)] == ['1.50', '1E+9', '0', '123456789012345678901234567890', '2.5']  # exact values
    assert [getattr(v, 'lexeme', None) or repr(v) for v in decode_json(src)] == ['1.50', '1e9', '-0', '123456789012345678901234567890', '2.5']


DUP_RECORD = '{"id":1,"tag":"urgent","tag":"later"}'

def member_values(text: str, name: str) -> list[str]:
    "Every string value of member `name` in JSON text (this test's own scanner)."
    return re.findall(r'"%s"\s*:\s*"([^"\\]*)"' % re.escape(name), text)

def documents() -> dict[str, bytes]:
    rows = [{'id': i, 'tag': 'ok', 'note': f'routine check {i} passed'} for i in range(150)]
    big = json.dumps(rows, indent=2)
    big = big.replace('"tag": "ok"', '"tag": "urgent", "tag": "later"', 1)              # one record, early
    nested = json.dumps({'jobs': [{'id': i, 'meta': {'state': 'done'}} for i in range(80)]}, indent=1)
    nested = nested.replace('"state": "done"', '"state": "failed", "state": "done"', 1)
    return {'small': ('  ' + DUP_RECORD + '\n').encode(), 'pretty': json.dumps({'id': 1}, indent=4)[:-2].encode()
            + b',\n    "tag": "urgent",\n    "tag": "later"\n}', 'array': big.encode(), 'nested': nested.encode()}

@pytest.mark.parametrize('name', list(documents()))
def test_duplicate_member_names_are_never_collapsed_silently(name):
    data = documents()[name]
    text = data.decode()
    member = 'state' if name == 'nested' else 'tag'
    values = set(member_values(text, member))
    e = Engine(ccr.open_store(':memory:'))
    for query in ('', member):
        r = e.compress(data, query=query)
        view = r.output.decode('utf-8', 'replace')
        lost = {v for v in values if v not in set(member_values(view, member))}
        if lost:
            assert 'duplicate' in view.lower(), (name, lost, view[:300])
            assert r.method != 'minify' and r.lossless_to_model is not True, r.to_dict()
        if r.lossless_to_model is True: assert not lost
        if name in ('array', 'nested'):                       # one odd record does not cost the whole document its compression
            assert r.recovery_handle and r.tokens_after < r.tokens_before / 2, r.to_dict()
        if r.recovery_handle: assert e.retrieve(r.recovery_handle) == data


def test_readers_refuse_or_keep_duplicates_explicitly():
    from caveman.jsonlex import loads_lexical, DuplicateNameError
    from caveman.toolschema import loads_typed
    from caveman.toon import ToonError, parse_json
    with pytest.raises(DuplicateNameError): loads_lexical(DUP_RECORD)
    with pytest.raises(ValueError): loads_typed(DUP_RECORD)
    with pytest.raises(ToonError): parse_json(DUP_RECORD)
    assert loads_lexical(DUP_RECORD, duplicates='last') == {'id': 1, 'tag': 'later'}      # only when asked
    from caveman.detect import detect
    assert detect(DUP_RECORD.encode()) == 'json'                      # still JSON to detection
