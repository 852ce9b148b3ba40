"""The base install a user gets: the wheel built from this checkout, no extras, in a fresh venv.

Measured: the wall time of `pip install <wheel>` (dependencies from the machine's pip cache or PyPI), the size
of the venv's site-packages after it, the same with the `notebooks` extra beside it, and which of the heavy
packages the base install leaves out (ipywidgets and the Jupyter stack behind the `notebooks` extra, the MCP
SDK behind `gateway`, psycopg behind `postgres`).
"""
import shutil, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob('*') if p.is_file() and not p.is_symlink())


def _venv(base: Path, name: str, spec: str) -> tuple[float, int, set]:
    v = base / name
    subprocess.run([sys.executable, '-m', 'venv', str(v)], check=True, timeout=300)
    py = v / 'bin' / 'python'
    t = time.perf_counter()
    subprocess.run([str(py), '-m', 'pip', 'install', '-q', spec], check=True, timeout=1800, capture_output=True)
    took = time.perf_counter() - t
    site = next((v / 'lib').glob('python3*/site-packages'))
    names = set(subprocess.run([str(py), '-m', 'pip', 'list', '--format', 'freeze'], capture_output=True, text=True).stdout.lower().split())
    return took, _du(site), {n.split('==')[0] for n in names}


def run() -> str:
    base = Path(tempfile.mkdtemp(prefix='bench-install-'))
    try:
        subprocess.run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '-q', '-w', str(base / 'w'), str(ROOT)], check=True, timeout=600)
        wheel = next((base / 'w').glob('caveman_context-*.whl'))
        t_base, size_base, pkgs = _venv(base, 'base', str(wheel))
        t_nb, size_nb, _ = _venv(base, 'notebooks', f'{wheel}[notebooks]')
    finally: shutil.rmtree(base, ignore_errors=True)
    left_out = [p for p in ('ipywidgets', 'ipython', 'jedi', 'widgetsnbextension', 'mcp', 'psycopg') if p not in pkgs]
    return '\n'.join([
        '## Install: the base wheel in a fresh venv', '',
        '| install | pip install wall time | site-packages |', '|---|---:|---:|',
        f'| `caveman-context` (base) | {t_base:.1f} s | {size_base / 2**20:.1f} MiB |',
        f'| `caveman-context[notebooks]` | {t_nb:.1f} s | {size_nb / 2**20:.1f} MiB |', '',
        f'Left out of the base install: {", ".join(left_out) or "nothing"}. Before issue 17 the base install was about 212 MB, '
        'of which about 68 MB was the Jupyter widget stack no command imports. Times depend on the pip cache.']) + '\n'


if __name__ == '__main__': print(run())
