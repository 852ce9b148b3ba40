"""Real MCP servers from npm and PyPI for the gateway tests, installed by the test setup into `.work/`.

npm: `@modelcontextprotocol/server-filesystem` and `@modelcontextprotocol/server-everything` (pinned) into
`.work/npm-upstreams` with a project-local cache. PyPI: `mcp-server-time` and `mcp-server-git` (pinned) into
their own venv `.work/upstream-venv`, since they pin their own `mcp` SDK. A failed install FAILS the test
that needs it (CI runs on a fresh machine; a skip would hide a missing install step).
"""
import json, shutil, subprocess, sys
from pathlib import Path

import pytest
from _npm import npm_install

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / '.work'
NPM_DIR = WORK / 'npm-upstreams'
VENV = WORK / 'upstream-venv'
NPM = {'@modelcontextprotocol/server-filesystem': '2026.8.31', '@modelcontextprotocol/server-everything': '2026.8.31'}
PYPI = {'mcp-server-time': '2026.10.19', 'mcp-server-git': '2026.10.19'}


def _npm_version(pkg: str) -> str | None:
    try: return json.loads((NPM_DIR / 'node_modules' / pkg / 'package.json').read_text())['version']
    except (OSError, ValueError, KeyError): return None


def install_upstreams() -> dict[str, list[str]]:
    "Install the four servers if needed; `{name: command line}` (names: filesystem, everything, time, git)."
    try: npm_install(NPM_DIR, NPM)
    except RuntimeError as e: pytest.fail(str(e))
    node = shutil.which('node')
    py = VENV / 'bin' / 'python'
    want = [f'{p}=={v}' for p, v in PYPI.items()]
    if not all((VENV / 'bin' / p).exists() for p in PYPI) or subprocess.run(
            [str(py), '-m', 'pip', 'show', '-q', *PYPI], capture_output=True).returncode != 0:
        if not py.exists(): subprocess.run([sys.executable, '-m', 'venv', str(VENV)], check=True, timeout=300)
        r = subprocess.run([str(py), '-m', 'pip', 'install', '-q', *want], capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
        if r.returncode != 0: pytest.fail(f'pip install {want} failed:\n{r.stderr[-3000:]}')
    mods = NPM_DIR / 'node_modules' / '@modelcontextprotocol'
    return {'filesystem': [node, str(mods / 'server-filesystem' / 'dist' / 'index.js')],
            'everything': [node, str(mods / 'server-everything' / 'dist' / 'index.js')],
            'time': [str(VENV / 'bin' / 'mcp-server-time')],
            'git': [str(VENV / 'bin' / 'mcp-server-git')]}
