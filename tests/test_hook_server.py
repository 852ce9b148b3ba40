"""The warm hook server (`caveman.hook_server`) through the real `caveman` console script: every answer it gives is
byte for byte the answer of the same call run in process (`CAVEMAN_HOOK_SERVER=off`), its store writes land in the
same store, and every way it can fail — no server, a socket of the wrong kind or in an open directory, a server that
answers garbage — leaves the call to the process, with the same answer."""
import json, os, shutil, socket, subprocess, sys, tempfile, threading, time
from pathlib import Path

import pytest

from conftest import child_env
from _agent_hosts import HANDLE, caveman_exe
from _warm import gone, in_env, server_status, stop, wait_for_server
from caveman.corpus import corpus_path

HOOK = ['hook', 'claude-code', '--recovery']


def bash_event(out: str, err: str = '') -> bytes:
    return json.dumps({'hook_event_name': 'PostToolUse', 'tool_name': 'Bash', 'tool_input': {'command': 'x'}, 'cwd': '/',
                       'tool_response': {'stdout': out, 'stderr': err, 'interrupted': False}}).encode()


@pytest.fixture
def env(tmp_path):
    "A user whose home and caveman home are in `tmp_path`, with a runtime directory of its own (short: a socket's path is at most about 100 bytes) and the warm server on (as users get it)."
    run_dir = tempfile.mkdtemp(prefix='cvrun')
    e = child_env(CAVEMAN_HOOK_SERVER=None, HOME=str(tmp_path / 'home'), CAVEMAN_HOME=str(tmp_path / 'cv'),
                  XDG_RUNTIME_DIR=run_dir, CAVEMAN_HOOK_SERVER_IDLE='60')
    yield e
    os.chmod(run_dir, 0o700)
    st = server_status(e)
    if st: os.kill(st['pid'], 15)       # the server this test started
    shutil.rmtree(run_dir, ignore_errors=True)


def stdout_of(answer: bytes) -> str:
    "The Bash stdout of a hook's answer."
    return json.loads(answer)['hookSpecificOutput']['updatedToolOutput']['stdout']


def run(args: list[str], data: bytes, env: dict, cwd=None) -> tuple[int, bytes, bytes]:
    r = subprocess.run([caveman_exe(), *args], input=data, env=env, cwd=cwd, capture_output=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


CASES = {
    'large log, lossy view with a handle': (HOOK, lambda: bash_event(corpus_path('log_pytest_requests_failures.log').read_text(errors='replace'))),
    'JSON, lossless without recovery': (['hook', 'claude-code'], lambda: bash_event(json.dumps([{'id': i, 'name': f'n{i}', 'ok': True} for i in range(300)], indent=2))),
    'Read of a source file': (HOOK, lambda: json.dumps({'hook_event_name': 'PostToolUse', 'tool_name': 'Read', 'tool_input': {'file_path': '/x.py'},
                                                         'tool_response': {'type': 'text', 'file': {'filePath': '/x.py', 'content': corpus_path('code_httpx_client_py.txt').read_text()}}}).encode()),
    'MCP tool result': (HOOK, lambda: json.dumps({'hook_event_name': 'PostToolUse', 'tool_name': 'mcp__gh__list_issues', 'tool_input': {},
                                                   'tool_response': [{'type': 'text', 'text': corpus_path('json_github_list_issues.json').read_text()}]}).encode()),
    'malformed JSON': (HOOK, lambda: b'{"tool_name": "Bash", ' + b'x' * 5000),
    'unknown tool': (HOOK, lambda: json.dumps({'tool_name': 'Frobnicate', 'tool_response': {'a': 'y' * 5000}}).encode()),
    'bad command line': (['hook', 'claude-code', '--recovery', 'extra'], lambda: bash_event('z' * 5000)),
}


def test_server_answers_are_the_process_answers(env, tmp_path):
    cold = {**env, 'CAVEMAN_HOOK_SERVER': 'off'}
    first = run(*CASES['large log, lossy view with a handle'][:1], CASES['large log, lossy view with a handle'][1](), env)
    st = wait_for_server(env)                                   # the first call started it and answered in process
    assert st['calls'] == 0 and first[0] == 0 and HANDLE.search(stdout_of(first[1]))
    for name, (args, event) in CASES.items():
        data = event()
        warm, want = run(args, data, env), run(args, data, cold)
        assert warm == want, name
    assert server_status(env)['calls'] == len(CASES) - 1        # every case but the odd command line (run in process) was the server's
    assert server_status(env)['pid'] == st['pid']               # one server for all of them


def test_store_writes_land_in_the_same_store(env):
    log = corpus_path('log_pip_install_verbose.log').read_text(errors='replace')
    run(HOOK, bash_event('warm-up ' + log[:4000]), env)
    wait_for_server(env)
    code, out, _ = run(HOOK, bash_event(log), env)
    assert server_status(env)['calls'] == 1
    handle = HANDLE.search(stdout_of(out)).group(1)
    r = subprocess.run([caveman_exe(), 'retrieve', handle], env={**env, 'CAVEMAN_HOOK_SERVER': 'off'}, capture_output=True, timeout=60)
    assert r.stdout.decode() == log


def test_compress_through_the_server_reads_files_where_the_caller_is(env, tmp_path):
    cold = {**env, 'CAVEMAN_HOOK_SERVER': 'off'}
    small = corpus_path('log_pip_install_verbose.log').read_bytes()[:2000]
    (tmp_path / 'a').mkdir(); (tmp_path / 'b').mkdir()
    (tmp_path / 'a' / 'in.log').write_bytes(small)
    (tmp_path / 'b' / 'in.log').write_bytes(corpus_path('log_pytest_requests_failures.log').read_bytes())
    run(['compress', '-'], small, env)
    wait_for_server(env)
    for args, data, cwd in ((['compress', '-'], small, tmp_path), (['compress', 'in.log'], b'', tmp_path / 'a'),
                            (['compress', '--type', 'log', 'in.log'], b'', tmp_path / 'b'), (['compress', 'missing.log'], b'', tmp_path),
                            (['compress', '--type', 'nosuch', '-'], small, tmp_path)):
        assert run(args, data, env, cwd) == run(args, data, cold, cwd), args
    assert server_status(env)['calls'] == 5


def test_a_socket_that_is_not_ours_is_never_used(env, tmp_path):
    event = bash_event(corpus_path('log_pytest_requests_failures.log').read_text(errors='replace'))
    want = run(HOOK, event, {**env, 'CAVEMAN_HOOK_SERVER': 'off'})
    path = in_env('from caveman.hook_server import server_key, socket_path; print(socket_path(server_key()))', env).strip()
    Path(path).write_text('not a socket')                       # a plain file where the socket would be
    assert run(HOOK, event, env) == want
    time.sleep(1)
    assert server_status(env) is None and Path(path).read_text() == 'not a socket'   # never replaced, no server started
    os.unlink(path)

    bad = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); bad.bind(path); bad.listen(4)   # a server answering garbage
    def garbage():
        for _ in range(2):
            c, _ = bad.accept(); c.recv(1 << 20); c.sendall(b'{"rc": 0, "out": 5, "err": 0}\nxy'); c.close()
    t = threading.Thread(target=garbage, daemon=True); t.start()
    assert run(HOOK, event, env) == want                        # a reply cut short: the process answers
    bad.close(); os.unlink(path)


def test_an_open_runtime_directory_is_refused(env):
    d = Path(env['XDG_RUNTIME_DIR']) / 'caveman'
    d.mkdir(); os.chmod(d, 0o755)
    event = bash_event(corpus_path('log_pytest_requests_failures.log').read_text(errors='replace'))
    assert run(HOOK, event, env) == run(HOOK, event, {**env, 'CAVEMAN_HOOK_SERVER': 'off'})
    time.sleep(1)
    assert list(d.iterdir()) == []                              # no socket was made there, no server started
    os.chmod(d, 0o700)


def test_off_switch_starts_no_server(env):
    off = {**env, 'CAVEMAN_HOOK_SERVER': 'off'}
    event = bash_event(corpus_path('log_pytest_requests_failures.log').read_text(errors='replace'))
    run(HOOK, event, off); run(['compress', '-'], b'x' * 3000, off)
    time.sleep(1)
    assert not (Path(env['XDG_RUNTIME_DIR']) / 'caveman').exists()


def test_another_configuration_gets_another_server(env):
    event = bash_event(corpus_path('log_pytest_requests_failures.log').read_text(errors='replace'))
    run(HOOK, event, env)
    a = wait_for_server(env)
    other = {**env, 'CAVEMAN_MIN_BYTES': '100000'}              # a policy under which this event passes through
    assert run(HOOK, event, other) == (0, b'', b'')             # answered in process: no server of its configuration yet
    b = wait_for_server(other)
    assert a['pid'] != b['pid']
    assert run(HOOK, event, other) == (0, b'', b'') and server_status(other)['calls'] == 1 and server_status(env)['calls'] == 0
    os.kill(b['pid'], 15)


def test_an_idle_server_exits(env):
    short = {**env, 'CAVEMAN_HOOK_SERVER_IDLE': '5'}
    run(['compress', '-'], b'y' * 3000, short)
    d = Path(env['XDG_RUNTIME_DIR']) / 'caveman'
    socks = lambda: list(d.glob('*.sock')) if d.exists() else []
    def until(cond, timeout=120):
        end = time.monotonic() + timeout
        while not cond() and time.monotonic() < end: time.sleep(0.05)
        return cond()
    assert until(lambda: socks() != [])          # the server is up (watched on disk: a status call would keep it busy)
    assert until(lambda: socks() == [])          # and, with no call, gone: it removes its socket as it exits
    assert until(lambda: list(d.iterdir()) == [])   # and its lock file
    assert server_status(short) is None


def runtime_files(env: dict) -> list[str]:
    d = Path(env['XDG_RUNTIME_DIR']) / 'caveman'
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def test_a_runtime_directory_too_long_for_a_socket_address_still_gets_the_warm_path(env, tmp_path):
    long_dir = Path(env['XDG_RUNTIME_DIR']) / ('r' * 70) / ('u' * 70)      # the socket path is over the 108 bytes of sun_path
    long_dir.mkdir(parents=True, mode=0o700)
    e = {**env, 'XDG_RUNTIME_DIR': str(long_dir)}
    path = in_env('from caveman.hook_server import server_key, socket_path; print(socket_path(server_key()))', e).strip()
    assert len(os.fsencode(path)) > 108
    event = bash_event(corpus_path('log_pytest_requests_failures.log').read_text(errors='replace'))
    want = run(HOOK, event, {**e, 'CAVEMAN_HOOK_SERVER': 'off'})
    assert run(HOOK, event, e) == want                          # the first call starts the server
    wait_for_server(e)
    assert run(HOOK, event, e) == want and run(HOOK, event, e) == want
    assert server_status(e)['calls'] == 2                       # answered by the server
    assert Path(path).is_socket()
    stop(e)
    assert runtime_files(e) == []


PLANTED = '''
from caveman.compressors import log as _m
_fn = _m.COMPRESSOR.fn
def _planted(body, *args):
    if b'PLANTED-FAULT' in body: raise RuntimeError('planted fault')
    return _fn(body, *args)
object.__setattr__(_m.COMPRESSOR, 'fn', _planted)
'''


def test_log_lines_of_a_call_reach_its_stderr_warm_as_cold(env, tmp_path):
    "A compressor that raises makes the engine log a warning: a process prints it on its stderr, and so must the server's answer."
    site = tmp_path / 'site'; site.mkdir()
    (site / 'sitecustomize.py').write_text(PLANTED)             # in the caller and in the server it starts: the same environment
    e = {**env, 'PYTHONPATH': str(site)}
    cold = {**e, 'CAVEMAN_HOOK_SERVER': 'off'}
    log = corpus_path('log_pytest_requests_failures.log').read_text(errors='replace')
    calls = [(HOOK, bash_event('PLANTED-FAULT\n' + log)), (['hook', 'claude-code'], bash_event('PLANTED-FAULT\n' + log, 'x' * 3000)),
             (['compress', '-'], ('PLANTED-FAULT\n' + log).encode())]
    wants = [run(args, data, cold) for args, data in calls]
    got = wants[0][2].decode().splitlines()     # the engine's warning, then the hook's one line for standing aside
    assert wants[0][:2] == (0, b'') and got[0] == 'compressor log raised RuntimeError: planted fault; passing through', got
    assert len(got) == 2 and got[1].startswith('caveman hook: no smaller view of this Bash output was found'), got
    run(HOOK, bash_event(log), e)
    assert wait_for_server(e).get('declines') is None
    for (args, data), want in zip(calls, wants): assert run(args, data, e) == want, args
    assert server_status(e)['calls'] == len(calls)
    stop(e)


def test_a_server_whose_warm_up_logs_declines_every_call(env, tmp_path):
    "A warm-up that logs a warning (here: a compressor that raises on every input) means a once-per-process message may be lost: the server declines, every call runs in process."
    site = tmp_path / 'site'; site.mkdir()
    (site / 'sitecustomize.py').write_text(PLANTED.replace("b'PLANTED-FAULT' in body", 'True'))
    e = {**env, 'PYTHONPATH': str(site)}
    event = bash_event(corpus_path('log_pytest_requests_failures.log').read_text(errors='replace'))
    want = run(HOOK, event, {**e, 'CAVEMAN_HOOK_SERVER': 'off'})
    run(HOOK, event, e)
    st = wait_for_server(e)
    assert 'compressor log raised RuntimeError: planted fault' in st['declines']
    assert run(HOOK, event, e) == want and server_status(e)['calls'] == 0
    stop(e)


def test_a_killed_server_leaves_nothing_behind_for_long(env):
    "SIGKILL leaves a socket and a lock file: the next call recovers (a new server replaces them), and any server started later removes those of servers that are gone — never those of a live one."
    event = bash_event(corpus_path('log_pytest_requests_failures.log').read_text(errors='replace'))
    want = run(HOOK, event, {**env, 'CAVEMAN_HOOK_SERVER': 'off'})
    run(HOOK, event, env)
    a = wait_for_server(env)
    files = runtime_files(env)
    assert len(files) == 2 and {f.rsplit('.', 1)[1] for f in files} == {'lock', 'sock'}
    os.kill(a['pid'], 9); assert gone(a['pid'])
    assert runtime_files(env) == files                          # what a killed server leaves
    assert run(HOOK, event, env) == want                        # answered in process; a new server starts
    b = wait_for_server(env)
    assert b['pid'] != a['pid'] and run(HOOK, event, env) == want and server_status(env)['calls'] == 1
    assert runtime_files(env) == files

    other = {**env, 'CAVEMAN_MIN_BYTES': '100000'}              # another configuration: another server in the same directory
    run(HOOK, event, other)
    c = wait_for_server(other)
    mine = [f for f in runtime_files(env) if f not in files]
    assert len(mine) == 2 and runtime_files(env) == sorted(files + mine)   # the live server's files are left alone
    os.kill(b['pid'], 9); assert gone(b['pid'])
    stop(other)
    assert runtime_files(env) == files                          # a clean exit removes both of its own files
    run(HOOK, event, other)
    wait_for_server(other)
    assert runtime_files(env) == mine                           # the new server removed the dead one's
    stop(other)
    assert runtime_files(env) == []


@pytest.mark.slow
def test_a_big_call_gives_its_memory_back(env, tmp_path):
    "After an 8 MB persisted Bash output, the server is back within `RETIRE_BYTES` of its resident memory before the call, or it has exited and the next call starts a fresh one (break test 8: it kept its peak, hundreds of MB, until it went idle)."
    from caveman.hook_server import RETIRE_BYTES
    run(HOOK, bash_event('warm-up ' + corpus_path('log_pip_install_verbose.log').read_text(errors='replace')[:4000]), env)
    pid = wait_for_server(env)['pid']
    run(HOOK, bash_event(corpus_path('log_pytest_requests_failures.log').read_text(errors='replace')), env)
    before = server_status(env)['rss']
    lines = corpus_path('log_pip_install_verbose.log').read_bytes().splitlines(keepends=True)
    big = b''.join(lines[i % len(lines)].replace(b'\n', b' #%d\n' % i) for i in range(200_000))[:8_000_000]
    path = tmp_path / 'persisted.txt'
    path.write_bytes(big)
    event = json.dumps({'hook_event_name': 'PostToolUse', 'tool_name': 'Bash', 'tool_input': {'command': 'x'}, 'cwd': '/',
                        'tool_response': {'stdout': big[:30000].decode(errors='replace'), 'stderr': '', 'interrupted': False,
                                          'persistedOutputPath': str(path)}}).encode()
    code, out, _ = run(HOOK, event, env)
    assert code == 0 and HANDLE.search(stdout_of(out))
    for _ in range(50):                                         # the server gives memory back once the answer is sent
        st = server_status(env)
        if st is None or st['rss'] - before <= RETIRE_BYTES: break
        time.sleep(0.2)
    if st is None: assert gone(pid)                             # it retired: the next call starts another
    else: assert st['pid'] == pid and st['calls'] == 2 and st['rss'] - before <= RETIRE_BYTES, (before, st)
    code, out, _ = run(HOOK, bash_event(corpus_path('log_pytest_requests_failures.log').read_text(errors='replace')), env)
    assert code == 0 and HANDLE.search(stdout_of(out))
    assert wait_for_server(env)



def job_log(lines: int) -> str:
    "A plain INFO log of `lines` lines (about 66 bytes each) that the log compressor reads in full."
    return ''.join(f'2026-12-01T10:{i // 60 % 60:02d}:{i % 60:02d} INFO worker-{i % 17} processed job {i} in {i * 7 % 900} ms\n' for i in range(lines))


@pytest.mark.slow
def test_a_busy_server_obeys_sigterm_at_once_and_the_call_is_answered_anyway(env):
    "SIGTERM while a slow call (a big log) runs in the server: it leaves within its grace (it used to let the call finish, up to a minute), and the hook whose call was cut short answers in its own process: a view whose handle gives the whole output back."
    from caveman.hook_server import TERM_GRACE
    t0 = time.monotonic()                                      # the log's size is set by this machine's speed: a call
    run(HOOK, bash_event(job_log(150_000)), {**env, 'CAVEMAN_HOOK_SERVER': 'off'})   # of at least 4 graces (a fixed
    took = time.monotonic() - t0                               # 26 MB log took 5 s on a fast machine: it ended inside the grace)
    out = job_log(min(2_000_000, max(400_000, int(150_000 * 4 * TERM_GRACE / took))))
    run(HOOK, bash_event('warm up\n' * 2000), env)
    st = wait_for_server(env)
    box = []
    t = threading.Thread(target=lambda: box.append((run(HOOK, bash_event(out), env), time.monotonic())))
    cpu = lambda: sum(int(x) for x in Path(f'/proc/{st["pid"]}/stat').read_text().rsplit(')', 1)[1].split()[11:13])
    before = cpu()
    t.start()
    end = time.monotonic() + 60
    while cpu() - before < 50 and time.monotonic() < end:      # the server is working on it (clock ticks: half a second of CPU)
        time.sleep(0.05)
    assert cpu() - before >= 50
    t0 = time.monotonic()
    os.kill(st['pid'], 15)
    assert gone(st['pid'], timeout=90)
    left = time.monotonic()
    t.join(300)
    (rc, answer, err), answered = box[0]
    assert left - t0 < TERM_GRACE + 10, left - t0
    assert answered - left > 2, (answered - left)              # it left before answering (the old server answered, then left): the hook ran the call itself
    assert rc == 0, err
    handle = HANDLE.search(stdout_of(answer)).group(1)
    r = subprocess.run([caveman_exe(), 'retrieve', handle], env={**env, 'CAVEMAN_HOOK_SERVER': 'off'}, capture_output=True, timeout=120)
    assert r.stdout.decode() == out
