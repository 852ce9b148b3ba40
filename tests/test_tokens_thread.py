"""Proof that big counts run on the one thread tiktoken's regex serves at full speed.

tiktoken's Rust core shares its pre-tokenizer regex's caches (`regex_automata` pools) between all threads;
a pool's fast path belongs to the thread that used it first, and every other thread takes a locked slow
path on each regex call (callgrind, 200 KB of prose: +22% instructions a count; nbs/01_tokens, "One
thread counts"). So the encoder's first regex call must be made on the counting thread, and every big
count — the caller's own and the engine's overlapped count of the payload — must run there. Checked in
a fresh process (the encoder is process-wide) by recording the thread of every encoder call: on the code
before this change the first call was the caller's, and the engine counted the payload on a fresh thread
(two threads made big counts).
"""
import json, subprocess, sys

PROBE = r'''
import json, threading
import tiktoken
from caveman import tokens
calls = []                                           # (thread id, characters) of every encoder call, in order
_encode_ordinary, _encoded_length = tiktoken.Encoding.encode_ordinary, tokens.encoded_length
def encode_ordinary(self, text, *a, **k):
    calls.append((threading.get_ident(), len(text))); return _encode_ordinary(self, text, *a, **k)
def encoded_length(enc, text):
    calls.append((threading.get_ident(), len(text))); return _encoded_length(enc, text)
tiktoken.Encoding.encode_ordinary, tokens.encoded_length = encode_ordinary, encoded_length
from caveman.engine import Engine
from caveman import ccr
counter = tokens.default_counter()
counter.count('warm up')                             # a small count on the caller's thread
big = ''.join(f'line {i}: the quick brown fox jumps over the lazy dog, {i * 7} times\n' for i in range(20000))
first = calls[0][0]; BIG = 32 * 1024
counter.count(big); counter.count_utf8(big.encode())
Engine(ccr.open_store(':memory:'), counter=counter).compress(big.encode())
print(json.dumps({'first_is_caller': first == threading.get_ident(),
                  'big_threads': len({t for t, n in calls if n >= BIG}),
                  'big_on_first': all(t == first for t, n in calls if n >= BIG),
                  'big_calls': sum(n >= BIG for t, n in calls)}))
'''


def test_big_counts_run_on_the_thread_that_first_used_the_encoder():
    r = subprocess.run([sys.executable, '-c', PROBE], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got['big_calls'] >= 3                     # the caller's two counts and the engine's payload (its view may be small)
    assert not got['first_is_caller']                # the first regex call was made on the counting thread ...
    assert got['big_threads'] == 1 and got['big_on_first']   # ... and every big count ran there


VIEW_PROBE = r'''
import json, threading, time
from caveman import tokens
from caveman.compressors.base import Compressor
from caveman.engine import Engine
from caveman import ccr
calls = []                                           # (thread name, characters, start, end) of every count, in order
_encoded_length = tokens.encoded_length
def encoded_length(enc, text):
    t0 = time.perf_counter()
    if len(text) == PAYLOAD: time.sleep(0.3)         # the payload's count outlasts the compressor, always
    n = _encoded_length(enc, text)
    calls.append((threading.current_thread().name, len(text), t0, time.perf_counter())); return n
tokens.encoded_length = encoded_length
counter = tokens.default_counter(); counter.count('warm up')
big = ''.join(f'line {i}: the quick brown fox jumps over the lazy dog, {i * 7} times\n' for i in range(4000))
PAYLOAD = len(big)
half = Compressor('text', lambda b, q: b'\n'.join(b.split(b'\n')[::2]), 'S3')   # instant: every other line
r = Engine(ccr.open_store(':memory:'), counter=counter, registry={'text': half}).compress(big.encode(), type='text')
calls = [c for c in calls if c[1] >= 32 * 1024]
print(json.dumps({'calls': [c[:2] for c in calls], 'payload': PAYLOAD, 'view': len(r.output),
                  'view_after_payload': len(calls) == 2 and calls[1][2] >= calls[0][3]}))
'''


def test_the_view_is_counted_after_the_payload_on_the_counting_thread():
    "A fast compressor's view used to be counted on the caller's thread beside the payload's count (tiktoken's slow path, and two counts fighting over one regex pool: 2-3.8x of one count in CPU at 1 MB); it now waits for the payload's count and is counted on the counting thread: one count of each, nothing else."
    r = subprocess.run([sys.executable, '-c', VIEW_PROBE], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got['calls'] == [['caveman-count', got['payload']], ['caveman-count', got['view']]]
    assert got['view_after_payload']
