"""The real Claude Code binary for tests and benchmarks: installed from npm into `.work/npm` once, run offline.

`claude_binary()` installs the pinned `@anthropic-ai/claude-code` (without lifecycle scripts: the platform
package, an optional dependency, holds the native binary, which is run directly) and returns its path;
raises `RuntimeError` when npm or the install fails. `host_env(home)` is a clean environment for one
session (HOME and CAVEMAN_HOME in a temp dir, no auto-update, no non-essential traffic); `run_claude` runs
one non-interactive session (`claude -p`) against the fake API whose env is passed in.
"""
import json, tempfile, platform, shutil, subprocess, sys
from pathlib import Path

from _npm import npm_install
from conftest import child_env

ROOT = Path(__file__).resolve().parents[1]
PACKAGE, VERSION = '@anthropic-ai/claude-code', '2.1.197'
NPM_DIR = ROOT / '.work' / 'npm'
ARCH = {'x86_64': 'x64', 'amd64': 'x64', 'aarch64': 'arm64', 'arm64': 'arm64'}.get(platform.machine().lower(), platform.machine())
BIN_PKG = NPM_DIR / 'node_modules' / '@anthropic-ai' / f'claude-code-linux-{ARCH}'


def _bin_pkg(npm_dir: Path) -> Path: return npm_dir / 'node_modules' / '@anthropic-ai' / f'claude-code-linux-{ARCH}'


def installed_version(npm_dir: Path = NPM_DIR) -> str | None:
    try: return json.loads((_bin_pkg(npm_dir) / 'package.json').read_text())['version']
    except (OSError, ValueError, KeyError): return None


def claude_binary(version: str = VERSION, npm_dir: Path = NPM_DIR) -> str:
    "Path of the Claude Code binary `version` in `npm_dir`, installing it from the npm registry first if needed."
    npm_install(npm_dir, {PACKAGE: version}, installed=lambda: installed_version(npm_dir) == version)
    return str(_bin_pkg(npm_dir) / 'claude')


def host_env(home: Path, extra: dict | None = None) -> dict:
    "A clean environment for one Claude Code session whose home (and caveman home) is `home`."
    return child_env(only=(), **{'PATH': f'{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin', 'HOME': str(home),
                                 'CAVEMAN_HOME': str(Path(home) / 'cv'), 'DISABLE_AUTOUPDATER': '1',
                                 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC': '1', 'CAVEMAN_HOOK_SERVER': None,   # the warm path, as users get it,
                                 'CAVEMAN_HOOK_SERVER_IDLE': '60', 'XDG_RUNTIME_DIR': tempfile.mkdtemp(prefix='cvrun'),   # its socket path short
                                 **(extra or {})})


def run_claude(claude: str, project: Path, env: dict, tools: str, prompt: str = 'work on this project',
               sources: str = 'project') -> subprocess.CompletedProcess:
    "One `claude -p` session in `project` reading only the settings `sources` (user, project, local), with `tools` allowed."
    return subprocess.run([claude, '-p', prompt, '--setting-sources', sources, '--allowedTools', tools,
                           '--model', 'claude-sonnet-4-5'], cwd=project, env=env,
                          capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
