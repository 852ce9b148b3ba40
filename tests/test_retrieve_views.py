"""Query-narrowed retrieve views: the scenarios of reference §10.7 and §10.3, and properties on random
documents (SPEC §6, §9; reference §5, §7.6).

The rule under test: a view shows whole units only — every block between markers is one whole
JSON record, CSV row or text unit of the original, so a field value is never shown beside another
record's id — in original order, with `… [caveman: non-adjacent] …` at every gap and open end.
The live tests drive the real `caveman-mcp` through the MCP Python SDK client.
"""
import asyncio, csv, io, json, re
from contextlib import asynccontextmanager

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from caveman import ccr
from caveman.bm25 import tokenize
from caveman.corpus import corpus_path
from caveman.engine import Engine
from caveman.mcp.tools import PAYOUT_NOTE, POINTER_NOTE
from caveman.retrieve import MARKER, narrowed_view
from conftest import server_command

GAP = f'\n\n{MARKER}\n\n'


def blocks(view: str) -> list[str]:
    "The units of a view: the text between blank lines, markers dropped."
    return [b for b in view.split('\n\n') if b != MARKER]


def in_order_subset(shown: list, candidates: list) -> bool:
    "True when `shown` is a subsequence of `candidates` (same order, nothing else)."
    it = iter(candidates)
    return all(any(c == x for c in it) for x in shown)


def check_layout(view: str, prelude: str = '') -> None:
    "Markers stand alone between blank lines; never two in a row; the prelude, if any, is the first line."
    if prelude:
        assert view.startswith(prelude + '\n')
        view = view[len(prelude) + 1:]
    parts = view.split('\n\n')
    assert all(p for p in parts), 'no empty block'
    assert not any(a == b == MARKER for a, b in zip(parts, parts[1:])), 'two markers in a row'


def retrieve_query(original: bytes, query: str) -> bytes:
    e = Engine(ccr.open_store(':memory:'))
    return e.retrieve_query(e.store.put(original), query)


# --- reference §10.7 -----------------------------------------------------------------------------

def orders_page() -> bytes:
    orders = [{'order_id': f'ord-{1000 + i}', 'amount': f'{10 + i * 3.25:.2f}', 'status': 'fulfilled',
               'customer': {'id': f'cus-{i % 7}', 'tier': ['gold', 'silver'][i % 2]},
               'items': [{'sku': f'SKU-{i}-{k}', 'qty': k + 1} for k in range(2)]} for i in range(60)]
    orders[43]['status'] = 'unfulfilled'
    orders[43]['note'] = 'carrier lost the parcel'
    return json.dumps({'object': 'list', 'page': 3, 'orders': orders, 'has_more': True}, indent=2).encode()


def test_pretty_orders_page_every_block_is_a_whole_record():
    page = orders_page()
    view = retrieve_query(page, 'which orders are unfulfilled and why').decode()
    assert len(view) < len(page)
    check_layout(view)
    assert view.startswith(MARKER + '\n\n') and view.endswith('\n\n' + MARKER)
    originals = {o['order_id']: o for o in json.loads(page)['orders']}
    recs = [json.loads(b) for b in blocks(view)]
    assert recs and all({'order_id', 'amount', 'status'} <= set(r) for r in recs)
    for r in recs: assert r == originals[r['order_id']]
    (hit,) = [r for r in recs if r['status'] == 'unfulfilled']
    assert hit['order_id'] == 'ord-1043' and hit['note'] == 'carrier lost the parcel'


def test_records_with_text_and_content_fields_stay_whole():
    msgs = [{'id': 'm1', 'role': 'user', 'content': 'the deploy failed with exit code 137'},
            {'id': 'm2', 'role': 'assistant', 'content': [{'type': 'text', 'text': 'exit code 137 means the container was OOM-killed'}]},
            {'id': 'm3', 'role': 'user', 'content': 'and the redis cache?', 'text': 'long\nmultiline\n\ntext field'},
            {'id': 'm4', 'role': 'tool', 'content': [{'type': 'text', 'text': 'memory limit 512Mi'}, {'type': 'image', 'data': 'AAAA'}]}] * 5
    for i, m in enumerate(msgs): msgs[i] = {**m, 'id': f'{m["id"]}-{i}'}
    doc = json.dumps({'system': 'you are helpful', 'messages': msgs}).encode()
    view = retrieve_query(doc, 'OOM killed container memory').decode()
    check_layout(view)
    by_id = {m['id']: m for m in msgs}
    got = [json.loads(b) for b in blocks(view)]
    assert got and all(g == by_id[g['id']] for g in got)                 # id, role and content travel together
    shapes = {type(g['content']).__name__ for g in got}
    assert shapes == {'list'} or shapes == {'list', 'str'}


def test_records_from_two_arrays_are_separated_by_the_marker():
    doc = json.dumps({'invoices': [{'id': f'inv-{i}', 'state': 'paid' if i != 9 else 'overdue'} for i in range(10)],
                      'payments': [{'id': f'pay-{i}', 'state': 'settled' if i != 0 else 'overdue'} for i in range(10)]}).encode()
    view = retrieve_query(doc, 'overdue').decode()
    assert view == f'{MARKER}\n\n' + json.dumps({'id': 'inv-9', 'state': 'overdue'}, indent=2) + GAP + \
        json.dumps({'id': 'pay-0', 'state': 'overdue'}, indent=2) + f'\n\n{MARKER}'


def test_bare_array_without_envelope_starts_and_ends_with_the_marker():
    doc = json.dumps([{'id': i, 'tag': 'hit' if i in (0, 1, 2) else 'miss'} for i in range(10)]).encode()
    assert retrieve_query(doc, 'hit').decode() == f'{MARKER}\n\n' + '\n\n'.join(
        json.dumps({'id': i, 'tag': 'hit'}, indent=2) for i in (0, 1, 2)) + f'\n\n{MARKER}'


def test_log_with_two_matches_28_lines_apart():
    lines = [f'2026-01-01T10:00:{i:02d}Z INFO worker heartbeat seq={i}' for i in range(60)]
    lines[10] = '2026-01-01T10:00:10Z ERROR payment gateway timeout order=ord-1'
    lines[38] = '2026-01-01T10:00:38Z ERROR payment gateway timeout order=ord-2'
    log = ('\n'.join(lines) + '\n').encode()
    assert retrieve_query(log, 'gateway timeout').decode() == f'{MARKER}\n\n{lines[10]}{GAP}{lines[38]}\n\n{MARKER}'


def test_csv_header_once_whole_rows_marker_between_distant_matches():
    rows = [f'txn-{i:04d},2026-01-{1 + i % 28:02d},{"captured" if i not in (5, 150) else "disputed"},{i * 1.5:.2f}' for i in range(212)]
    data = ('txn_id,date,state,amount\r\n' + '\r\n'.join(rows) + '\r\n').encode()
    view = retrieve_query(data, 'disputed').decode()
    assert view == f'txn_id,date,state,amount\n{MARKER}\n\n{rows[5]}{GAP}{rows[150]}\n\n{MARKER}'
    assert view.count('txn_id,date') == 1


def test_record_less_nested_json_returns_the_full_original():
    doc = json.dumps({'settings': {'db': {'host': 'postgres.internal', 'pool': {'min': 2, 'max': 20}}, 'flags': [1, 2, 3]}}, indent=2).encode()
    assert narrowed_view(doc, 'postgres pool') is None
    assert retrieve_query(doc, 'postgres pool') == doc


def test_ndjson_lines_returned_whole_and_blank_query_never_narrows():
    recs = [{'ts': i, 'level': 'error' if i % 17 == 0 else 'info', 'msg': f'event number {i}'} for i in range(100)]
    nd = ''.join(json.dumps(r) + '\n' for r in recs).encode()
    view = retrieve_query(nd, 'error').decode()
    assert [json.loads(b) for b in blocks(view)] == [r for r in recs if r['level'] == 'error']
    for q in ['', '   ', '\n\t']: assert retrieve_query(nd, q) == nd


# --- properties on random documents ---------------------------------------------------------------

WORDS = ['alpha', 'beta', 'gamma', 'delta', 'omega', 'kappa', 'sigma', 'theta', 'lambda', 'zeta']
scalars = st.one_of(st.sampled_from(WORDS), st.integers(-10**6, 10**6), st.booleans(), st.none(),
                    st.text(alphabet='abc \n"\\é', max_size=12), st.sampled_from([1.10, 2.5e-3]))
fields = st.dictionaries(st.sampled_from(['name', 'state', 'note', 'text', 'content', 'tags', 'child']),
                         scalars | st.lists(scalars, max_size=3) | st.dictionaries(st.sampled_from(WORDS), scalars, max_size=2), max_size=4)

@st.composite
def record_pages(draw):
    "A JSON document with 1-3 arrays of records (unique ids) at random places, plus the ids → records map."
    next_id, groups = iter(range(10**6)), []
    for _ in range(draw(st.integers(1, 3))):
        groups.append([{'id': f'r{next(next_id)}', **draw(fields)} for _ in range(draw(st.integers(1, 30)))])
    shape = draw(st.sampled_from(['bare', 'envelope', 'nested']))
    if shape == 'bare': groups = groups[:1]; doc = groups[0]
    elif shape == 'envelope': doc = {'meta': draw(fields), **{f'k{i}': g for i, g in enumerate(groups)}}
    else: doc = {'outer': {f'k{i}': [i, {'inner': g}] for i, g in enumerate(groups)}}   # arrays of mixed content are descended
    indent = draw(st.sampled_from([None, 1, 2]))
    return json.dumps(doc, indent=indent, ensure_ascii=draw(st.booleans())).encode(), {r['id']: r for g in groups for r in g}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record_pages(), st.lists(st.sampled_from(WORDS + ['r1', 'r7', 'r12', 'nothing']), min_size=1, max_size=3).map(' '.join))
def test_json_view_blocks_are_whole_original_records(page, query):
    doc, by_id = page
    view = narrowed_view(doc, query)
    if view is None: return
    text = view.decode()
    check_layout(text)
    assert text.startswith(MARKER + '\n\n') and text.endswith('\n\n' + MARKER)
    got = [json.loads(b) for b in blocks(text)]
    assert 1 <= len(got) <= 20
    for g in got: assert g == by_id[g['id']]                              # whole, and never another record's fields
    terms = set(tokenize(query))
    for g in got: assert terms & set(tokenize(json.dumps(g, ensure_ascii=False)))   # each shown record matches the query


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(WORDS), st.text(alphabet='xyz ,"\n', max_size=8), st.integers(0, 99)), min_size=2, max_size=60),
       st.sampled_from(WORDS), st.sampled_from(['\n', '\r\n']))
def test_csv_view_rows_are_verbatim_in_order_with_the_header_once(rows, word, newline):
    buf = io.StringIO(newline='')
    w = csv.writer(buf, lineterminator=newline)
    w.writerow(['kind', 'label', 'n'])
    for r in rows: w.writerow(r)
    data = buf.getvalue().encode()
    view = narrowed_view(data, word)
    if view is None: return
    text = view.decode()
    assert text.startswith('kind,label,n\n') and text.count('kind,label,n') == 1
    body = text[len('kind,label,n\n'):]
    # rows are joined by blank lines, and a quoted field may itself hold a blank line, so parse each
    # stretch between markers as CSV (blank lines between records are skipped by the reader)
    parsed = [r for seg in body.split(MARKER) for r in csv.reader(io.StringIO(seg.strip('\n'), newline='')) if r]
    want = [list(map(str, r)) for r in rows if word in tokenize(' '.join(map(str, r)))]
    assert len(parsed) == min(20, len(want)) and in_order_subset(parsed, want)
    assert body.startswith(MARKER) == (parsed[0] != list(map(str, rows[0])))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(WORDS + [''] * 3), min_size=1, max_size=80), st.sampled_from(WORDS))
def test_text_view_units_are_whole_trimmed_lines(words, word):
    lines = [f'  line {i} {w}  ' for i, w in enumerate(words)]
    data = '\n'.join(lines).encode()
    view = narrowed_view(data, word)
    hits = [l.strip() for l in lines if word in l.split()]
    if view is None: assert not hits; return
    text = view.decode()
    check_layout(text)
    assert len(blocks(text)) == min(20, len(hits)) and in_order_subset(blocks(text), hits)
    first, last = lines[0].strip(), lines[-1].strip()
    assert text.startswith(MARKER) == (blocks(text)[0] != first)
    assert text.endswith(MARKER) == (blocks(text)[-1] != last)


# --- reference §10.3: live, through the real server -------------------------------------------------

POINTER_SHAPES = [re.compile(p, re.M) for p in [r'ccr://', r'<<ccr:', r'^full: ', r'__caveman_elided__', r'elided \(caveman\)']]

@asynccontextmanager
async def session(env):
    cmd = server_command()
    async with stdio_client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            yield s

async def retrieve(s, handle, query=None) -> str:
    args = {'recovery_handle': handle} if query is None else {'recovery_handle': handle, 'query': query}
    res = await s.call_tool('caveman_retrieve', args)
    assert not res.is_error, res.content[0].text
    return res.content[0].text


def test_live_full_and_narrowed_retrieves_show_no_pointer_shapes(store_env):
    inspect_text = corpus_path('json_pip_inspect.json').read_text()
    airports = corpus_path('csv_faa_airports.csv').read_bytes()
    csv_handle = ccr.open_store(store_env['CAVEMAN_CCR_DB']).put(airports)    # no tabular compressor yet: store it as another tool would

    async def run():
        async with session(store_env) as s:
            p = json.loads((await s.call_tool('caveman_compress', {'input': inspect_text})).content[0].text)
            h = p['recovery_handle']
            assert h and p['compressed'] != inspect_text
            full = await retrieve(s, h)
            assert full == inspect_text
            for pkg in json.loads(inspect_text)['installed']: assert f'"name": "{pkg["metadata"]["name"]}"' in full
            assert (await retrieve(s, csv_handle)).encode() == airports
            for q in ['httpx requests license', 'sphinx documentation theme']:
                view = await retrieve(s, h, q)
                assert view and len(view) < len(inspect_text) and MARKER in view
                assert not any(pat.search(view) for pat in POINTER_SHAPES), q
                names = [json.loads(b)['metadata']['name'] for b in blocks(view)]
                assert names and set(names) <= {x['metadata']['name'] for x in json.loads(inspect_text)['installed']}
            view = await retrieve(s, csv_handle, 'Yakutat Thigpen')
            assert view.startswith('iata,name,city') and all(l in airports.decode().splitlines() for l in blocks(view.split('\n', 1)[1]))
            assert not any(pat.search(view) for pat in POINTER_SHAPES)
    asyncio.run(run())


def test_live_handle_forms_and_the_payout_after_five(store_env):
    original = corpus_path('json_pip_inspect.json').read_text()

    async def run():
        async with session(store_env) as s:
            h = json.loads((await s.call_tool('caveman_compress', {'input': original})).content[0].text)['recovery_handle']
        for form in [h, f'<<ccr:{h}>>', f'ccr:{h}', f'ccr://{h}']:
            async with session(store_env) as s:                                     # a fresh ledger each
                assert await retrieve(s, form) == original, form
        async with session(store_env) as s:
            queries = ['urllib3 pooling', 'docopt', 'babel locale', 'rich terminal', 'httpcore', 'jinja2 templates', 'pygments lexer', 'idna']
            outs = [await retrieve(s, h, q) for q in queries]
            for o in outs[:5]: assert not o.startswith(PAYOUT_NOTE) and o != original and len(o) < len(original)
            assert outs[5] == PAYOUT_NOTE + '\n\n' + original                       # the sixth distinct retrieve pays out in full
            assert 'COMPLETE stored original' in outs[5]
            assert await retrieve(s, h, queries[0]) == POINTER_NOTE                 # an exact repeat
            assert await retrieve(s, f'  ccr:{h} ', '  ' + queries[1]) == POINTER_NOTE
            assert await retrieve(s, h) == POINTER_NOTE                             # recorded with the payout
    asyncio.run(run())
