"""The live corpus: about 45 real commands run on this machine at test time, so what caveman is judged
on is output nobody tuned for (issue 10).

`live_captures(workdir)` builds a few throwaway things in `workdir` (a Python project with failing
tests, a wheel and a source tree to install, two npm packages, a git repository, a SQLite script),
runs the commands and returns `(name, output bytes)` pairs: stdout and stderr interleaved as a
terminal shows them, each cut at `MAX_BYTES` and stopped after `TIMEOUT` seconds. Source files and
HTML shipped by installed packages are read as they are. A command whose program is missing from the
machine is left out and named in `missing()`; `.ci/run` installs the tools a fresh machine lacks, and
at least `MIN_CAPTURES` captures must come back (asserted). Nothing here imports caveman.

`live_probes(name, original)` gives a few generic questions per capture (its first line, its last line,
its first error line, a JSON document's top-level names), computed from the original with this
module's own code, and `answered(view, value)` says whether a view shows (or a marker names) the value.
tests/_live.py wraps `live_captures` in the session fixture `live_corpus` (the live tests),
benchmarks/bench_trust.py measures on it, and `make eval` runs `python evals/live_capture.py`: every
capture through a fresh engine, byte-exact recovery from a reopened store file, the probes; exit 1 on
a compressor exception or a recovery mismatch."""
import glob, os, shutil, subprocess, sys, sysconfig, textwrap, zipfile
from pathlib import Path

MAX_BYTES = 2 * 1024 * 1024      # per capture
TIMEOUT = 120                    # seconds per command
MIN_CAPTURES = 35

_missing: list[str] = []

def missing() -> list[str]:
    "Names of the captures left out by the last `live_captures` run because a program is missing."
    return list(_missing)

def _env(workdir: Path) -> dict:
    env = dict(os.environ, LC_ALL='C.UTF-8', LANG='C.UTF-8', COLUMNS='120', MANWIDTH='80', PAGER='cat',
               GIT_PAGER='cat', PIP_NO_INDEX='1', PIP_DISABLE_PIP_VERSION_CHECK='1', NO_COLOR='1',
               npm_config_cache=str(workdir / 'npm-cache'), npm_config_update_notifier='false',
               npm_config_fund='false', npm_config_audit='false', PYTHONDONTWRITEBYTECODE='1')
    env.pop('PYTEST_ADDOPTS', None); env.pop('PYTEST_CURRENT_TEST', None)
    return env

def _run(argv, workdir: Path, cwd=None, stdin: bytes = b'') -> bytes:
    "stdout+stderr of `argv` (list, or str for the shell), cut at MAX_BYTES; a timeout keeps what was printed."
    try:
        p = subprocess.run(argv, cwd=cwd or workdir, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=TIMEOUT, env=_env(workdir), shell=isinstance(argv, str))
        out = p.stdout
    except subprocess.TimeoutExpired as e: out = e.stdout or b''
    return out[:MAX_BYTES]

def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip('\n'))
    return path

# ------------------------------------------------------------------ throwaway things to run commands on
def _pyproject(workdir: Path) -> Path:
    "A small Python project: a package, a pyproject for setuptools, tests of which some fail."
    root = workdir / 'shopcart'
    _write(root / 'pyproject.toml', '''
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "shopcart"
        version = "0.3.1"
        description = "A throwaway cart for the live corpus"
        ''')
    _write(root / 'shopcart' / '__init__.py', '''
        """A tiny shopping cart."""
        class OutOfStock(Exception):
            "Raised when an item has no stock left."

        STOCK = {"apple": 3, "pear": 0, "plum": 12}

        def add(cart: dict, item: str, n: int = 1) -> dict:
            "Add `n` of `item` to `cart`; raises OutOfStock when the shelf is empty."
            if STOCK.get(item, 0) < n:
                raise OutOfStock(f"{item}: wanted {n}, have {STOCK.get(item, 0)}")
            cart[item] = cart.get(item, 0) + n
            return cart

        def total(cart: dict, prices: dict) -> float:
            return sum(prices[k] * v for k, v in cart.items())
        ''')
    tests = ['from shopcart import add, total, OutOfStock', 'import pytest', '']
    for i in range(24):
        tests += [f'def test_add_apple_{i}():', f'    assert add({{}}, "apple", {1 + i % 3}) == {{"apple": {1 + i % 3}}}', '']
    tests += ['def test_add_pear():', '    assert add({}, "pear") == {"pear": 1}', '',
              'def test_total():', '    assert total({"apple": 2}, {"apple": 0.5}) == 1.5', '',
              'def test_total_missing_price():', '    assert total({"plum": 1}, {"apple": 0.5}) == 0', '',
              '@pytest.mark.parametrize("n", [1, 2, 3, 4])', 'def test_plums(n):', '    assert add({}, "plum", n)["plum"] == n', '']
    (root / 'tests').mkdir(exist_ok=True)
    (root / 'tests' / 'test_cart.py').write_text('\n'.join(tests))
    return root

def _wheel(workdir: Path, project: Path) -> Path | None:
    "A wheel of the throwaway project built offline with the running interpreter's setuptools (None if it cannot)."
    out = workdir / 'dist'
    _run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '--no-index', '-w', str(out), str(project)], workdir)
    wheels = sorted(out.glob('*.whl'))
    return wheels[0] if wheels else None

def _npm_packages(workdir: Path) -> Path:
    "Two local npm packages, `app` depending on `left-trim` by path (installs with no registry)."
    lib = workdir / 'npm' / 'left-trim'
    _write(lib / 'package.json', '''
        {"name": "left-trim", "version": "1.2.0", "description": "trim the left side", "main": "index.js",
         "license": "MIT", "keywords": ["string", "trim"]}
        ''')
    _write(lib / 'index.js', 'module.exports = s => s.replace(/^\\s+/, "");\n')
    app = workdir / 'npm' / 'app'
    _write(app / 'package.json', '''
        {"name": "app", "version": "0.0.1", "private": true, "dependencies": {"left-trim": "file:../left-trim"}}
        ''')
    return app

def _git_repo(workdir: Path, project: Path) -> Path:
    "A git repository with a dozen commits: files added, rewritten, renamed, removed."
    repo = workdir / 'repo'
    shutil.copytree(project, repo, ignore=shutil.ignore_patterns('__pycache__', '*.egg-info', 'build', '.pytest_cache'))
    git = lambda *a: _run(['git', '-c', 'user.name=Ada Lovelace', '-c', 'user.email=ada@example.org', '-c', 'init.defaultBranch=main',
                           '-c', 'commit.gpgsign=false', *a], workdir, cwd=repo)
    git('init', '-q'); git('add', '-A'); git('commit', '-q', '-m', 'Initial cart')
    src = repo / 'shopcart' / '__init__.py'
    for i in range(30):
        text = src.read_text()
        if i % 3 == 0: text = text.replace('"plum": ', f'"kiwi{i}": {i}, "plum": ')
        elif i % 3 == 1: text += f'\ndef discount_{i}(price: float) -> float:\n    "Take {i}% off."\n    return price * {1 - i / 100}\n'
        else: (repo / f'NOTES_{i}.md').write_text(f'# Note {i}\n\n' + 'The cart keeps stock in memory.\n' * (i + 1))
        src.write_text(text)
        git('add', '-A'); git('commit', '-q', '-m', f'Cart change {i}: ' + ['more fruit', 'a discount', 'notes'][i % 3])
    git('mv', 'NOTES_2.md', 'docs.md'); git('rm', '-q', 'NOTES_5.md', 'NOTES_8.md'); git('commit', '-q', '-m', 'Tidy the notes')
    return repo

SQL = '''
.headers on
.mode column
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT NOT NULL, item TEXT, qty INTEGER, status TEXT, created TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120)
INSERT INTO orders SELECT i, 'customer' || (i % 17), CASE i % 4 WHEN 0 THEN 'apple' WHEN 1 THEN 'pear' WHEN 2 THEN 'plum' ELSE 'kiwi' END,
  1 + i % 5, CASE WHEN i = 77 THEN 'failed' ELSE 'shipped' END, datetime('2026-01-01', '+' || i || ' hours') FROM n;
.schema
SELECT * FROM orders;
SELECT item, count(*) AS n, sum(qty) AS qty FROM orders GROUP BY item;
SELECT * FROM missing_table;
.mode json
SELECT id, customer, status FROM orders WHERE id < 40;
'''

REPL = '''
import json, sys, os
sys.version_info[:2] >= (3, 8)
data = [{"id": i, "name": f"user{i}", "active": i % 3 != 0} for i in range(60)]
len(data)
data[:25]
print(json.dumps(data[:30], indent=2))
{k: v for k, v in os.environ.items() if k.startswith("LC_")}
1 / 0
[x ** 2 for x in range(40)]
import this
'''

C_BROKEN = '''
#include <stdio.h>
int main(void) {
    int counts[3] = {1, 2, 3};
    printf("%s\\n", counts[1]);
    return undefined_total + counts[5];
}
'''

TAP_T = '''
use strict; use warnings; use Test::More tests => 3000;
for my $i (1 .. 3000) { ok($i != 1777 && $i != 2412, "item $i is valid"); }
'''

NODE_T = '''
import test from 'node:test';
import assert from 'node:assert';
for (let i = 1; i <= 1500; i++) {
  test(`item ${i} is valid`, () => { assert.strictEqual(i === 613 || i === 1207 ? -1 : i, i); });
}
'''

JAVA_THROW = '''
public class Thrower {
    static void open(int shard) { if (shard == 37) throw new IllegalStateException("pool closed"); }
    public static void main(String[] args) {
        for (int i = 0; i < 120; i++) System.out.println("loading shard " + i + " of 120 ... ok");
        try { try { open(37); } catch (IllegalStateException e) { throw new RuntimeException("shard 37", e); } }
        catch (RuntimeException e) { e.printStackTrace(System.out); }
        for (int i = 120; i < 240; i++) System.out.println("loading shard " + i + " of 240 ... ok");
        new NullPointerException().printStackTrace(System.out);
        System.out.println("done");
    }
}
'''

CXX_THROW = '''
#include <cstdio>
#include <stdexcept>
int main() {
    for (int i = 0; i < 200; i++) std::printf("reserving block %d of 200\\n", i);
    std::fflush(stdout);
    throw std::runtime_error("arena exhausted after 200 blocks");
}
'''

GIT_CONFLICT = '''
set -e; rm -rf merge; mkdir merge; cd merge
g() { git -c user.name=Ada -c user.email=ada@example.org -c init.defaultBranch=main -c commit.gpgsign=false "$@"; }
g init -q
for i in $(seq 1 300); do printf 'head %s\\nbody\\nmiddle\\nbody\\ntail %s\\n' $i $i > f$i.txt; done
g add -A; g commit -qm base; g checkout -qb topic
for i in $(seq 1 300); do sed -i "1s/.*/topic head $i/" f$i.txt; done
for i in 77 212; do sed -i '3s/.*/topic middle/' f$i.txt; done
g commit -qam topic; g checkout -q main
for i in $(seq 1 300); do sed -i "5s/.*/main tail $i/" f$i.txt; done
for i in 77 212; do sed -i '3s/.*/main middle/' f$i.txt; done
g commit -qam main
g merge --no-edit topic || true
'''

JAVA_BROKEN = '''
public class Broken {
    public static void main(String[] args) {
        int n = "seven";
        System.out.println(missing(n));
    }
}
'''

def _site_packages() -> Path:
    return Path(sysconfig.get_paths()['purelib'])

def _first(pattern: str) -> Path | None:
    hits = sorted(glob.glob(pattern, recursive=True))
    return Path(hits[0]) if hits else None

def _read(path: Path | None) -> bytes | None:
    return path.read_bytes()[:MAX_BYTES] if path is not None and path.is_file() else None

def _largest_html(patterns: list[str], limit: int = 400_000) -> Path | None:
    "The largest HTML file under `limit` bytes among the first 500 matches of the first pattern that has any."
    for pattern in patterns:
        hits = sorted(glob.glob(pattern, recursive=True))[:500]
        sized = [(os.path.getsize(h), h) for h in hits if os.path.isfile(h) and os.path.getsize(h) <= limit]
        if sized: return Path(max(sized)[1])
    return None

def _java_source() -> bytes | None:
    "One Java source file from the JDK's src.zip, if a JDK ships it."
    for z in sorted(glob.glob('/usr/lib/jvm/*/lib/src.zip')):
        try:
            with zipfile.ZipFile(z) as f:
                names = [n for n in f.namelist() if n.endswith('java/util/ArrayDeque.java')] or [n for n in f.namelist() if n.endswith('.java')]
                if names: return f.read(names[0])[:MAX_BYTES]
        except (OSError, zipfile.BadZipFile): continue
    return None

# ------------------------------------------------------------------ the captures
def live_captures(workdir: Path) -> list[tuple[str, bytes]]:
    "Run the live commands in `workdir` (created if missing) and return [(name, output bytes)]; raises AssertionError when fewer than MIN_CAPTURES come back."
    workdir = Path(workdir); workdir.mkdir(parents=True, exist_ok=True)
    _missing.clear()
    py, sp = sys.executable, _site_packages()
    project = _pyproject(workdir)
    wheel = _wheel(workdir, project)
    app = _npm_packages(workdir)
    repo = _git_repo(workdir, project)
    (workdir / 'orders.sql').write_text(SQL)
    _write(workdir / 'broken.c', C_BROKEN); _write(workdir / 'Broken.java', JAVA_BROKEN)
    _write(workdir / 'tap' / 't' / 'items.t', TAP_T)
    _write(workdir / 'nodet' / 'items.test.mjs', NODE_T); _write(workdir / 'javat' / 'Thrower.java', JAVA_THROW)
    _write(workdir / 'cxx' / 'throw.cc', CXX_THROW); _write(workdir / 'merge.sh', GIT_CONFLICT)
    pip_dir = sp / 'pip'
    out: list[tuple[str, bytes]] = []

    def cmd(name: str, argv, needs: str | None = None, **kw):
        prog = needs or (argv[0] if isinstance(argv, list) else argv.split()[0])
        if shutil.which(prog) is None and not os.path.isabs(prog): _missing.append(name); return
        data = _run(argv, workdir, **kw)
        if data.strip(): out.append((name, data))
        else: _missing.append(name)

    def file(name: str, data: bytes | None):
        if data: out.append((name, data))
        else: _missing.append(name)

    # listings
    cmd('ls_la_site_packages', ['ls', '-la', str(sp)])
    cmd('ls_laR_pip', ['ls', '-laR', str(pip_dir / '_internal')])
    cmd('ls_laR_dev', ['ls', '-laR', '/dev'])                                       # device rows: `major, minor` for a size
    cmd('ls_la_full_iso', ['ls', '-la', '--time-style=full-iso', str(sp)])          # date, time and zone for month, day and time
    cmd('ls_laR_stdlib_json', ['ls', '-laR', str(Path(os.__file__).parent / 'json')])   # files old enough to show a year
    cmd('find_pip_py', ['find', str(pip_dir), '-name', '*.py'])
    cmd('find_usr_share_doc', ['find', '/usr/share/doc', '-maxdepth', '2'])
    cmd('find_print0_usr_share_doc', ['find', '/usr/share/doc', '-maxdepth', '2', '-print0'])   # NUL-separated records
    cmd('df_h', ['df', '-h'])
    cmd('du_site_packages', ['du', '-ak', str(sp / '_pytest')])
    # process tables
    cmd('ps_aux', ['ps', 'aux'])
    cmd('ps_forest', ['ps', '-eo', 'pid,ppid,user,rss,etime,stat,args', '--forest'])
    # package managers
    cmd('dpkg_l', ['dpkg', '-l'])
    cmd('apt_cache_policy', ['apt-cache', 'policy', 'git', 'python3', 'sqlite3', 'strace', 'curl'])
    if wheel is not None:
        cmd('pip_install_v_wheel', [py, '-m', 'pip', 'install', '-v', '--no-index', '--no-deps', '--target', str(workdir / 'site-wheel'), str(wheel)])
        cmd('unzip_l_wheel', [py, '-m', 'zipfile', '-l', str(wheel)], needs=py)
    else: _missing.extend(['pip_install_v_wheel', 'unzip_l_wheel'])
    cmd('pip_install_v_source', [py, '-m', 'pip', 'install', '-v', '--no-index', '--no-deps', '--no-build-isolation',
                                 '--target', str(workdir / 'site-src'), str(project)])
    cmd('pip_list_json', [py, '-m', 'pip', 'list', '--format', 'json'])
    cmd('pip_inspect', [py, '-m', 'pip', 'inspect'])
    cmd('pip_show_files', [py, '-m', 'pip', 'show', '-f', 'pip'])
    cmd('pip_freeze', [py, '-m', 'pip', 'freeze', '--all'])
    cmd('npm_install_verbose', ['npm', 'install', '--offline', '--loglevel', 'verbose'], cwd=app)
    cmd('npm_ls_json', ['npm', 'ls', '--json', '--long'], cwd=app)
    cmd('npm_view_json', ['npm', 'view', '--json', '--offline', str(workdir / 'npm' / 'left-trim')], cwd=app)
    # a failing test run
    cmd('pytest_fail', [py, '-m', 'pytest', '-p', 'no:cacheprovider', 'tests'], cwd=project)
    cmd('pytest_fail_v', [py, '-m', 'pytest', '-v', '-p', 'no:cacheprovider', 'tests'], cwd=project)
    cmd('prove_tap', ['prove', '-v', 't'], cwd=workdir / 'tap')                    # TAP: `not ok 1777 - item 1777 is valid`
    cmd('node_test_tap', ['node', '--test', '--test-reporter=tap', 'items.test.mjs'], cwd=workdir / 'nodet')   # `# Subtest:`, YAML blocks
    cmd('java_stack_trace', ['java', 'Thrower.java'], cwd=workdir / 'javat')         # `Caused by: …`, a bare `java.lang.NullPointerException`
    cmd('cxx_terminate', 'g++ -o throw throw.cc && ./throw', needs='g++', cwd=workdir / 'cxx')   # `terminate called …`, `  what():  …`
    cmd('git_merge_conflict', ['sh', str(workdir / 'merge.sh')], needs='git')         # `CONFLICT (content): Merge conflict in f77.txt`
    cmd('python_traceback', [py, '-c', 'import shopcart; shopcart.add({}, "pear")'], cwd=project)
    # tracing, manuals
    cmd('strace_f', ['strace', '-f', 'sh', '-c', 'cat /etc/hostname /nonexistent/config.toml; ls / > /dev/null'])
    cmd('dmesg', ['dmesg'])                                                          # kernel log: elapsed-seconds stamps
    cmd('man_ls', ['man', '-P', 'cat', 'ls'])
    cmd('man_git_log', ['man', '-P', 'cat', 'git-log'])
    cmd('man_python', ['man', '-P', 'cat', 'python3'])
    cmd('man_bash', ['man', '-P', 'cat', 'bash'])
    cmd('man_tar', ['man', '-P', 'cat', 'tar'])
    # git
    cmd('git_log_stat', ['git', 'log', '--stat'], cwd=repo)
    cmd('git_log_p', ['git', 'log', '-p'], cwd=repo)
    cmd('git_show_stat', ['git', 'show', '--stat', 'HEAD~3'], cwd=repo)
    # search
    cmd('grep_rn_site_packages', ['grep', '-rn', '--include=*.py', 'logger.warning', str(sp)])
    cmd('grep_rn_def_main', ['grep', '-rn', 'def main', str(pip_dir)])
    cmd('rg_n_site_packages', ['rg', '-n', '--no-heading', 'warnings.warn', str(sp)])
    cmd('rg_heading', ['rg', '--heading', '-n', 'raise ValueError', str(pip_dir)])
    # sessions driven through stdin
    cmd('sqlite3_session', ['sqlite3', '-echo', str(workdir / 'orders.db')], stdin=SQL.encode())
    cmd('python_repl', [py, '-i', '-q'], stdin=REPL.encode(), needs=py)
    cmd('node_eval', ['node', '-e', 'const o = {a: [1,2,3], b: {c: "x"}}; console.log(JSON.stringify(o, null, 2)); '
                                     'console.table([{id: 1, ok: true}, {id: 2, ok: false}]); null.boom;'])
    # compilers
    cmd('gcc_errors', ['gcc', '-Wall', '-c', '-o', '/dev/null', 'broken.c'])
    cmd('javac_errors', ['javac', '-d', str(workdir / 'classes'), 'Broken.java'])
    # source of installed packages, several languages
    file('py_source_pip', _read(pip_dir / '_internal' / 'req' / 'req_install.py'))
    file('py_source_pytest', _read(sp / '_pytest' / 'python.py'))
    file('js_source_npm', _read(_first('/usr/lib/node_modules/npm/lib/commands/install.js')
                                or _first('/usr/**/node_modules/npm/lib/*.js')))
    file('c_header_stdio', _read(Path('/usr/include/stdio.h')))
    file('cpp_header_vector', _read(_first('/usr/include/c++/*/bits/stl_vector.h')))
    file('rust_source', _read(_first(os.path.expanduser('~/.cargo/registry/src/*/*/src/lib.rs'))
                              or _first(os.path.expanduser('~/.rustup/toolchains/*/lib/rustlib/src/rust/library/core/src/option.rs'))
                              or _first('/usr/share/doc/**/*.rs') or _first(os.path.expanduser('~/.rustup/**/*.rs'))))
    file('go_source', _read(_first('/usr/share/doc/git/contrib/**/*.go') or _first('/usr/lib/go*/src/strings/strings.go')))
    file('java_source', _java_source())
    # HTML docs, JSON
    cmd('pydoc_html', f'{py} -m pydoc -w json >/dev/null && cat json.html', needs=py)
    file('html_shipped', _read(_largest_html([f'{sp}/**/*.html', '/usr/share/doc/**/*.html'])))
    file('html_rustdoc', _read(_first(os.path.expanduser('~/.rustup/toolchains/*/share/doc/rust/html/std/option/enum.Option.html'))
                               or _first(os.path.expanduser('~/.rustup/toolchains/*/share/doc/rust/html/std/index.html'))))
    file('proc_cpuinfo', _read(Path('/proc/cpuinfo')))
    if _missing: print(f'live corpus: {len(_missing)} capture(s) unavailable here: {", ".join(_missing)}', file=sys.stderr)
    assert len(out) >= MIN_CAPTURES, f'only {len(out)} live captures (missing: {_missing})'
    return out

# ------------------------------------------------------------------ generic questions about a capture
import html, json, re

_ERROR = re.compile(r'\b(error|errors|failed|failure|fatal|exception|traceback|denied|refused|cannot|ENOENT|EACCES|panic)\b', re.I)

def live_probes(name: str, original: bytes) -> list[tuple[str, str]]:
    "Generic questions about one capture as (dimension, value) pairs: its first and last non-blank line, its first error line, a JSON object's top-level member names (at most 12)."
    text = original.decode('utf-8', 'replace')
    try: doc = json.loads(text)
    except ValueError: doc = None
    if isinstance(doc, dict):          # JSON: questions about members, not about line layout
        return [('member name', json.dumps(k, ensure_ascii=False)) for k in list(doc)[:12]]
    if isinstance(doc, list):
        ends = [e for e in (doc[:1] + doc[-1:]) if isinstance(e, dict)]
        return [(f'{w} element', json.dumps(v, ensure_ascii=False)) for w, e in zip(('first', 'last'), ends)
                for v in list(e.values())[:1] if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
    if re.search(r'<html|<!doctype html', text[:2000], re.I):   # HTML: the title and the first headings, as text
        found = re.findall(r'<(title|h[1-3])\b[^>]*>(.*?)</\1\s*>', text, re.I | re.S)
        texts = [' '.join(html.unescape(re.sub(r'<[^>]+>', ' ', t)).split()) for _, t in found]
        return [('heading', t) for t in dict.fromkeys(t for t in texts if t)][:6]
    lines = [l.strip() for l in text.replace('\x00', '\n').splitlines() if l.strip()]   # NUL-separated records count as lines
    if not lines: return []
    probes = [('first line', lines[0]), ('last line', lines[-1])]
    err = next((l for l in lines if _ERROR.search(l)), None)
    if err is not None: probes.append(('first error line', err))
    return probes

def answered(view: bytes, value: str) -> bool:
    "True when the view shows `value` verbatim, or a marker quotes it (JSON-escaped, possibly cut to its first 100 characters)."
    v = view.decode('utf-8', 'replace')
    if value in v or ' '.join(value.split()) in ' '.join(v.split()): return True
    quoted = json.dumps(value, ensure_ascii=False)[1:-1]
    return quoted in v or (len(value) > 100 and json.dumps(value[:100], ensure_ascii=False)[1:-1] in v)

def main(argv: list[str] | None = None) -> int:
    "`make eval`, live part: capture, compress each through a fresh engine with a file store, check byte-exact recovery from a second connection and the generic probes; print a table; 1 on any exception or recovery mismatch."
    import tempfile, traceback
    from caveman import ccr
    from caveman.engine import Engine
    with tempfile.TemporaryDirectory() as d:
        caps = live_captures(Path(d) / 'work')
        db = str(Path(d) / 'ccr.db')
        eng, second = Engine(ccr.open_store(db)), None
        rows, failures = [], []
        for name, data in caps:
            try: r = eng.compress(data)
            except Exception:
                failures.append(f'{name}: compress raised {traceback.format_exc(limit=1).strip()}'); continue
            if r.recovery_handle:
                second = second or ccr.open_store(db)
                recovered = second.get(r.recovery_handle) == data
            else: recovered = r.output == data
            if not recovered: failures.append(f'{name}: recovery is not byte-exact')
            probes = live_probes(name, data)
            rows.append((name, r.content_type, r.method or '-', f'{r.tokens_before}->{r.tokens_after}', f'{r.ratio:.1%}',
                         'exact' if recovered else 'MISMATCH', f'{sum(answered(r.output, v) for _, v in probes)}/{len(probes)}'))
    head = ('capture', 'type', 'method', 'tokens', 'ratio', 'recovery', 'probes')
    widths = [max(len(str(x[i])) for x in [head] + rows) for i in range(len(head))]
    for row in [head] + rows: print('  '.join(str(c).ljust(w) for c, w in zip(row, widths)))
    tb = sum(int(r[3].split('->')[0]) for r in rows); ta = sum(int(r[3].split('->')[1]) for r in rows)
    pa = sum(int(r[6].split('/')[0]) for r in rows); pt = sum(int(r[6].split('/')[1]) for r in rows)
    print(f'live: {len(rows)} captures (unavailable here: {", ".join(missing()) or "none"}); tokens {tb}->{ta} '
          f'({(tb - ta) / tb if tb else 0:.1%} saved); probes answered from the view {pa}/{pt}; recovery failures {len(failures)}')
    for f in failures: print('FAIL', f)
    return 1 if failures else 0

if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
