"""Everyday shell output and structure, on output captured on this machine at test time (issue 10,
classes 8 and 9): `ls -la`, `ls -laR`, `find`, `ps aux`, `dpkg -l`, `df` detect as fixed-width
tables or path lists and keep their header and directories; an ELF file is binary; `git log --stat`
is not HTML; a failing `pytest -v` run is a log; grep/rg hits that say `logger.info` are search
results; a pnpm lockfile is config; man-page headings, INI section headers and HTML page sections
are never elided without a marker; C, C++, Rust and Java sources get an outline.

The checks read the original with this file's own code (whitespace columns, path parents, marker
lines) — nothing from the compressors they judge."""
import json, os, re, shutil, subprocess, sys, sysconfig, tarfile
from collections import Counter
from pathlib import Path

import pytest

from caveman import ccr
from caveman.detect import detect, unwrap
from caveman.engine import Engine
from conftest import child_env

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(sysconfig.get_paths()['purelib'])
WORK = ROOT / '.work' / 'everyday'
MARKER = re.compile(r'[ \t]*(?:# )?… (\d+) ([a-z ]+?) elided \(caveman\)(?:: (.*))? …\r?')
CONTRACT = '… caveman: elided '


def run(argv, cwd=None, timeout=300) -> bytes:
    "stdout + stderr of a command run now (whatever its exit status)."
    p = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout, env=child_env(LC_ALL='C.UTF-8', COLUMNS='200', MANWIDTH='80'))
    return p.stdout

def need(prog: str) -> str:
    path = shutil.which(prog)
    assert path, f'{prog} is not installed (.ci/run installs it)'
    return path

def compress(data: bytes):
    "Engine result with an in-memory store; the original must come back byte for byte."
    e = Engine(ccr.open_store(':memory:'))
    r = e.compress(data)
    if not r.passed_through: assert e.retrieve(r.recovery_handle) == data
    return r

def walk(original: bytes, view: bytes) -> list[tuple[int, str, str, list[str]]]:
    """Align a line view with its original: every view line is the next original line, a marker
    standing for the next N original lines, or the contract line. Returns `(N, unit, facts, hidden
    lines)` per marker; fails on any line that is neither (a reordered, rewritten or silently dropped line)."""
    orig, shown = original.decode().split('\n'), view.decode().split('\n')
    i, markers = 0, []
    for line in shown:
        m = MARKER.fullmatch(line)
        if m:
            n = int(m.group(1)); markers.append((n, m.group(2), m.group(3) or '', orig[i:i + n])); i += n; continue
        if line.startswith(CONTRACT): continue
        assert i < len(orig) and line == orig[i], f'view line {line!r} is not original line {i}: {orig[i] if i < len(orig) else None!r}'
        i += 1
    assert i == len(orig), f'{len(orig) - i} original lines neither shown nor counted'
    return markers

def constants(facts: str) -> dict[str, str]:
    "The `all K=V …` section of a marker's facts (values bare or JSON strings)."
    sec = next((s for s in facts.split('; ') if s.startswith('all ')), '')
    out = {}
    for m in re.finditer(r'("(?:[^"\\]|\\.)*"|[^\s=]+)=("(?:[^"\\]|\\.)*"|\S+)', sec[4:]):
        k, v = (json.loads(x) if x.startswith('"') else x for x in m.groups())
        out[k] = v
    return out


# ----------------------------------------------------------------------------- fixed-width tables
def check_table(data: bytes, header: str | None, columns: int | None = None):
    "Detected and compressed as `table`; the header stays; markers count exactly; `all` facts hold per column (whitespace split)."
    assert detect(unwrap(data)[0]) == 'table'
    r = compress(data)
    assert r.content_type == 'table'
    if r.passed_through: return r
    view = r.output.decode()
    if header is not None: assert header in view.split('\n'), header
    markers = walk(data, r.output)
    assert markers and all(unit == 'rows' for _, unit, _, _ in markers)
    if header is not None and columns:
        names = header.split(None, columns - 1)
        for n, _, facts, hidden in markers:
            for k, v in constants(facts).items():
                col = names.index(k)
                assert all(len(c := row.split(None, columns - 1)) > col and c[col] == v for row in hidden), (k, v)
    return r

def test_ps_aux_is_a_table_with_its_header():
    out = run([need('ps'), 'aux'])
    header = out.decode().split('\n')[0]
    assert header.split()[:3] == ['USER', 'PID', '%CPU']
    check_table(out, header, columns=11)

def test_dpkg_l_is_a_table_with_its_header():
    out = run([need('dpkg'), '-l'])
    header = next(l for l in out.decode().split('\n') if l.startswith('||/'))
    r = check_table(out, header)
    assert not r.passed_through and r.tokens_after < r.tokens_before / 2

def test_ls_la_and_df_are_tables():
    check_table(run([need('ls'), '-la', str(SITE)]), None)
    df = run([need('df'), '-P'])
    assert detect(df) == 'table'

def test_ls_laR_keeps_every_directory_heading():
    out = run([need('ls'), '-laR', str(SITE / 'pip' / '_internal')])
    r = check_table(out, None)
    headings = [l for l in out.decode().split('\n') if l.endswith(':') and ' ' not in l]
    assert len(headings) > 5 and all(h in r.output.decode().split('\n') for h in headings)


def test_ls_laR_shows_each_directorys_first_and_last_file():
    "A recursive listing: in every directory block with files, its first and last file rows (by this test's own reading: a row whose mode does not start with `d`) are shown, and every marker's count matches the rows it hides."
    out = run([need('ls'), '-laR', str(SITE / 'pip' / '_internal')])
    r = check_table(out, None)
    shown, blocks = set(r.output.decode().split('\n')), [b.split('\n') for b in out.decode().split('\n\n')]
    files = [[l for l in b if re.match(r'[-lps][rwxsStT-]{9}', l)] for b in blocks]
    assert sum(1 for f in files if f) > 5
    for f in files:
        if f: assert f[0] in shown and f[-1] in shown, (f[0], f[-1])


# ----------------------------------------------------------------------------- path lists
def test_find_is_a_path_listing_that_keeps_every_directory():
    out = run([need('find'), str(SITE / 'pip')])
    assert detect(out) == 'listing'
    r = compress(out)
    assert r.content_type == 'listing' and not r.passed_through
    paths = out.decode().split('\n')
    dirs = {os.path.dirname(p) for p in paths if p}
    shown = set(r.output.decode().split('\n'))
    assert [p for p in paths if p in dirs and p not in shown] == []
    markers = walk(out, r.output)
    for n, unit, facts, hidden in markers:
        assert unit == 'paths' and len(hidden) == n
        for k, v in constants(facts).items():
            if k == 'dir': assert all(os.path.dirname(h) == v for h in hidden)


# ----------------------------------------------------------------------------- binary
def test_an_executable_is_binary_and_never_echoed():
    exe = Path(need('ls')).resolve().read_bytes()
    assert detect(exe) == 'binary'
    r = compress(exe)
    assert r.content_type == 'binary' and not r.passed_through
    assert b'\x00' not in r.output and r.output.decode().startswith('… caveman: binary input not shown: ')
    assert f'{len(exe):,} bytes'.encode() in r.output


# ----------------------------------------------------------------------------- detection fixes
def test_git_log_stat_with_author_emails_is_not_html():
    out = run([need('git'), 'log', '--stat', '-n', '40'], cwd=ROOT)
    assert out.count(b'Author: ') >= 5 and re.search(rb'<[a-z]+@', out)
    assert detect(out) != 'html'

def test_a_failing_pytest_v_run_is_a_log(tmp_path):
    (tmp_path / 'test_inventory.py').write_text('''import pytest

class OutOfStock(Exception):
    pass

def reserve(stock, item, n):
    if stock.get(item, 0) < n:
        raise OutOfStock(f"{item}: wanted {n}, have {stock.get(item, 0)}")
    stock[item] -= n
    return stock

def test_reserve_apples():
    assert reserve({"apple": 3}, "apple", 2) == {"apple": 1}

def test_reserve_too_many():
    stock = {"pear": 1}
    result = reserve(stock, "pear", 5)
    assert result["pear"] == -4

def test_reserve_missing():
    assert reserve({}, "plum", 1) == {}
''')
    out = run([sys.executable, '-m', 'pytest', '-v', '-p', 'no:cacheprovider', 'test_inventory.py'], cwd=tmp_path)
    assert b'FAILED' in out and b'OutOfStock' in out
    assert detect(out) == 'log'

def test_grep_hits_that_mention_log_levels_are_search_results():
    for pattern in ('logger.info', 'warnings.warn'):
        out = b'\n'.join(run([need('grep'), '-rn', '--include=*.py', pattern, str(SITE)]).split(b'\n')[:80])
        assert out.count(b'\n') >= 20, pattern
        assert detect(out) == 'search-result', pattern

def test_rg_heading_output_is_search_results():
    out = run([need('rg'), '--heading', '-n', 'def ', str(SITE / 'pip' / '_internal' / 'utils')])
    assert detect(out) == 'search-result'
    out = run([need('rg'), '--heading', '-n', 'logger.info', str(SITE)])
    assert detect(b'\n'.join(out.split(b'\n')[:200])) == 'search-result'

@pytest.mark.slow
def test_a_pnpm_lockfile_is_config():
    "pnpm installed from the npm registry into .work, then `pnpm install --lockfile-only` on a small project."
    tool = WORK / 'pnpm'
    pnpm = tool / 'node_modules' / '.bin' / 'pnpm'
    if not pnpm.exists():
        tool.mkdir(parents=True, exist_ok=True)
        run([need('npm'), 'install', '--silent', '--no-audit', '--no-fund', '--prefix', str(tool), 'pnpm@9.15.9'])
    proj = WORK / 'pnpm-project'
    proj.mkdir(parents=True, exist_ok=True)
    (proj / 'package.json').write_text(json.dumps({'name': 'p', 'version': '1.0.0', 'dependencies': {'express': '4.21.2'}}))
    lock = proj / 'pnpm-lock.yaml'
    if not lock.exists(): run([str(pnpm), 'install', '--lockfile-only'], cwd=proj)
    data = lock.read_bytes()
    assert data.startswith(b'lockfileVersion:') and data.count(b'\n') > 100
    assert detect(data) == 'config'

def test_short_sectioned_ini_files_are_config(tmp_path):
    "A tox.ini of two sections, written by configparser itself, is INI though under 12 lines."
    import configparser
    cp = configparser.ConfigParser()
    cp['tox'] = {'envlist': 'py{311,312}'}
    cp['testenv:py{311,312}'] = {'deps': '\npytest\ncoverage', 'commands': 'pytest {posargs}'}
    with open(tmp_path / 'tox.ini', 'w') as f: cp.write(f)
    made = (tmp_path / 'tox.ini').read_bytes()
    assert len(made.strip().split(b'\n')) < 12
    assert detect(made) == 'config'


# ----------------------------------------------------------------------------- structure kept
def test_man_page_headings_survive():
    out = run([need('man'), '-P', 'cat', 'ls'])
    heads = [l for l in out.decode().split('\n') if re.fullmatch(r'[A-Z][A-Z ]+', l)]
    assert {'NAME', 'SYNOPSIS', 'DESCRIPTION'} <= set(heads), heads
    r = compress(out)
    assert not r.passed_through
    shown = set(r.output.decode().split('\n'))
    assert [h for h in heads if h not in shown] == []

def test_ini_section_headers_survive():
    conf = ''.join(f'[worker-{i}]\nhost = node{i}.internal\nport = {9000 + i}\nqueue = default\nretries = 3\n\n' for i in range(30))
    r = compress(conf.encode())
    assert r.content_type == 'config' and not r.passed_through
    assert [l for l in conf.split('\n') if l.startswith('[') and l not in r.output.decode().split('\n')] == []

def test_html_docs_count_what_they_leave_out(tmp_path):
    "pydoc's page for a module: the sections outside the main content are counted by a marker, not dropped silently."
    run([sys.executable, '-m', 'pydoc', '-w', 'argparse'], cwd=tmp_path)
    page = (tmp_path / 'argparse.html').read_bytes()
    r = compress(page)
    assert r.content_type == 'html' and not r.passed_through
    view = r.output.decode()
    import lxml.html
    doc = lxml.html.document_fromstring(page)
    names = [' '.join(t.text_content().split()) for t in doc.iter('strong') if t.text_content().strip()]
    missing = [n for n in names if n not in ' '.join(view.split())]
    assert not missing or re.search(r'… \d+ sections? elided \(caveman\) …', view), missing[:5]


# ----------------------------------------------------------------------------- code
def _npm_sources(package: str, suffix: str) -> list[bytes]:
    "Source files ending in `suffix` from the npm registry tarball of `package` (fetched with `npm pack` into .work once)."
    d = WORK / 'npm' / package
    if not d.exists():
        d.mkdir(parents=True)
        run([need('npm'), 'pack', '--silent', package], cwd=d)
    out = []
    for tgz in d.glob('*.tgz'):
        with tarfile.open(tgz) as t:
            out += [t.extractfile(m).read() for m in t.getmembers() if m.isfile() and m.name.endswith(suffix)]
    return out

def _first_glob(*patterns) -> list[bytes]:
    import glob
    for p in patterns:
        hits = sorted(h for h in glob.glob(os.path.expanduser(p), recursive=True) if os.path.getsize(h) > 2000)
        if hits: return [Path(hits[0]).read_bytes()]
    return []

@pytest.mark.slow
@pytest.mark.parametrize('language', ['c', 'cpp', 'rust', 'java'])
def test_c_cpp_rust_java_sources_get_an_outline(language):
    sources = {
        'c': lambda: _first_glob('/usr/share/doc/*/examples/*.c') or _npm_sources('utf-8-validate@5.0.10', '.c'),
        'cpp': lambda: _npm_sources('bcrypt@6.0.0', '.cc'),
        'rust': lambda: _first_glob('~/.cargo/registry/src/*/*/src/lib.rs', '/usr/share/cargo/registry/*/src/lib.rs', '~/.rustup/toolchains/*/share/doc/rust/html/**/*.rs'),
        'java': lambda: _npm_sources('cordova-plugin-device@3.0.0', '.java'),
    }[language]()
    assert sources, f'no {language} source on this machine'
    from caveman.compressors.code import detect_language
    src = max(sources, key=(lambda s: s.count(b'::')) if language == 'cpp' else len)   # the most C++-like of bcrypt's files
    assert detect(src) == 'code' and detect_language(src) == language
    r = compress(src)
    assert r.content_type == 'code' and not r.passed_through and b'caveman: body elided' in r.output
