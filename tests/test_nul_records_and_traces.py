"""Views that hide nothing (break test 7, rows 01, 18 and 02), on output captured now, on this machine.

- NUL bytes: `find -print0` output and a test log with one stray NUL are text, not a one-line "binary
  input not shown" note; real binaries from /usr/bin and /usr/lib still are binary. A NUL-separated
  view shows records of the original one a line, says so, and its handle returns the exact bytes.
- Kernel logs (`dmesg`, or a generated log of the same shape when the ring buffer is not readable) read
  as logs; no marker offers a lone punctuation character as what the elided rows share.
- `strace -f` reads as a log (not code), compresses, and keeps its error returns visible or counted.
- The hook says why in its stderr line when it stands aside on a large output it found no view for.

Every judge here reads the original with its own code (`_signals`, `_truth`, and the record checks
below); nothing is hard-coded about what the commands print."""
import glob, json, os, re, shutil, subprocess, sys
from pathlib import Path

import pytest

from caveman import ccr
from caveman.detect import detect
from caveman.engine import Engine
from conftest import child_env

CAVEMAN = Path(sys.executable).with_name('caveman')
ELL = '\u2026'


def marker(line: bytes) -> bool: return line.startswith(ELL.encode()) and b'caveman' in line


def run(cmd, **kw) -> bytes:
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          env=child_env(), timeout=300, **kw).stdout


@pytest.fixture(scope='module')
def eng():
    return Engine(ccr.open_store(':memory:'))


# ---------------------------------------------------------------------------------------------- NUL bytes
def find_print0(limit: int = 200_000) -> bytes:
    "`find /usr -print0`, cut after the last whole record under `limit` bytes."
    out = subprocess.run(['find', '/usr', '-print0'], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=300).stdout
    cut = out[:limit]
    return cut[:cut.rfind(b'\x00') + 1]


def test_find_print0_is_shown_record_by_record(eng):
    data = find_print0()
    records = data.split(b'\x00')[:-1]
    assert len(records) > 1000 and b'\n' not in data
    assert detect(data) != 'binary'
    r = eng.compress(data)
    assert r.recovery_handle and r.ratio > 0.3 and r.lossless_to_model is False, r
    assert eng.retrieve(r.recovery_handle) == data
    shown = [l for l in r.output.split(b'\n') if l and not marker(l)]
    have = set(records)
    assert [l for l in shown if l not in have] == []                          # every shown line is a whole record
    assert shown[0] == records[0] and shown[-1] == records[-1]
    assert len(shown) >= 20
    assert any(b'NUL' in l for l in r.output.split(b'\n') if marker(l))       # the view says its line breaks are not the original's


def test_a_stray_nul_leaves_a_test_log_readable(eng, tmp_path):
    (tmp_path / 'test_x.py').write_text('import pytest\n@pytest.mark.parametrize("i", range(300))\n'
                                        'def test_many(i):\n    assert i != 137, f"value {i} is bad"\n')
    clean = run([sys.executable, '-m', 'pytest', '-v', '-p', 'no:cacheprovider', str(tmp_path / 'test_x.py')], cwd=tmp_path)
    assert b'value 137 is bad' in clean
    data = clean.replace(b'PASSED', b'PASS\x00ED', 1)                          # one stray NUL, as a test printing a C string
    assert detect(data) != 'binary'
    r = eng.compress(data)
    assert r.recovery_handle and r.ratio > 0.3
    assert eng.retrieve(r.recovery_handle) == data
    from _signals import hidden_signals
    assert hidden_signals(data, r.output, r.content_type) == []
    assert b'value 137 is bad' in r.output
    lines = data.split(b'\n')
    view = r.output.split(b'\n')
    assert lines[0] in view and lines[-2] in view


def test_real_binaries_are_still_binary():
    files = [p for p in [shutil.which('ls'), shutil.which('find'), os.path.realpath(sys.executable),
                         *sorted(glob.glob('/usr/lib/x86_64-linux-gnu/libc.so.*'))[:1],
                         *sorted(glob.glob('/usr/share/doc/*/changelog.Debian.gz'))[:3],
                         *sorted(glob.glob('/usr/share/icons/*/*/*/*.png'))[:2]] if p and os.path.isfile(p)]
    assert len(files) >= 4, files
    assert {f: detect(Path(f).read_bytes()[:65536]) for f in files} == {f: 'binary' for f in files}


def test_hook_shows_find_print0_and_returns_it_exactly(tmp_path):
    data = find_print0(60_000).decode('utf-8', 'surrogateescape')
    env = child_env(only=(), PATH='/usr/bin:/bin', HOME=str(tmp_path / 'home'), CAVEMAN_HOME=str(tmp_path / 'cv'))
    event = json.dumps({'hook_event_name': 'PostToolUse', 'tool_name': 'Bash', 'tool_input': {'command': 'find /usr -print0'},
                        'tool_response': {'stdout': data, 'stderr': '', 'interrupted': False}}).encode('utf-8', 'surrogateescape')
    r = subprocess.run([str(CAVEMAN), 'hook', 'claude-code', '--recovery'], input=event, capture_output=True, env=env, timeout=300)
    assert r.returncode == 0 and r.stdout, r.stderr
    view = json.loads(r.stdout)['hookSpecificOutput']['updatedToolOutput']['stdout']
    records = set(data.split('\x00'))
    shown = [l for l in view.split('\n') if l and not l.startswith(ELL)]
    assert len(shown) >= 10 and all(l in records for l in shown)
    handle = re.search(r'recovery_handle="(ccr_[0-9a-f]+)"', view)[1]
    got = subprocess.run([str(CAVEMAN), 'retrieve', handle], capture_output=True, env=env, timeout=120)
    assert got.stdout == data.encode('utf-8', 'surrogateescape')


# ---------------------------------------------------------------------------------------------- kernel logs
def kernel_like(n: int = 400) -> bytes:
    "A dmesg-shaped log: elapsed-seconds stamps, subsystem prefixes, a few warnings and a kernel BUG line."
    subs = ['pci 0000:00:0%d.0', 'ACPI', 'virtio_net virtio%d', 'EXT4-fs (vda%d)', 'rcu', 'clocksource', 'NET', 'usb %d-1']
    out = []
    for i in range(n):
        sub = subs[i % len(subs)].replace('%d', str(i % 4))
        msg = (f'WARNING: CPU: {i % 2} PID: {100 + i} at kernel/sched/core.c:{3000 + i} resched+0x{i:x}/0x80' if i % 97 == 13 else
               f'BUG: unable to handle page fault for address: {i * 4096:016x}' if i == 311 else
               f'{sub}: setting up region {i} of {n}, {i * 37 % 1000} KiB, flags 0x{i * 13 % 256:02x}')
        out.append(f'[{i * 0.0123457:12.6f}] {msg}')
    return ('\n'.join(out) + '\n').encode()


def kernel_logs() -> list[tuple[str, bytes]]:
    logs = [('generated', kernel_like())]
    live = subprocess.run(['dmesg'], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60) if shutil.which('dmesg') else None
    if live is not None and live.returncode == 0 and live.stdout.count(b'\n') >= 20: logs.append(('dmesg', live.stdout))
    return logs


_PUNCT_FACT = re.compile(r'\ball [^\s=;]+="([^"\w]*)"')


@pytest.mark.parametrize('name, data', kernel_logs())
def test_kernel_log_reads_as_a_log(name, data, eng):
    from _signals import hidden_signals
    from _truth import false_claims
    assert detect(data) == 'log', name
    r = eng.compress(data)
    assert not r.passed_through and eng.retrieve(r.recovery_handle) == data
    assert hidden_signals(data, r.output, r.content_type) == []
    assert false_claims(data, r.output, r.content_type) == []
    view = r.output.decode().split('\n')
    loud = [l for l in data.decode('utf-8', 'replace').split('\n') if re.search(r'\b(?:warn|warning|error|fail|failed)\b', l, re.I)]
    assert [l for l in loud if l not in view] == []
    assert [l for l in view if l.startswith(ELL) and _PUNCT_FACT.search(l)] == []


@pytest.mark.parametrize('name, data', kernel_logs())
def test_table_markers_offer_no_punctuation_invariant(name, data):
    "Read as a fixed-width table anyway (the type forced), a kernel log's markers state no fact about a lone bracket."
    r = Engine(ccr.open_store(':memory:')).compress(data, type='table')
    markers = [l for l in r.output.decode().split('\n') if l.startswith(ELL) and 'elided (caveman)' in l]
    assert [m for m in markers if _PUNCT_FACT.search(m)] == []


# ---------------------------------------------------------------------------------------------- strace
@pytest.fixture(scope='module')
def strace_f(tmp_path_factory) -> bytes:
    if shutil.which('strace') is None: pytest.fail('strace is not installed (the live corpus needs it too)')
    out = tmp_path_factory.mktemp('strace') / 'trace.txt'
    subprocess.run(['strace', '-f', '-o', str(out), sys.executable, '-c', 'import json, email, http.client; open("/nonexistent")'],
                   stdin=subprocess.DEVNULL, capture_output=True, env=child_env(), timeout=300)
    data = out.read_bytes()
    assert len(data) > 100_000 and b'= -1 ENOENT' in data
    return data


def test_strace_reads_as_a_log_and_keeps_its_errors(strace_f, eng):
    from _signals import hidden_signals
    from _truth import false_claims
    assert detect(strace_f) == 'log'
    r = eng.compress(strace_f)
    assert r.ratio > 0.5 and eng.retrieve(r.recovery_handle) == strace_f
    assert hidden_signals(strace_f, r.output, 'log') == []
    assert false_claims(strace_f, r.output, 'log') == []
    errs = {l for l in strace_f.split(b'\n') if re.search(rb'= -1 E[A-Z]+', l)}
    shown = {l for l in r.output.split(b'\n') if l in errs}
    assert len(shown) * 2 >= len(errs)                                          # the rest counted by markers (judged above)


def test_hook_says_why_it_stands_aside(tmp_path):
    words = ' '.join(f'w{i * 7919 % 100003:x}q{i * 104729 % 65521:x}' for i in range(1500))   # distinct tokens: nothing to elide
    env = child_env(only=(), PATH='/usr/bin:/bin', HOME=str(tmp_path / 'home'), CAVEMAN_HOME=str(tmp_path / 'cv'))
    event = json.dumps({'hook_event_name': 'PostToolUse', 'tool_name': 'Bash', 'tool_input': {'command': 'x'},
                        'tool_response': {'stdout': words, 'stderr': '', 'interrupted': False}}).encode()
    r = subprocess.run([str(CAVEMAN), 'hook', 'claude-code', '--recovery'], input=event, capture_output=True, env=env, timeout=300)
    assert (r.returncode, r.stdout) == (0, b'')
    assert r.stderr.count(b'\n') == 1 and b'no smaller view' in r.stderr and f'{len(words):,} bytes'.encode() in r.stderr
