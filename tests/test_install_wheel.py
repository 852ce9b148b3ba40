"""A user's install: the built wheel, no extras, in a fresh venv, used from a directory outside the repository.

The wheel is built from this checkout (`pip wheel --no-deps`), installed into a new virtual environment
with its declared dependencies only, and the three commands are run on real input captured on the spot,
from a temporary directory, with no corpus and no `CAVEMAN_*` variable pointing into the repository:

- `caveman compress` / `retrieve` on the venv's own `pip inspect` JSON and its own verbose pip log;
- `caveman-mcp` over raw stdio: `initialize`, `tools/list`, a compress and a retrieve;
- `caveman-shrink` on the tool catalog `caveman-mcp` itself just listed.

It also checks the lean base install: ipywidgets and the Jupyter stack are not pulled in, and
`caveman.explore` says which extra it needs.
"""
import json, os, shutil, subprocess, sys
from pathlib import Path

import pytest
from conftest import child_env

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def run(cmd, **kw):
    kw.setdefault('timeout', 600)
    r = subprocess.run(cmd, capture_output=True, **kw)
    if r.returncode != 0 and not kw.get('check_ok'):
        raise AssertionError(f'{cmd} exited {r.returncode}:\n{r.stdout[-2000:]!r}\n{r.stderr[-4000:]!r}')
    return r


@pytest.fixture(scope='module')
def user_venv(tmp_path_factory):
    "A fresh venv with the wheel built from this checkout installed (no extras); returns (bin dir, clean env, work dir)."
    base = tmp_path_factory.mktemp('user')
    wheels = base / 'wheels'
    run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '-q', '-w', str(wheels), str(ROOT)])
    wheel = next(wheels.glob('caveman_context-*.whl'))                  # the distribution name is free on PyPI
    run([sys.executable, '-m', 'venv', str(base / 'venv')])
    bin_ = base / 'venv' / 'bin'
    log = base / 'pip-install.log'
    r = run([str(bin_ / 'python'), '-m', 'pip', 'install', '-v', str(wheel)])
    log.write_bytes(r.stdout + r.stderr)
    env = child_env(**{k: None for k in os.environ if k.startswith(('VIRTUAL_ENV', 'PYTHON'))})
    env.update(PATH=f'{bin_}:/usr/bin:/bin', HOME=str(base / 'home'), CAVEMAN_HOME=str(base / 'home' / '.caveman'))
    work = base / 'elsewhere'; work.mkdir()
    return bin_, env, work, log


def test_base_install_is_lean(user_venv):
    bin_, env, work, _ = user_venv
    r = run([str(bin_ / 'python'), '-m', 'pip', 'list', '--format', 'json'], env=env, cwd=work)
    names = {p['name'].lower() for p in json.loads(r.stdout)}
    assert 'caveman-context' in names
    assert not names & {'ipywidgets', 'widgetsnbextension', 'jupyterlab-widgets', 'ipython', 'jedi'}, names
    r = subprocess.run([str(bin_ / 'python'), '-c', 'import caveman.explore'], capture_output=True, env=env, cwd=work, timeout=60)
    assert r.returncode != 0 and b"caveman-context[notebooks]" in r.stderr


def test_engine_cli_on_real_output(user_venv):
    bin_, env, work, log = user_venv
    inspect = run([str(bin_ / 'python'), '-m', 'pip', 'inspect'], env=env, cwd=work).stdout
    (work / 'inspect.json').write_bytes(inspect)
    for name, data, kind in [('inspect.json', inspect, 'json'), ('pip-install.log', log.read_bytes(), 'log')]:
        (work / name).write_bytes(data)
        r = run([str(bin_ / 'caveman'), 'compress', name], env=env, cwd=work)
        report = json.loads(r.stderr)
        assert report['content_type'] == kind and report['ratio'] > 0 and len(r.stdout) < len(data)
        assert run([str(bin_ / 'caveman'), 'retrieve', report['recovery_handle']], env=env, cwd=work).stdout == data
    assert run([str(bin_ / 'caveman'), '--version'], env=env, cwd=work).stdout.startswith(b'caveman ')


def test_mcp_server_and_shrink_on_its_own_catalog(user_venv):
    bin_, env, work, log = user_venv
    payload = log.read_text(errors='replace')
    lines = [{'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {'protocolVersion': '2024-11-05', 'capabilities': {},
                                                                             'clientInfo': {'name': 'test', 'version': '0'}}},
             {'jsonrpc': '2.0', 'method': 'notifications/initialized'},
             {'jsonrpc': '2.0', 'id': 2, 'method': 'tools/list'},
             {'jsonrpc': '2.0', 'id': 3, 'method': 'tools/call', 'params': {'name': 'caveman_compress', 'arguments': {'input': payload}}}]
    r = run([str(bin_ / 'caveman-mcp')], input=''.join(json.dumps(l) + '\n' for l in lines).encode(), env=env, cwd=work)
    answers = {a['id']: a for a in map(json.loads, r.stdout.splitlines())}
    assert answers[1]['result']['serverInfo']['name'] == 'caveman'
    tools = answers[2]['result']
    compressed = json.loads(answers[3]['result']['content'][0]['text'])
    handle = compressed['recovery_handle']
    assert handle and run([str(bin_ / 'caveman'), 'retrieve', handle], env=env, cwd=work).stdout == log.read_bytes()
    (work / 'tools.json').write_text(json.dumps(tools))
    r = run([str(bin_ / 'caveman-shrink'), 'tools.json'], env=env, cwd=work)
    report = json.loads(r.stderr)
    assert json.loads(r.stdout)['tools'] and report['basis'] == 'inferred'
    if report.get('recovery_handle'):
        assert run([str(bin_ / 'caveman-shrink'), 'recover', report['recovery_handle']], env=env, cwd=work).stdout == (work / 'tools.json').read_bytes()
