"""Detection on real tool output captured now, on this machine, with commands that work offline:
verbose pip installs (a re-install of this project, a setuptools build of a local package), pip's
JSON, `git log -p` of this repository, `pytest -v`, a verbose offline npm install. Each must detect
as what it is, and compress through the engine without losing a line that reports a problem.

`make demo` compresses `.work/pip-install-verbose.log` (written by `make install`); when that file
exists it is checked too."""
import importlib.util, json, os, re, shutil, subprocess, sys
from pathlib import Path

import pytest

from caveman import ccr
from caveman.detect import detect, unwrap
from caveman.engine import Engine
from conftest import child_env

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = re.compile(r'\b(?:error|fatal|panic|exception|traceback|fail|failed|failure|warn|warning)\b', re.I | re.A)


def run(cmd, cwd=None, env=None, timeout=300) -> bytes:
    "stdout + stderr of an offline command (whatever its exit status: failing tests are output too)."
    p = subprocess.run(cmd, cwd=cwd, env=child_env(**(env or {})), stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return p.stdout

def check(data: bytes, kind: str):
    "Detects as `kind`; through the engine, every problem line survives and the original is recoverable."
    assert len(data) > 200, data[:500]
    assert detect(unwrap(data)[0]) == kind
    e = Engine(ccr.open_store(':memory:'))
    r = e.compress(data)
    assert r.content_type == kind
    if r.passed_through: return r
    assert e.retrieve(r.recovery_handle) == data
    if kind == 'log':
        view = set(r.output.decode().split('\n'))
        assert [l for l in data.decode().split('\n') if PROBLEM.search(l) and l not in view] == []
    return r

def pip(*args) -> list[str]: return [sys.executable, '-m', 'pip', '--disable-pip-version-check', '--no-input', *args]

needs_setuptools = pytest.mark.skipif(importlib.util.find_spec('setuptools') is None,
                                      reason='--no-build-isolation needs setuptools in this environment')


def test_make_install_log():
    log = ROOT / '.work' / 'pip-install-verbose.log'
    if not log.is_file(): pytest.skip('no .work/pip-install-verbose.log: run `make install` first')
    check(log.read_bytes(), 'log')


@needs_setuptools
def test_pip_reinstall_of_this_project_is_a_log():
    "The shape `make demo` meets after the first install: build-backend output, then ~90 'Requirement already satisfied' lines."
    out = run(pip('install', '-v', '--no-index', '--no-build-isolation', '--dry-run', '-e', f'{ROOT}[dev]'))
    assert out.count(b'Requirement already satisfied') >= 20
    check(out, 'log')


def test_pip_already_satisfied_is_a_log():
    out = run(pip('install', '-v', '--no-index', '--dry-run', 'pyyaml', 'lxml', 'tiktoken', 'rank-bm25', 'fastcore', 'toon-format'))
    assert out.count(b'Requirement already satisfied') >= 6
    check(out, 'log')


@needs_setuptools
def test_pip_build_of_a_local_package_is_a_log(tmp_path):
    pkg = tmp_path / 'probe'
    (pkg / 'probe').mkdir(parents=True)
    (pkg / 'probe' / '__init__.py').write_text('VALUE = 1\n')
    (pkg / 'setup.py').write_text('from setuptools import setup\nsetup(name="caveman-probe", version="0.1", packages=["probe"])\n')
    out = run(pip('install', '-v', '--no-deps', '--no-index', '--no-build-isolation', '--target', str(tmp_path / 'site'), str(pkg)))
    assert b'running' in out and b'Successfully installed caveman-probe' in out
    check(out, 'log')


def test_pip_inspect_is_json():
    r = check(run(pip('inspect')), 'json')
    assert not r.passed_through


def test_git_log_p_of_this_repository_is_a_diff():
    if shutil.which('git') is None or not (ROOT / '.git').exists(): pytest.skip('not a git checkout')
    out = run(['git', '-C', str(ROOT), 'log', '-p', '-n', '15'])
    check(out, 'diff')


def test_pytest_verbose_is_a_log(tmp_path):
    (tmp_path / 'test_probe.py').write_text(
        'import pytest\n' + ''.join(f'def test_ok_{i}(): assert {i} == {i}\n' for i in range(12)) +
        'def test_broken(): assert 1 == 2\n@pytest.mark.skip\ndef test_later(): pass\n')
    out = run([sys.executable, '-m', 'pytest', '-v', '-p', 'no:cacheprovider', 'test_probe.py'], cwd=tmp_path)
    assert b'FAILED' in out and b'PASSED' in out
    check(out, 'log')


def test_pytest_verbose_of_our_own_tests_is_a_log(tmp_path):
    out = run([sys.executable, '-m', 'pytest', '-v', '-p', 'no:cacheprovider', str(ROOT / 'tests' / 'test_detect_corpus.py'),
               '-k', 'csv_parses or yaml_is_config or corpus_has_every_kind or pathological'], cwd=tmp_path)
    assert out.count(b'PASSED') >= 20
    check(out, 'log')


def test_npm_verbose_offline_install_is_a_log(tmp_path):
    if shutil.which('npm') is None: pytest.skip('npm is not installed')
    pkg, app = tmp_path / 'pkg', tmp_path / 'app'
    pkg.mkdir(); app.mkdir()
    (pkg / 'package.json').write_text(json.dumps({'name': 'caveman-probe', 'version': '1.0.0', 'main': 'index.js'}))
    (pkg / 'index.js').write_text('module.exports = 1\n')
    (app / 'package.json').write_text('{}')
    env = {'npm_config_cache': str(tmp_path / 'cache'), 'npm_config_logs_dir': str(tmp_path / 'logs'), 'npm_config_update_notifier': 'false'}
    out = run(['npm', 'install', '--offline', '--no-audit', '--no-fund', '--loglevel', 'verbose', str(pkg)], cwd=app, env=env, timeout=120)
    assert b'npm verbose' in out
    check(out, 'log')


# ---------------------------------------------------------------- constructed: the shapes the rules tell apart
def test_status_lines_are_a_log_but_code_and_prose_are_not():
    status = ''.join(f'Requirement already satisfied: pkg{i} in ./venv/site-packages (from app==1.0) (1.{i})\n' for i in range(30))
    assert detect(('Obtaining file:///src/app\n' + status + 'Successfully installed app-1.0\n').encode()) == 'log'
    removing = ''.join(f'  Removing file or directory /venv/lib/site-packages/app/mod{i}.py\n' for i in range(10))
    assert detect((removing + 'Successfully uninstalled app-1.0\n').encode()) == 'log'
    py = ''.join(f'    if not value_{i}:\n        return self._send(value_{i})\n' for i in range(20))
    assert detect(('class Client:\n    def send(self, value):\n' + py).encode()) == 'code'
    same = 'The service reads its settings from the environment.\n' * 40
    assert detect(same.encode()) == 'text'
