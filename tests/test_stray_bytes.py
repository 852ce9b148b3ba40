"""Shell output with stray bytes that are not UTF-8 (a Latin-1 file name, a CP-1252 log line, a lone 0xFF)
is still compressed: the live captures of this machine (tests/_live.py), each given stray bytes on some
lines, through the real `Engine`. Every line a log, text or terminal view shows is byte-for-byte a line of the original,
no marker states a false fact (tests/_truth.py), no signal line is hidden (tests/_signals.py), the
handle gives the exact bytes back, and the saving stays close to that of the clean capture."""
import pytest

from _live import live_corpus   # noqa: F401  (session fixture)

from caveman import ccr
from caveman.engine import Engine
from _signals import NUL_NOTE

pytestmark = pytest.mark.slow
LINE_TYPES = {'log', 'text', 'listing', 'terminal', 'search-result', 'repetition'}


def with_stray_bytes(data: bytes) -> bytes:
    "`data` as a Latin-1 tool would have written it if every 'y' were a y-acute: byte 0xFD, never valid UTF-8 on its own. The repetition of the lines is unchanged."
    return data.replace(b'y', b'\xfd')


def test_stray_bytes_do_not_stop_compression(live_corpus):
    from _truth import false_claims
    from _signals import hidden_signals
    eng = Engine(ccr.open_store(':memory:'))
    tried, problems = 0, {}
    for name, clean in live_corpus:
        base = eng.compress(clean)
        if base.passed_through or base.content_type not in LINE_TYPES: continue
        data = with_stray_bytes(clean)
        if data == clean: continue
        try: data.decode('utf-8'); continue
        except UnicodeDecodeError: pass
        tried += 1
        r = eng.compress(data)
        if r.passed_through: problems[name] = f'passed through ({r.content_type}); clean: {base.ratio}'; continue
        have = set(data.replace(b'\x00', b'\n').split(b'\n') if NUL_NOTE.encode() in r.output else data.split(b'\n'))   # a NUL-records view: records one a line
        foreign = [l for l in r.output.split(b'\n') if l not in have and b'caveman' not in l]
        if foreign and r.content_type in ('log', 'text', 'terminal'):     # the others regroup lines (search hits under their path)
            problems[name] = f'lines not in the original: {foreign[:3]}'
        if (p := false_claims(data, r.output, r.content_type)): problems[name] = p
        if (p := hidden_signals(data, r.output, r.content_type)): problems[name] = p
        if eng.retrieve(r.recovery_handle) != data: problems[name] = 'retrieve is not byte-exact'
        if r.ratio < base.ratio - 0.15: problems[name] = f'saving fell from {base.ratio} to {r.ratio}'
    assert tried >= 5, tried
    assert problems == {}
