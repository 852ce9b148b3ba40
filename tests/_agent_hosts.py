"""The real Gemini CLI and Codex binaries for tests: installed from npm into `.work/` once (pinned), run offline.

`gemini_binary()` installs `@google/gemini-cli` into `.work/npm-gemini` and returns its `gemini` script (run
by node); `codex_binary()` installs `@openai/codex` into `.work/npm-codex` (without lifecycle scripts: the
platform package, an optional dependency, holds the native binary, which is run directly) and returns the
native binary. Both raise `RuntimeError` when npm or the install fails. The npm cache lives beside each
install, so reruns need no network.
"""
import json, platform, shutil, subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GEMINI = ('@google/gemini-cli', '0.61.0', ROOT / '.work' / 'npm-gemini')
CODEX = ('@openai/codex', '0.171.0', ROOT / '.work' / 'npm-codex')
_TRIPLE = {'x86_64': 'x86_64-unknown-linux-musl', 'amd64': 'x86_64-unknown-linux-musl',
           'aarch64': 'aarch64-unknown-linux-musl', 'arm64': 'aarch64-unknown-linux-musl'}.get(platform.machine().lower(), '')
_ARCH = {'x86_64': 'x64', 'amd64': 'x64', 'aarch64': 'arm64', 'arm64': 'arm64'}.get(platform.machine().lower(), '')


def _version(pkg_dir: Path) -> str | None:
    try: return json.loads((pkg_dir / 'package.json').read_text())['version']
    except (OSError, ValueError, KeyError): return None


def _npm_install(package: str, version: str, prefix: Path, pkg_dir: Path, want: str):
    npm = shutil.which('npm')
    if not npm: raise RuntimeError(f'npm is needed to install {package} (npm registry)')
    if _version(pkg_dir) == want: return
    prefix.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([npm, 'install', '--prefix', str(prefix), '--cache', str(prefix / 'cache'), '--ignore-scripts',
                        '--no-audit', '--no-fund', '--loglevel', 'error', f'{package}@{version}'],
                       capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    if r.returncode != 0 or _version(pkg_dir) != want:
        raise RuntimeError(f'npm install {package}@{version} failed (rc {r.returncode}):\n{r.stderr[-3000:]}')


def gemini_binary() -> str:
    "Path of the Gemini CLI script (`gemini`, run by node), installing the pinned version first if needed."
    package, version, prefix = GEMINI
    _npm_install(package, version, prefix, prefix / 'node_modules' / '@google' / 'gemini-cli', version)
    return str(prefix / 'node_modules' / '@google' / 'gemini-cli' / 'bundle' / 'gemini.js')


def codex_binary() -> str:
    "Path of the native Codex binary, installing the pinned version first if needed."
    package, version, prefix = CODEX
    pkg = prefix / 'node_modules' / '@openai' / f'codex-linux-{_ARCH}'
    _npm_install(package, version, prefix, pkg, f'{version}-linux-{_ARCH}')
    exe = pkg / 'vendor' / _TRIPLE / 'bin' / 'codex'
    if not exe.exists(): raise RuntimeError(f'{exe} is missing after npm install {package}@{version}')
    return str(exe)


# What the end-to-end tests of every host share (tests/test_claude_code.py, test_hook_gemini_cli.py, test_hook_codex.py).
import re, sys

HANDLE = re.compile(r'recovery_handle="(ccr_[0-9a-f]{32})"')   # a handle as a view names it


def caveman_exe() -> str:
    "The `caveman` console script of the interpreter running the tests; fails the test when it is not installed."
    import pytest
    exe = Path(sys.executable).with_name('caveman')
    if not exe.exists(): pytest.fail('the caveman console script is not installed: run through `make test`')
    return str(exe)


def host_binary_fixture(find):
    "A module-scoped pytest fixture returning `find()` (a host binary), failing the test with `find`'s `RuntimeError`."
    import pytest
    @pytest.fixture(scope='module')
    def binary() -> str:
        try: return find()
        except RuntimeError as e: pytest.fail(str(e))
    return binary


def caveman_cli(*args: str, cwd: Path, env: dict, timeout: int = 120) -> str:
    "Run `caveman *args` (e.g. `install codex --no-mcp`) in `cwd` with exactly `env`; assert exit 0 and return stdout."
    r = subprocess.run([caveman_exe(), *args], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return r.stdout
