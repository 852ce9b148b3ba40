"""Zero egress, checked on the source (SPEC §8, reference §7.10).

Every module in `caveman/mcp/` — and every `caveman.*` module they import, transitively — is parsed
with `ast` and must not import a networking, process-spawning or remote-client module, reach one
through `__import__` / `importlib.import_module`, or call `os.system`-style process functions or
asyncio's subprocess and socket helpers. Third-party packages are out of scope (their authors' code);
the MCP SDK (`mcp`, a dev dependency) is forbidden because it brings HTTP transports with it.
One module is a listener by design: `caveman.mcp.http`, the Streamable HTTP transport that only
`caveman-mcp --http` loads (the stdio server never imports it: nbs/53 checks `sys.modules`). It may
import the ASGI server stack (uvicorn, Starlette) and `urllib.parse` — and nothing else on the list: no
client library, no process spawning. It accepts connections; it never opens one.
The checker is itself tested on small crafted packages, so it cannot pass by finding nothing.

One module is exempt, by design and by name: `caveman.mcp.gateway`, whose whole job is to start the
user's own MCP servers and talk to them with the official SDK client. It is loaded only when the user
asks for it (`caveman-mcp --config …` or `caveman-mcp -- …`): no module imports it at module level, and a
default server session is checked at run time never to load it or the SDK. The PostgreSQL recovery
store (`caveman.ccr_postgres`, and its driver `psycopg`) is opt-in the same way: `ccr.open_store` imports
it inside the call, only when `CAVEMAN_CCR_URL` (or a path) is a postgresql:// URL, and a default
session is checked never to load it.
"""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FORBIDDEN_MODULES = {
    'socket', 'ssl', 'http', 'urllib', 'urllib3', 'requests', 'httpx', 'httpcore', 'h11', 'h2', 'aiohttp', 'websocket',
    'websockets', 'socketserver', 'ftplib', 'smtplib', 'smtpd', 'poplib', 'imaplib', 'nntplib', 'telnetlib', 'xmlrpc',
    'webbrowser', 'subprocess', 'multiprocessing', 'concurrent.futures.process', 'asyncio.subprocess', 'pty', 'pexpect',
    'sh', 'plumbum', 'paramiko', 'fabric', 'pycurl', 'grpc', 'zmq', 'dns', 'tornado', 'twisted', 'uvicorn', 'starlette',
    'anyio', 'mcp', 'ctypes', 'cffi', 'runpy', 'psycopg', 'psycopg2', 'psycopg_binary', 'psycopg_c', 'asyncpg'}
# os / asyncio / loop functions that start processes or open connections, whatever object they hang off
FORBIDDEN_CALLS = {
    'system', 'popen', 'fork', 'forkpty', 'posix_spawn', 'posix_spawnp', 'startfile',
    'execl', 'execle', 'execlp', 'execlpe', 'execv', 'execve', 'execvp', 'execvpe',
    'spawnl', 'spawnle', 'spawnlp', 'spawnlpe', 'spawnv', 'spawnve', 'spawnvp', 'spawnvpe',
    'create_subprocess_exec', 'create_subprocess_shell', 'subprocess_exec', 'subprocess_shell',
    'open_connection', 'open_unix_connection', 'start_server', 'start_unix_server', 'create_connection',
    'create_server', 'create_unix_connection', 'create_unix_server', 'create_datagram_endpoint', 'sock_connect',
    'ProcessPoolExecutor'}
# the one listening module and the forbidden modules it may use (inbound HTTP only)
LISTENERS = {'caveman.mcp.http': {'uvicorn', 'starlette', 'urllib.parse'}}
# dynamic imports: the module name would be data, not visible to this check
OPT_IN = {'caveman.mcp.gateway',     # loaded only by `caveman-mcp --config` / `--`, inside `main`
          'caveman.ccr_postgres'}    # loaded only by `ccr.open_store` for a postgresql:// store (CAVEMAN_CCR_URL)
# a forbidden module one file may import for one narrow use, every use of it in that file checked against the list:
# the server interrupts a cancelled request's thread with CPython's PyThreadState_SetAsyncExc (no other way from Python)
NARROW_USES = {('caveman.mcp.server', 'ctypes'): {'ctypes.pythonapi.PyThreadState_SetAsyncExc', 'ctypes.c_ulong', 'ctypes.py_object'}}
DYNAMIC_IMPORTS = {'__import__', 'import_module', 'spec_from_file_location', 'module_from_spec', 'load_module', 'exec_module'}


def forbidden_module(name: str, allowed: set = frozenset()) -> bool:
    parts = name.split('.')
    if any('.'.join(parts[:i]) in allowed for i in range(1, len(parts) + 1)): return False
    return any('.'.join(parts[:i]) in FORBIDDEN_MODULES for i in range(1, len(parts) + 1))


def module_file(root: Path, dotted: str) -> Path | None:
    "The source file of `dotted` (a `caveman.…` module) under `root`, or None."
    base = root.joinpath(*dotted.split('.'))
    for p in (base.with_suffix('.py'), base / '__init__.py'):
        if p.is_file(): return p
    return None


def module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root).with_suffix('')
    parts = rel.parts[:-1] if rel.name == '__init__' else rel.parts
    return '.'.join(parts)


def imports_of(root: Path, path: Path):
    "Yield (line, imported dotted name) for every import in `path`, relative imports resolved; plus (line, 'call:<name>') for suspicious calls."
    tree = ast.parse(path.read_text(), str(path))
    me = module_name(root, path)
    package = me if path.name == '__init__.py' else me.rpartition('.')[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names: yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split('.')
                base = base[:len(base) - (node.level - 1)]
                mod = '.'.join(base + ([node.module] if node.module else []))
            else: mod = node.module
            yield node.lineno, mod
            for a in node.names:
                yield node.lineno, f'{mod}.{a.name}'
                if a.name in FORBIDDEN_CALLS | DYNAMIC_IMPORTS: yield node.lineno, f'call:{a.name}'
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in FORBIDDEN_CALLS | DYNAMIC_IMPORTS: yield node.lineno, f'call:{name}'
            if name == 'getattr' and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) \
                    and node.args[1].value in FORBIDDEN_CALLS | DYNAMIC_IMPORTS:
                yield node.lineno, f'call:{node.args[1].value}'


def narrow_use_ok(root: Path, path: Path, module: str) -> bool:
    "True when `path` may import `module` by NARROW_USES and every name reached through it is one of the allowed attribute chains."
    allowed = NARROW_USES.get((module_name(root, path), module))
    if allowed is None: return False
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == module: return False      # only `import module` is checked
        if isinstance(node, ast.Import) and any(a.asname for a in node.names if a.name == module): return False
    chains = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == module: chains.add(node)
    parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    for name in chains:
        node, dotted = name, module
        while isinstance(parents.get(node), ast.Attribute) and parents[node].value is node:
            node = parents[node]; dotted += '.' + node.attr
        if dotted not in allowed: return False
    return True


def violations(root: Path, start: list[Path]) -> tuple[list[str], set[str]]:
    "Walk `start` files and every `caveman.*` module they import (transitively); return (problems, modules checked)."
    seen, todo, problems = set(), list(start), []
    while todo:
        path = todo.pop()
        name = module_name(root, path)
        if name in seen: continue
        seen.add(name)
        parents = name.split('.')
        for i in range(1, len(parents)):               # importing a.b.c runs a/__init__ and a/b/__init__
            init = module_file(root, '.'.join(parents[:i]))
            if init: todo.append(init)
        for line, imported in imports_of(root, path):
            where = f'{path.relative_to(root)}:{line}'
            if imported.startswith('call:'): problems.append(f'{where}: calls {imported[5:]}')
            elif forbidden_module(imported, LISTENERS.get(name, frozenset())) and not narrow_use_ok(root, path, imported): problems.append(f'{where}: imports {imported}')
            elif imported in OPT_IN: continue
            elif imported == 'caveman' or imported.startswith('caveman.'):
                target = module_file(root, imported)
                if target: todo.append(target)
    return problems, seen


def test_mcp_modules_import_no_network_or_process_modules():
    start = [p for p in sorted((ROOT / 'caveman' / 'mcp').glob('*.py')) if module_name(ROOT, p) not in OPT_IN]
    problems, seen = violations(ROOT, start)
    assert {'caveman.mcp.transport', 'caveman.mcp.jsonrpc', 'caveman.mcp', 'caveman', 'caveman.mcp.http'} <= seen, seen   # not vacuous
    assert problems == [], '\n'.join(problems)


# --- the checker can fail ----------------------------------------------------------------------

def make_pkg(tmp_path: Path, files: dict) -> Path:
    for rel, src in {'caveman/__init__.py': '', 'caveman/mcp/__init__.py': '', **files}.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(src)
    return tmp_path


@pytest.mark.parametrize('src, expected', [
    ('import socket', 'imports socket'),
    ('import http.client', 'imports http.client'),
    ('from urllib.request import urlopen', 'imports urllib.request'),
    ('from asyncio import subprocess', 'imports asyncio.subprocess'),
    ('import asyncio\nasyncio.create_subprocess_exec("x")', 'calls create_subprocess_exec'),
    ('import os\nos.system("x")', 'calls system'),
    ('from os import execv', 'calls execv'),
    ('import os\ngetattr(os, "popen")("x")', 'calls popen'),
    ('__import__("so" + "cket")', 'calls __import__'),
    ('import importlib\nimportlib.import_module("ssl")', 'calls import_module'),
    ('from importlib import import_module', 'calls import_module'),
    ('def f():\n    import subprocess', 'imports subprocess'),
    ('from concurrent.futures import ProcessPoolExecutor', 'calls ProcessPoolExecutor'),
    ('from mcp.server import Server', 'imports mcp.server'),
])
def test_checker_flags(tmp_path, src, expected):
    root = make_pkg(tmp_path, {'caveman/mcp/bad.py': src})
    problems, _ = violations(root, [root / 'caveman/mcp/bad.py'])
    assert any(expected in p for p in problems), problems


def test_checker_follows_caveman_imports_transitively(tmp_path):
    root = make_pkg(tmp_path, {
        'caveman/mcp/server.py': 'from ..engine import Engine\nfrom . import tools',
        'caveman/mcp/tools.py': 'import json, logging\nfrom importlib import resources',
        'caveman/engine.py': 'from caveman.store import open_store\nclass Engine: pass',
        'caveman/store/__init__.py': 'import urllib.request',
    })
    problems, seen = violations(root, [root / 'caveman/mcp/server.py'])
    assert {'caveman.mcp.server', 'caveman.mcp.tools', 'caveman.engine', 'caveman.store'} <= seen
    assert [p.split(': ', 1)[1] for p in problems] == ['imports urllib.request'], problems
    assert problems[0].startswith('caveman/store/__init__.py:1')


def test_the_listener_allowance_is_narrow(tmp_path):
    "caveman.mcp.http may use uvicorn and Starlette, but not a client library or a process; no other module may use them."
    root = make_pkg(tmp_path, {'caveman/mcp/http.py': 'import uvicorn\nfrom starlette.routing import Route\nimport httpx\nimport subprocess',
                               'caveman/mcp/other.py': 'import uvicorn'})
    problems, _ = violations(root, [root / 'caveman/mcp/http.py', root / 'caveman/mcp/other.py'])
    assert sorted(p.split(': ', 1)[1] for p in problems) == ['imports httpx', 'imports subprocess', 'imports uvicorn'], problems
    assert [p for p in problems if 'uvicorn' in p][0].startswith('caveman/mcp/other.py')


@pytest.mark.parametrize('src, ok', [
    ('import ctypes\nctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(1), ctypes.py_object(KeyboardInterrupt))', True),
    ('import ctypes\nctypes.CDLL("libc.so.6").connect', False),
    ('import ctypes\nf = ctypes.pythonapi\nf.socket', False),
    ('from ctypes import pythonapi', False),
    ('import ctypes as c\nc.CDLL("x")', False),
])
def test_narrow_use_is_checked(tmp_path, src, ok):
    "ctypes in the server is allowed for the one call that interrupts a thread, and nothing else."
    root = make_pkg(tmp_path, {'caveman/mcp/server.py': src})
    problems, _ = violations(root, [root / 'caveman/mcp/server.py'])
    assert (problems == []) == ok, problems
    other = make_pkg(tmp_path / 'other', {'caveman/mcp/tools.py': src})
    assert violations(other, [other / 'caveman/mcp/tools.py'])[0] != []   # only that one module


def test_checker_passes_clean_code(tmp_path):
    root = make_pkg(tmp_path, {'caveman/mcp/ok.py': 'import json, os, sys, io, logging, re\nfrom importlib import resources\nos.dup2(2, 1)'})
    assert violations(root, [root / 'caveman/mcp/ok.py'])[0] == []


# --- the opt-in gateway stays opt-in ------------------------------------------------------------

def test_opt_in_modules_are_never_imported_at_module_level():
    "Only a function body (the `main` that parsed `--config`) may import the gateway, so importing the server never loads it."
    offenders = []
    for path in sorted((ROOT / 'caveman').rglob('*.py')):
        tree = ast.parse(path.read_text(encoding='utf-8'))
        for node in tree.body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ''] if isinstance(node, ast.ImportFrom) else []
            offenders += [f'{path.relative_to(ROOT)}:{node.lineno}' for n in names if n in OPT_IN or n.endswith('.gateway') and 'mcp' in n]
    assert offenders == []


def test_a_default_session_never_loads_the_gateway_or_the_sdk():
    import subprocess, sys
    code = """
import sys
from caveman.mcp.server import make_dispatch
from caveman.mcp.tools import Tools, RetrieveLedger
from caveman import ccr
from caveman.engine import Engine
d = make_dispatch(Tools(Engine(ccr.open_store(':memory:')), RetrieveLedger()))
d('initialize', {'protocolVersion': '2024-11-05'}); d('tools/list', {})
d('tools/call', {'name': 'caveman_compress', 'arguments': {'input': 'x ' * 5000}})
print(sorted(m for m in sys.modules if m in ('mcp', 'psycopg') or m.startswith(('mcp.', 'caveman.mcp.gateway', 'anyio', 'httpx', 'psycopg', 'caveman.ccr_postgres'))))
"""
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == '[]'
