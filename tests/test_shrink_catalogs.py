"""`caveman.shrink` (the library: engine, store and compressor together) on every real catalog of the corpus:
the invariants of SPEC §10 / reference §8.1, compact-vs-compact accounting (SPEC §14.6), recovery of the exact
bytes from a new process, validation equivalence under `jsonschema`, and golden description reductions."""
import json, subprocess, sys

import pytest

from caveman import ccr
from caveman.corpus import corpus_files, corpus_path
from caveman.shrink import shrink, recover, lint, selection_profile
from caveman.tokens import count_tokens
from caveman.toolschema import extract_tools
from _toolschema_checks import catalog_validation_differences, check_catalog, resolved_refs, tool_schemas

CATALOGS = corpus_files(catalogs=True)


def compact(data: bytes) -> str:
    "The compact JSON text of `data`, computed with the standard library (not caveman's serializer)."
    return json.dumps(json.loads(data), separators=(',', ':'), ensure_ascii=False)


@pytest.fixture(scope='module')
def db(tmp_path_factory):
    return str(tmp_path_factory.mktemp('store') / 'ccr.db')


@pytest.fixture(scope='module')
def shrunk(db):
    "`{file name: (input, output, Result)}` for every catalog, each shrunk into one file store."
    out = {}
    for p in CATALOGS:
        x = p.read_bytes()
        out[p.name] = (x, *shrink(x, db))
    return out


@pytest.fixture(params=[p.name for p in CATALOGS])
def catalog(request, shrunk):
    return shrunk[request.param]


def test_corpus_has_catalogs():
    assert len(CATALOGS) >= 12
    assert any(p.name == 'mcp_combined_5_servers.json' for p in CATALOGS)


def test_invariants(catalog):
    "Selection profile; every enum/required/default/const/type/$ref unchanged at its path; $refs resolve; names and order."
    x, y, r = catalog
    assert check_catalog(x, y) == []


def test_selection_profile_and_names(catalog):
    x, y, r = catalog
    assert selection_profile(y) == selection_profile(x)
    assert [t['name'] for t in extract_tools(y)] == [t['name'] for t in extract_tools(x)]


def test_output_is_valid_compact_json(catalog):
    x, y, r = catalog
    doc = json.loads(y)
    assert json.dumps(doc, separators=(',', ':'), ensure_ascii=False).encode() == y


def test_every_ref_resolves(catalog):
    x, y, r = catalog
    refs = resolved_refs(json.loads(y))
    assert (refs > 0) == (b'"$ref"' in x)


def test_accounting_is_compact_vs_compact(catalog):
    "tokens_before counts the compact input, tokens_after the output; whitespace is never part of the saving."
    x, y, r = catalog
    assert (r.content_type, r.basis) == ('toolschema', 'inferred')
    assert r.tokens_before == count_tokens(compact(x))
    assert r.tokens_after == count_tokens(y.decode())
    assert 0 < r.tokens_after < r.tokens_before
    assert r.ratio == round((r.tokens_before - r.tokens_after) / r.tokens_before, 4)
    assert r.recovery_handle == ccr.handle_for(x)


def test_whitespace_does_not_change_the_result(catalog):
    "The same catalog pretty-printed differently shrinks to the same bytes with the same numbers."
    x, y, r = catalog
    y2, r2 = shrink(json.dumps(json.loads(x), indent=7, ensure_ascii=False), ':memory:')
    assert y2 == y
    assert (r2.tokens_before, r2.tokens_after, r2.ratio) == (r.tokens_before, r.tokens_after, r.ratio)


def test_idempotent(catalog):
    x, y, r = catalog
    y2, r2 = shrink(y, ':memory:')
    assert y2 == y
    assert (r2.ratio, r2.recovery_handle, r2.tokens_after) == (0, '', r2.tokens_before)


def test_lint_agrees(catalog):
    "lint counts the same way: each tool's rows add up, the shrunk catalog has nothing left to save."
    x, y, r = catalog
    rep = lint(x)
    assert [t.name for t in rep.tools] == [t['name'] for t in extract_tools(x)]
    assert all(t.tokens_after <= t.tokens_before for t in rep.tools) and rep.ratio > 0
    assert lint(y).ratio == 0 and lint(y).tokens_before == rep.tokens_after


def test_validation_equivalence(catalog):
    "Instances from the original and shrunk schemas get the same verdict under `jsonschema` (see _toolschema_checks)."
    x, y, r = catalog
    diffs, valid, invalid = catalog_validation_differences(x, y)
    assert diffs == []
    assert valid > 0 and invalid > 0, (valid, invalid)


def test_target_on_combined_catalog(shrunk):
    "At least 10% fewer compact tokens on the five-server MCP catalog with every fact kept and annotations verbatim (issue 15)."
    x, y, r = shrunk['mcp_combined_5_servers.json']
    assert r.ratio >= 0.10, r.to_dict()


RECOVER_SCRIPT = '''
import json, sys
from caveman.shrink import recover
db, handles, outdir = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
for name, handle in handles.items():
    with open(f"{outdir}/{name}", "wb") as f: f.write(recover(handle, db))
'''


def test_recover_in_a_new_process(shrunk, db, tmp_path):
    "A separate Python process opening the same store file gets every original back byte for byte."
    handles = {name: r.recovery_handle for name, (x, y, r) in shrunk.items()}
    subprocess.run([sys.executable, '-c', RECOVER_SCRIPT, db, json.dumps(handles), str(tmp_path)],
                   check=True, stdin=subprocess.DEVNULL, timeout=120)
    for name, (x, y, r) in shrunk.items():
        assert (tmp_path / name).read_bytes() == x, name


def test_recover_unknown_handle(db):
    with pytest.raises(ccr.NotFound):
        recover('ccr_deadbeef', db)


# ---- golden description reductions (expected values derived by hand from reference §8.3) -----------------------

UPLOAD_DESC = ('Stores a file in the archive at the path you give. The path must be absolute, e.g. /var/data/report.csv on Linux. '
               'Provide exactly one of content or content_base64. This tool is perfect for sharing files with your team. '
               'Timestamps use the RFC 3339 format.')
# lead kept; the must/absolute, exactly-one and rfc/format sentences kept; the praise (proven filler) dropped — any other
# sentence would stay (break test 4: over-keep is safer than a retry);
# "e.g." and "report.csv" do not split sentences
UPLOAD_SHORT = ('Stores a file in the archive at the path you give. The path must be absolute, e.g. /var/data/report.csv on Linux. '
                'Provide exactly one of content or content_base64. Timestamps use the RFC 3339 format.')
LIMIT_DESC = ('How many entries to include in a single page of results, counted from the most recent entry backwards. '
              'Values beyond 500 are refused by the server, and so are negative values or zero.')
# the lead is 103 bytes and states no fact ("to return" would: what a tool returns is a fact, issue 15): cut at its last clause end within 100 bytes (the comma after "results")
LIMIT_SHORT = ('How many entries to include in a single page of results\n'   # a line break after a cut lead: the next sentence stays its own
               'Values beyond 500 are refused by the server, and so are negative values or zero.')


def upload_tool():
    "An MCP tool with long descriptions, annotations, and $defs whose names collide with keywords."
    return {
        'name': 'archive_upload',
        'description': UPLOAD_DESC,
        'inputSchema': {
            '$schema': 'https://json-schema.org/draft/2020-12/schema', 'title': 'archive_upload arguments', 'type': 'object',
            'properties': {
                'path': {'type': 'string', 'title': 'Path', 'description': '  Where to store the file.\n', 'examples': ['/srv/x']},
                'limit': {'type': 'integer', 'description': LIMIT_DESC, 'default': 50, 'maximum': 500},
                'mode': {'$ref': '#/$defs/default'},
                'retention': {'$ref': '#/$defs/ISO8601Duration', '$comment': 'days are rounded'},
                'title': {'type': 'string', 'description': 'A parameter that happens to be called title.'}},
            'required': ['path', 'mode'],
            '$defs': {
                'default': {'type': 'string', 'enum': ['overwrite', 'keep'], 'title': 'Mode'},
                'ISO8601Duration': {'type': 'string', 'pattern': '^P', 'examples': ['PT5M']}}}}


def upload_tool_shrunk():
    "What reference §8.3 says `upload_tool()` becomes, written out by hand, key order kept."
    return {
        'name': 'archive_upload',
        'description': UPLOAD_SHORT,
        'inputSchema': {
            'type': 'object',
            'properties': {
                'path': {'type': 'string', 'description': 'Where to store the file.'},
                'limit': {'type': 'integer', 'description': LIMIT_SHORT, 'default': 50, 'maximum': 500},
                'mode': {'$ref': '#/$defs/default'},
                'retention': {'$ref': '#/$defs/ISO8601Duration'},
                'title': {'type': 'string', 'description': 'A parameter that happens to be called title.'}},
            'required': ['path', 'mode'],
            '$defs': {
                'default': {'type': 'string', 'enum': ['overwrite', 'keep']},
                'ISO8601Duration': {'type': 'string', 'pattern': '^P'}}}}


def test_golden_mcp_tool():
    x = json.dumps({'tools': [upload_tool()]}, indent=2).encode()
    y, r = shrink(x, ':memory:')
    assert y == json.dumps({'tools': [upload_tool_shrunk()]}, separators=(',', ':')).encode()
    assert r.ratio > 0 and check_catalog(x, y) == []


@pytest.mark.parametrize('shape', ['openai', 'anthropic', 'functions'])
def test_golden_other_shapes(shape):
    "The same reductions in the OpenAI, Anthropic and legacy-functions shapes."
    t, s = upload_tool(), upload_tool_shrunk()
    if shape == 'openai':
        x = [{'type': 'function', 'function': {'name': t['name'], 'description': t['description'], 'parameters': t['inputSchema']}}]
        want = [{'type': 'function', 'function': {'name': s['name'], 'description': s['description'], 'parameters': s['inputSchema']}}]
    elif shape == 'anthropic':
        x = [{'name': t['name'], 'description': t['description'], 'input_schema': t['inputSchema'], 'cache_control': {'type': 'ephemeral'}}]
        want = [{'name': s['name'], 'description': s['description'], 'input_schema': s['inputSchema'], 'cache_control': {'type': 'ephemeral'}}]
    else:
        x = {'functions': [{'name': t['name'], 'description': t['description'], 'parameters': t['inputSchema']}]}
        want = {'functions': [{'name': s['name'], 'description': s['description'], 'parameters': s['inputSchema']}]}
    y, r = shrink(json.dumps(x), ':memory:')
    assert json.loads(y) == want and r.ratio > 0


def test_golden_real_descriptions():
    """Real descriptions: fetch keeps its lead whole, the sentence that says it now has internet access (tool choice) and
    the one that says what it can now do (capability, issue 15); git_log's timestamp rules are kept whole."""
    fetch = json.loads(shrink(corpus_path('catalogs/mcp_fetch.json').read_bytes(), ':memory:')[0])
    assert fetch['tools'][0]['description'] == ('Fetches a URL from the internet and optionally extracts its contents as markdown.\n'
                                                'Although originally you did not have internet access, and were advised to refuse and tell '
                                                'the user this, this tool now grants you internet access. Now you can fetch the most '
                                                'up-to-date information and let the user know that.')
    git_in = json.loads(corpus_path('catalogs/mcp_git.json').read_bytes())
    git_out = json.loads(shrink(corpus_path('catalogs/mcp_git.json').read_bytes(), ':memory:')[0])
    log_in, log_out = ([t for t in d['tools'] if t['name'] == 'git_log'][0]['inputSchema']['properties'] for d in (git_in, git_out))
    for p in ('start_timestamp', 'end_timestamp'):  # > 160 bytes, but every sentence states a format: all of it
        assert len(log_in[p]['description'].encode()) > 160
        assert log_out[p]['description'] == log_in[p]['description']
