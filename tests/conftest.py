import os, shutil, sys
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
