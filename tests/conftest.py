import os, shutil, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]

def pytest_configure(config):
    config.addinivalue_line('markers', 'slow: long-running test (still run by `make test` and CI; deselect with -m "not slow")')

def server_command() -> list[str]:
    "How to start caveman-mcp: the installed console script (the venv's bin is on PATH under make)."
    exe = shutil.which('caveman-mcp')
    if exe is None:
        pytest.fail('caveman-mcp is not on PATH: run the tests through `make test` (it installs the package)')
    return [exe]

# The one way tests set environment variables. In-process code that must see a variable: fastcore's
# `modified_env` (`with modified_env(CAVEMAN_X='1'): ...`; it restores the old values, and the notebooks use it
# too). A subprocess: `env=child_env(NAME=value, ...)` — never `os.environ` edited or copied by hand.
SHARED_DATA = ('CAVEMAN_CORPUS', 'CAVEMAN_TOON_CONFORMANCE')   # where the team's test data lives: kept, not a setting
WARM_SERVER = 'CAVEMAN_HOOK_SERVER'   # off in every child by default: each test's own caveman home would start a server of its own (caveman.hook_server)

def child_env(*, only: tuple[str, ...] | None = None, **values) -> dict[str, str]:
    """The environment of a subprocess a test starts: this process's environment without its `CAVEMAN_*` settings (a
    developer's own must not change what a test sees; `SHARED_DATA` stays), or with `only=` just the names listed (an
    isolated host: `only=('PATH',)`), with the warm hook server off; then `values` over it, where None removes a name
    (`CAVEMAN_HOOK_SERVER=None`: the server on, as users get it)."""
    if only is not None: env = {k: os.environ[k] for k in only if k in os.environ}
    else: env = {k: v for k, v in os.environ.items() if not k.startswith('CAVEMAN_') or k in SHARED_DATA}
    env[WARM_SERVER] = 'off'    # no test leaves a warm hook server behind unless it asks for one (`CAVEMAN_HOOK_SERVER=None`)
    for k, v in values.items():
        if v is None: env.pop(k, None)
        else: env[k] = str(v)
    return env

@pytest.fixture
def store_env(tmp_path):
    "Environment for a server sharing one fresh store file in a temp dir (never ~/.caveman)."
    return {'CAVEMAN_CCR_DB': str(tmp_path / 'store' / 'ccr.db'), 'CAVEMAN_HOME': str(tmp_path / 'home')}

@pytest.fixture(scope='session')
def pg():
    "One real PostgreSQL server for the session (tests/_pg.py), started on first use; `pg.url()` gives each test its own schema."
    from _pg import PgServer
    server = PgServer()
    yield server
    server.close()

CHROMIUM = '/usr/bin/chromium'

@pytest.fixture(scope='session')
def chromium() -> str:
    "Debian's chromium, installed with apt-get when missing (CI runs as root on a fresh machine)."
    if not os.path.exists(CHROMIUM):
        if os.geteuid() != 0: pytest.fail(f'{CHROMIUM} is missing and installing it needs root: apt-get install -y chromium')
        env = child_env(DEBIAN_FRONTEND='noninteractive')
        subprocess.run(['apt-get', 'update'], check=True, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=900)
        r = subprocess.run(['apt-get', 'install', '-y', 'chromium'], env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=1800)
        if r.returncode != 0: pytest.fail('apt-get install -y chromium failed:\n' + r.stderr.decode(errors='replace')[-2000:])
    return CHROMIUM

def chromium_args(chromium: str, tmp_path) -> list[str]:
    "Headless Chromium that makes no connection of its own (the machine's network is closed), with a fresh profile."
    return [chromium, '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
            '--disable-background-networking', '--disable-component-update', '--disable-sync', '--hide-scrollbars',
            f'--user-data-dir={tmp_path / "chromium-profile"}']
