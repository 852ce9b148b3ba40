"""A console script started with a standard stream closed (`caveman compress x >&-`, a daemon without a stdin): a clear
error line and exit status 1 for a closed stdout, empty input for a closed stdin — never a traceback (break test 11
row 6: `AttributeError: 'NoneType' object has no attribute 'buffer'`)."""
import json, os, shutil, subprocess
import pytest
from conftest import child_env
from caveman.corpus import corpus_path, corpus_files


def _exe(name: str) -> str:
    return shutil.which(name) or pytest.skip(f'{name} is not installed')


def _closed(fd: int):
    return lambda: os.close(fd)


@pytest.mark.parametrize('argv', [['caveman', 'compress', 'LOG'], ['caveman', 'stats'], ['caveman', '--version'],
                                  ['caveman-shrink', '--version'], ['caveman-shrink', '--help'], ['caveman-shrink', 'lint', '-h'],
                                  ['caveman-shrink', 'CATALOG'], ['caveman-shrink', 'lint', 'CATALOG'], ['caveman-shrink', 'lint', '--json', 'CATALOG'],
                                  ['caveman', 'detect', 'LOG'], ['caveman-mcp', '--help'], ['caveman-mcp']])
def test_a_closed_stdout_is_an_output_failure_not_a_traceback(argv, tmp_path):
    log = str(corpus_path('log_pytest_requests_failures.log'))
    catalog = str(next(p for p in corpus_files(catalogs=True) if p.name == 'mcp_filesystem.json'))
    cmd = [_exe(argv[0])] + [log if a == 'LOG' else catalog if a == 'CATALOG' else a for a in argv[1:]]
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=_closed(1), timeout=120,
                       env=child_env(HOME=str(tmp_path), CAVEMAN_HOME=str(tmp_path / 'cv')))
    assert b'Traceback' not in r.stderr, r.stderr.decode()
    assert r.returncode == 1
    assert json.loads(r.stderr.decode().strip().splitlines()[-1])['error'] == 'cave_output_failed'


def test_a_closed_stdin_is_empty_input(tmp_path):
    env = child_env(HOME=str(tmp_path), CAVEMAN_HOME=str(tmp_path / 'cv'))
    r = subprocess.run([_exe('caveman'), 'hook', 'claude-code'], stdin=subprocess.DEVNULL, capture_output=True, preexec_fn=_closed(0), timeout=120, env=env)
    assert b'Traceback' not in r.stderr and r.returncode == 0 and r.stdout == b''
    r = subprocess.run([_exe('caveman'), 'compress'], stdin=subprocess.DEVNULL, capture_output=True, preexec_fn=_closed(0), timeout=120, env=env)
    assert b'Traceback' not in r.stderr and r.stdout == b''
    r = subprocess.run([_exe('caveman-mcp')], stdin=subprocess.DEVNULL, capture_output=True, preexec_fn=_closed(0), timeout=120, env=env)
    assert b'Traceback' not in r.stderr and r.returncode == 0 and r.stdout == b''   # no input: the end of the session
