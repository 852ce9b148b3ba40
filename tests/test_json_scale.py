"""The JSON path on a big one-line array of small objects (issue 12 item 6, break test 9 row 2): Python's own
allocations while detecting and compressing stay a small multiple of the payload. Measured with tracemalloc in a
fresh process (deterministic: object sizes, not timings). Before: detection built the whole tree only to drop it
(6.5x), redundancy profiles were one frozenset per element (9x), and `compress` peaked at 19.4x. Then the
compressor held the whole parsed tree of the one-line array and every element's canonical text (9.4x for
`json_view` alone); it now reads a top-level array a block of elements at a time (`_Walk.stream`)."""
import json, subprocess, sys

import pytest
from conftest import child_env

_CODE = '''
import json, random, sys, tracemalloc
from caveman import ccr
from caveman.detect import detect
from caveman.engine import Engine
from caveman.tokens import default_counter
from caveman.compressors.json import json_view
rnd = random.Random(1)
items = [{"id": i, "name": f"user{i}", "email": f"u{i}@ex.com", "tags": ["a", "b", str(i)], "score": rnd.random(),
          "status": "ok", "msg": "x" * 10} for i in range(int(sys.argv[1]))]
data = json.dumps(items, separators=(",", ":")).encode(); del items
counter = default_counter(); counter.count("warm up")
engine = Engine(ccr.open_store(":memory:"), counter=counter)
engine.compress(data[:20000].rsplit(b",{", 1)[0] + b"]")            # warm: imports, compiled patterns
def peak(f):
    tracemalloc.start(); out = f(); got = tracemalloc.get_traced_memory()[1]; tracemalloc.stop()
    return out, got / len(data)
kind, detect_peak = peak(lambda: detect(data))
view, view_peak = peak(lambda: json_view(data))
res, compress_peak = peak(lambda: engine.compress(data))
print(json.dumps({"bytes": len(data), "kind": kind, "detect": detect_peak, "compress": compress_peak, "view": view_peak,
                  "same": view.output == res.output, "ratio": res.ratio}))
'''


@pytest.fixture(scope='module')
def peaks():
    out = subprocess.run([sys.executable, '-c', _CODE, '15000'], capture_output=True, text=True, env=child_env(), check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_payload_is_a_compressed_json_array(peaks):
    assert peaks['bytes'] > 2_000_000 and peaks['kind'] == 'json' and peaks['ratio'] > 0.3


def test_detection_keeps_no_tree(peaks):
    "Validity alone (`caveman.jsonlex.is_json_value`): the decoded text and the array's slots, not a tree of objects (6.5x before)."
    assert peaks['detect'] <= 2.0


def test_compressor_keeps_no_tree(peaks):
    "The compressor alone reads the one-line array a block of elements at a time: its element spans and tables, the kept elements' texts and the view (9.4x on main, ~3.3x)."
    assert peaks['same'] and peaks['view'] <= 4.5


def test_compress_peaks_low(peaks):
    "The whole engine call: 19.4x before the tree-free detection, 9.4x with it, ~4.3x with the block reader."
    assert peaks['compress'] <= 6.0
