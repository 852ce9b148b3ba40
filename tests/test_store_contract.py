"""The store contract of `02_ccr`, run against both backends: SQLite (a file) and PostgreSQL (a real server).

One suite, parametrised by backend: whatever a caller may rely on from `ccr.Store` — content-addressed
handles, idempotent puts, byte-exact gets or `NotFound`, metadata and measurement rules, typed objects,
the summary, the budget refused before anything is written, threads, persistence — holds for both.
The expected values are computed here from the inputs (hashlib, sums), never read from the store.
"""
import hashlib, json, os, threading

import pytest

from caveman import ccr
from caveman.corpus import corpus_path


@pytest.fixture(params=['sqlite', 'postgres'])
def opener(request, tmp_path):
    "A function `opener(max_bytes=None, mode='rw')` that opens the same fresh store of this backend each time it is called."
    if request.param == 'sqlite':
        target = str(tmp_path / 'store' / 'ccr.db')
    else:
        target = request.getfixturevalue('pg').url()
    opened = []
    def open_(max_bytes=None, mode='rw'):
        s = ccr.open_store(target, max_bytes=max_bytes, mode=mode); opened.append(s); return s
    open_.backend = request.param
    yield open_
    for s in opened: s.close()


@pytest.fixture
def store(opener): return opener()


def expected_handle(data: bytes) -> str: return 'ccr_' + hashlib.sha256(data).hexdigest()[:32]


PAYLOADS = [corpus_path(n).read_bytes() for n in ('json_github_list_issues.json', 'log_pip_install_verbose.log', 'csv_noaa_weather.csv')]
PAYLOADS += [b'\x00\xff\xfe binary \r tail \xc3', b'', bytes(range(256)) * 64]


def test_backend_is_the_one_asked_for(opener, store):
    assert isinstance(store, ccr.Store)
    assert type(store).__name__ == ('PgStore' if opener.backend == 'postgres' else 'Store')
    assert store.persistent and not store.read_only and not store.unavailable


def test_round_trip_byte_exact(store):
    for p in PAYLOADS:
        h = store.put(p, content_type='json', compressor='json', tokens_before=1000, tokens_after=100)
        assert h == expected_handle(p)
        assert store.get(h) == p


def test_put_is_idempotent(store):
    h = store.put(PAYLOADS[0], content_type='json', compressor='json', tokens_before=10, tokens_after=1)
    assert store.put(PAYLOADS[0], content_type='json', compressor='json', tokens_before=10, tokens_after=1) == h
    assert store.put(bytearray(PAYLOADS[0])) == h
    assert store.summary()['totals']['count'] == 1
    assert store.used_bytes() == len(PAYLOADS[0])


def test_unknown_handles_are_not_found_never_near_misses(store):
    h = store.put(PAYLOADS[0])
    for bad in (h[:-1] + ('0' if h[-1] != '0' else '1'), h.upper(), 'ccr_', '', 'ccr_obj_' + h[4:], h + ' '):
        with pytest.raises(ccr.NotFound): store.get(bad)
        with pytest.raises(ccr.NotFound): store.get_metadata(bad)


def test_metadata_is_first_retained(store):
    mh = store.put(b'metadata payload', metadata=b'{"v":1}')
    assert store.get_metadata(mh) == b'{"v":1}'
    store.put(b'metadata payload', metadata=b'{"v":2}')
    assert store.get_metadata(mh) == b'{"v":1}'
    nh = store.put(b'no metadata yet')
    assert store.get_metadata(nh) == b''
    store.put(b'no metadata yet', metadata=b'late')
    assert store.get_metadata(nh) == b'late'
    assert store.used_bytes() == len(b'metadata payload') + 7 + len(b'no metadata yet') + 4


def test_a_reput_without_measurement_keeps_the_measured_one(store):
    h = store.put(b'measured once', content_type='log', compressor='log', tokens_before=500, tokens_after=50)
    store.put(b'measured once')
    assert store.summary()['by_content_type'] == {'log': {'count': 1, 'tokens_before': 500, 'tokens_after': 50, 'ratio': 0.9}}
    store.put(b'measured once', content_type='text', compressor='text', tokens_before=400, tokens_after=40)
    assert store.summary()['by_content_type'] == {'text': {'count': 1, 'tokens_before': 400, 'tokens_after': 40, 'ratio': 0.9}}
    assert store.get(h) == b'measured once'


def test_typed_objects(store):
    data = b'{"path":"README.md","lines":120}'
    oid = store.put_object(data, 'FileObservation', 'sess-1', source='read_file', repository_state='git:abc123', dependencies=['ccr_dep1'])
    key = b'FileObservation\x00sess-1\x00read_file\x00git:abc123\x00sha256:' + hashlib.sha256(data).hexdigest().encode()
    assert oid == 'ccr_obj_' + hashlib.sha256(key).hexdigest()[:32]
    assert store.get(oid) == data and store.get_metadata(oid) == b''
    o = store.get_object(oid)
    assert (o.object_type, o.session_id, o.dependencies, o.currentness, o.lifecycle, o.original_byte_length) == \
           ('FileObservation', 'sess-1', ('ccr_dep1',), 'current', 'hot', len(data))
    store.set_currentness(oid, 'stale'); store.set_lifecycle(oid, 'cold')
    assert (store.get_object(oid).currentness, store.get_object(oid).lifecycle) == ('stale', 'cold')
    with pytest.raises(ccr.InvalidObject): store.set_currentness(oid, 'fresh')
    with pytest.raises(ccr.NotFound): store.set_lifecycle('ccr_obj_missing', 'cold')
    with pytest.raises(ccr.InvalidObject): store.put_object(data, 'Screenshot', 'sess-1')
    assert store.put_object(data, 'FileObservation', 'sess-1', source='read_file', repository_state='git:abc123', dependencies=['ccr_dep1']) == oid
    assert store.get_object(oid).currentness == 'stale'   # a re-put resets nothing
    store.put_object(b'first', 'TaskDecision', 'sess-1', object_id='decision-7')
    with pytest.raises(ccr.ObjectCollision): store.put_object(b'second', 'TaskDecision', 'sess-1', object_id='decision-7')
    assert store.get('decision-7') == b'first'
    assert store.get(store.put_object(b'', 'ExecutionState', 'sess-1')) == b''
    deps = len(json.dumps(['ccr_dep1'], separators=(',', ':'))) + 2 + 2
    assert store.used_bytes() == len(data) + len(b'first') + deps


def test_session_listing_newest_first(store):
    ids = [store.put_object(f'step {i}'.encode(), 'CommandResult', 'sess-list', created_at=ccr.rfc3339_nano(10**18 + i)) for i in range(5)]
    store.put_object(b'someone else', 'CommandResult', 'sess-other')
    assert [o.object_id for o in store.list_session_objects('sess-list')] == ids[::-1]
    assert [o.data for o in store.list_session_objects('sess-list', limit=2)] == [b'step 4', b'step 3']
    assert store.list_session_objects('nobody') == []


def test_summary_sums_the_rows(store):
    rows = [(p, ct, tb, ta) for p, ct, tb, ta in zip(PAYLOADS[:4], ['json', 'log', 'csv', 'json'], [1000, 800, 600, 50], [100, 80, 60, 50])]
    for p, ct, tb, ta in rows: store.put(p, content_type=ct, compressor=ct, tokens_before=tb, tokens_after=ta)
    s = store.summary()
    assert s['totals']['count'] == 4
    assert (s['totals']['tokens_before'], s['totals']['tokens_after']) == (2450, 290)
    assert s['totals']['ratio'] == round((2450 - 290) / 2450, 4)
    assert s['by_content_type']['json'] == {'count': 2, 'tokens_before': 1050, 'tokens_after': 150, 'ratio': round(900 / 1050, 4)}
    assert s['storage_bytes'] == sum(len(r[0]) for r in rows)
    assert (s['basis'], s['max_storage_bytes'], 'storage_full' in s) == ('inferred', ccr.DEFAULT_MAX_BYTES, False)
    assert list(s) == ['totals', 'by_content_type', 'basis', 'storage_bytes', 'max_storage_bytes']
    assert 'verified' not in json.dumps(s)


def test_empty_summary(store):
    assert store.summary() == {**ccr.empty_summary(), 'max_storage_bytes': ccr.DEFAULT_MAX_BYTES}


def test_budget_is_checked_before_anything_is_written(opener):
    small = opener(max_bytes=1 << 20)
    first, second = os.urandom(600 * 1024), os.urandom(600 * 1024)
    h1 = small.put(first, content_type='text', tokens_before=10, tokens_after=1)
    used = small.used_bytes()
    assert used == len(first)
    with pytest.raises(ccr.BudgetExceeded, match='budget exceeded'): small.put(second)
    with pytest.raises(ccr.BudgetExceeded): small.put_object(second, 'BuildResult', 's')
    with pytest.raises(ccr.NotFound): small.get(expected_handle(second))
    assert (small.used_bytes(), small.summary()['totals']['count']) == (used, 1)
    assert small.get(h1) == first
    assert small.put(first, content_type='text', tokens_before=10, tokens_after=1) == h1   # a re-put at quota still succeeds
    small.put(b'x' * 1024)
    assert 'storage_full' not in small.summary()
    shrunk = opener(max_bytes=512 * 1024)   # a lower budget evicts nothing
    assert shrunk.get(h1) == first
    s = shrunk.summary()
    assert (s['storage_full'], s['max_storage_bytes']) == (True, 512 * 1024)
    with pytest.raises(ccr.BudgetExceeded): shrunk.put(b'one more byte')
    assert shrunk.put(first, content_type='text', tokens_before=10, tokens_after=1) == h1


def test_everything_survives_reopening(opener):
    a = opener()
    hs = [a.put(p, content_type='text', tokens_before=5, tokens_after=1) for p in PAYLOADS]
    oid = a.put_object(b'obj', 'TaskDecision', 's'); a.set_currentness(oid, 'archived')
    before = a.summary(); a.close()
    with pytest.raises(ccr.StoreError, match='closed'): a.get(hs[0])
    b = opener(mode='ro')
    assert [b.get(h) for h in hs] == PAYLOADS
    assert b.get_object(oid).currentness == 'archived'
    assert b.summary() == before
    with pytest.raises(ccr.ReadOnly): b.put(b'not in a read-only store')


def test_threads_share_one_store(store):
    errors = []
    def worker(t):
        try:
            for i in range(50):
                p = f'thread {t} item {i}'.encode() if i % 2 else f'shared item {i}'.encode()
                assert store.get(store.put(p, content_type='text', tokens_before=10, tokens_after=5)) == p
        except Exception as e: errors.append(e)
    ts = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in ts: t.start()
    for t in ts: t.join()
    assert errors == []
    assert store.summary()['totals']['count'] == 8 * 25 + 25


def test_upkeep_verbs(store):
    "`originals`, `info`, `remove`, `prune` and `vacuum` (the verbs of `caveman store`): the listing and totals are the inputs' sizes, a read is noted, prune removes the least recently read first, removal lowers the retained total exactly."
    data = {i: bytes([65 + i]) * (1000 * (i + 1)) for i in range(4)}
    hs = {i: store.put(d, content_type='log', tokens_before=10, tokens_after=2, metadata=b'md' if i == 1 else None) for i, d in data.items()}
    rows = {r['handle']: r for r in store.originals()}
    assert {h: rows[h]['bytes'] for h in hs.values()} == {hs[i]: len(d) for i, d in data.items()}
    assert all(r['last_read'] == '' and r['tokens_before'] == 10 for r in rows.values())
    total = sum(len(d) for d in data.values()) + 2
    info = store.info()
    assert (info['count'], info['stored_bytes'], info['read_only']) == (4, total, '') and info['file_bytes'] > 0
    assert store.get(hs[0]) == data[0]                                   # read: noted, so it outlives the others in a prune
    assert {r['handle']: r['last_read'] != '' for r in store.originals()} == {h: h == hs[0] for h in hs.values()}
    gone = store.prune(max_bytes=len(data[0]) + len(data[3]))
    assert gone == [hs[1], hs[2]] and store.used_bytes() == len(data[0]) + len(data[3])
    assert store.remove([hs[3], hs[3], expected_handle(b'never stored')]) == [hs[3]]
    assert store.used_bytes() == len(data[0]) and [r['handle'] for r in store.originals()] == [hs[0]]
    with pytest.raises(ccr.NotFound): store.get(hs[1])
    assert store.prune(older_than=0) == [hs[0]] and store.used_bytes() == 0 and store.originals() == []
    assert isinstance(store.vacuum(), int)


def test_large_originals_round_trip_and_reput(opener):
    "Originals past the PostgreSQL store's streaming size (sent by COPY and read in slices there) come back byte-exact, re-put idempotently (also from threads at once), and count once in the retained bytes."
    from caveman.ccr_postgres import STREAM_BYTES, SLICE_BYTES
    store = opener(max_bytes=1 << 30)
    big = [os.urandom(STREAM_BYTES + SLICE_BYTES // 2 + 7), bytes(range(256)) * ((STREAM_BYTES * 2) // 256 + 1), b'\x00' * STREAM_BYTES]
    hs = [store.put(d, content_type='log', tokens_before=5, tokens_after=1, metadata=b'meta') for d in big]
    assert hs == [expected_handle(d) for d in big]
    assert [store.get(h) for h in hs] == big
    assert store.used_bytes() == sum(len(d) + 4 for d in big)
    again = []
    ts = [threading.Thread(target=lambda: again.append(opener(max_bytes=1 << 30).put(big[0]))) for _ in range(4)]
    for t in ts: t.start()
    for t in ts: t.join()
    assert again == [hs[0]] * 4 and store.used_bytes() == sum(len(d) + 4 for d in big)
    assert [store.get_metadata(h) for h in hs] == [b'meta'] * 3
