"""`caveman-shrink` as a subprocess (reference §8.2, SPEC §10, §13, §14.9): the stdin/stdout/stderr contract, exit
codes, the 32 MiB stdin cap, input that is not JSON refused (exit 1, as `lint`), the lint table and `--json`, recover, store failure."""
import json, os, re, shutil, stat, subprocess

import pytest

from caveman.corpus import corpus_path
from caveman.shrink import shrink, lint, MAX_INPUT_BYTES
from conftest import child_env

COMBINED = corpus_path('catalogs/mcp_combined_5_servers.json')
REPORT_KEYS = ['tokens_before', 'tokens_after', 'ratio', 'basis', 'content_type', 'recovery_handle']


def command() -> str:
    exe = shutil.which('caveman-shrink')
    if exe is None: pytest.fail('caveman-shrink is not on PATH: run the tests through `make test` (it installs the package)')
    return exe


@pytest.fixture
def env(tmp_path):
    "A private store file for the command (never ~/.caveman)."
    return child_env(CAVEMAN_CCR_DB=str(tmp_path / 'store' / 'ccr.db'), CAVEMAN_HOME=str(tmp_path / 'home'), HOME=str(tmp_path / 'userhome'))


def cli(*args, input=b'', env=None, timeout=120):
    return subprocess.run([command(), *args], input=input, capture_output=True, env=env, timeout=timeout)


def one_json_line(err: bytes) -> dict:
    "stderr must be exactly one newline-terminated line of valid JSON."
    assert err.endswith(b'\n') and err.count(b'\n') == 1, err[:500]
    return json.loads(err)


def test_shrink_contract(env):
    x = COMBINED.read_bytes()
    p = cli(input=x, env=env)
    assert p.returncode == 0
    report = one_json_line(p.stderr)
    assert list(report) == REPORT_KEYS
    assert (report['basis'], report['content_type']) == ('inferred', 'toolschema')
    want, r = shrink(x, ':memory:')
    assert p.stdout == want                                   # exactly the library's bytes, no added newline
    assert (report['tokens_before'], report['tokens_after'], report['ratio']) == (r.tokens_before, r.tokens_after, r.ratio)
    assert report['ratio'] >= 0.10
    assert os.path.exists(env['CAVEMAN_CCR_DB'])             # the original went to the configured store
    q = cli('shrink', input=x, env=env)                        # the explicit verb is the same command
    assert (q.returncode, q.stdout, one_json_line(q.stderr)) == (0, p.stdout, report)


def test_recover_in_another_process(env):
    x = COMBINED.read_bytes()
    handle = one_json_line(cli(input=x, env=env).stderr)['recovery_handle']
    p = cli('recover', handle, env=env)
    assert (p.returncode, p.stdout, p.stderr) == (0, x, b'')


def test_default_store_creates_home(tmp_path, env):
    "Without CAVEMAN_CCR_DB the shared store is $CAVEMAN_HOME/ccr.db, its directory created 0700."
    del env['CAVEMAN_CCR_DB']
    home = tmp_path / 'home'
    p = cli(input=COMBINED.read_bytes(), env=env)
    assert p.returncode == 0 and 'recovery_handle' in one_json_line(p.stderr)
    assert (home / 'ccr.db').is_file() and stat.S_IMODE(home.stat().st_mode) == 0o700
    assert cli('recover', json.loads(p.stderr)['recovery_handle'], env=env).stdout == COMBINED.read_bytes()


@pytest.mark.parametrize('bad', [b'{not a valid catalog', b'\xff\xfe\x00garbage', b'', b'\xef\xbb\xbf{"tools": []}',
                                 b'{"tools": []} {"tools": []}', b'[' * 100000 + b']' * 100000])
def test_input_that_is_not_json_is_an_error(env, bad, tmp_path):
    "Not one JSON value: exit 1, nothing on stdout, one JSON error line as `lint` writes it — never an echo that looks shrunk (issue 15)."
    p = cli(input=bad, env=env)
    assert (p.returncode, p.stdout) == (1, b'')
    err = one_json_line(p.stderr)
    assert err['error'] == 'cave_invalid_catalog' and err['message'].startswith('shrink stdin: not valid JSON')
    f = tmp_path / 'bad.json'
    f.write_bytes(bad)
    p = cli(str(f), env=env)
    assert (p.returncode, p.stdout, one_json_line(p.stderr)['error']) == (1, b'', 'cave_invalid_catalog')
    assert one_json_line(cli('lint', str(f), env=env).stderr)['error'] == 'cave_invalid_catalog'   # the same verdict as lint


@pytest.mark.parametrize('doc,why', [(b'{}', 'no named tools found'), (b'{"tools": []}', 'no named tools found'),
                                     (b'"tools"', 'unsupported catalog shape'), (b'[{"description": "no name"}]', 'no named tools found')])
def test_json_without_tools_passes_through_with_a_note(env, doc, why):
    "Valid JSON with no named tool: nothing to shrink, echoed (exit 0), and the report's note says why in lint's words."
    p = cli(input=doc, env=env)
    assert (p.returncode, p.stdout) == (0, doc)
    report = one_json_line(p.stderr)
    assert report['note'] == f'passed through: {why}' and report['ratio'] == 0 and 'recovery_handle' not in report


def test_not_smaller_passes_through(env):
    "A pretty catalog with nothing to drop is not 'shrunk' by minifying it."
    x = json.dumps({'tools': [{'name': 'ping', 'description': 'Replies pong.', 'inputSchema': {'type': 'object'}}]}, indent=4).encode()
    p = cli(input=x, env=env)
    assert (p.returncode, p.stdout) == (0, x)
    assert one_json_line(p.stderr)['ratio'] == 0


def test_stdin_cap(env):
    "Exactly 32 MiB is accepted (and passed through byte-identical); one byte more is refused with exit 1."
    assert MAX_INPUT_BYTES == 33554432
    exact = b'{}' + b' ' * (MAX_INPUT_BYTES - 2)
    p = cli(input=exact, env=env, timeout=300)
    assert p.returncode == 0 and p.stdout == exact
    assert one_json_line(p.stderr)['ratio'] == 0
    p = cli(input=exact + b' ', env=env, timeout=300)
    assert (p.returncode, p.stdout) == (1, b'')
    err = one_json_line(p.stderr)
    assert err == {'error': 'cave_input_too_large', 'message': f'stdin exceeds {MAX_INPUT_BYTES} bytes'}


@pytest.mark.parametrize('breakage', ['not_a_directory', 'bad_budget'])
def test_store_failure_passes_through(tmp_path, env, breakage):
    "The store cannot be opened: the input passes through on stdout, a valid JSON note on stderr, exit 0."
    if breakage == 'not_a_directory':
        (tmp_path / 'file').write_text('x')
        env['CAVEMAN_CCR_DB'] = str(tmp_path / 'file' / 'ccr.db')
    else:
        env['CAVEMAN_CCR_MAX_BYTES'] = 'lots'
    x = COMBINED.read_bytes()
    p = cli(input=x, env=env)
    assert (p.returncode, p.stdout) == (0, x)
    note = one_json_line(p.stderr)
    assert note['note'].startswith('passed through: ') and (note['ratio'], note['basis']) == (0, 'inferred')
    assert 'recovery_handle' not in note and note['tokens_after'] == note['tokens_before']


def test_lint_table(tmp_path, env):
    f = tmp_path / 'catalog.json'
    f.write_bytes(COMBINED.read_bytes())
    p = cli('lint', str(f), env=env)
    assert (p.returncode, p.stderr) == (0, b'')
    lines = p.stdout.decode().splitlines()
    rep = lint(COMBINED.read_bytes())
    assert len(lines) == len(rep.tools) + 3
    assert lines[0].split() == ['TOOL', 'BEFORE', 'AFTER', 'RATIO']
    row = re.compile(r'^(\S+) +(-?\d+) +(-?\d+) +(\d+\.\d)%')   # the envelope can be negative: tokens merge across a tool's edge
    ends = set()
    for line, tool in zip(lines[1:-2], rep.tools):
        m = row.match(line)
        assert m and (m[1], int(m[2]), int(m[3])) == (tool.name, tool.tokens_before, tool.tokens_after)
        assert m[4] == f'{100 * (tool.tokens_before - tool.tokens_after) / tool.tokens_before:.1f}'
        ends.add((m.end(2), m.end(3), m.end(4)))
    env_row, total = row.match(lines[-2]), row.match(lines[-1])
    assert env_row[1] == '(envelope)' and total[1] == 'TOTAL'
    # the rows add up to TOTAL, and TOTAL is what `caveman-shrink` reports for the same file (break test 4, item 14a)
    assert (int(total[2]), int(total[3])) == (sum(t.tokens_before for t in rep.tools) + int(env_row[2]), sum(t.tokens_after for t in rep.tools) + int(env_row[3]))
    shrunk = one_json_line(cli(str(f), env=env).stderr)
    assert (int(total[2]), int(total[3])) == (shrunk['tokens_before'], shrunk['tokens_after'])
    ends.add((total.end(2), total.end(3), total.end(4)))
    hdr = lines[0]
    ends.add((hdr.index('BEFORE') + 6, hdr.index('AFTER') + 5, hdr.index('RATIO') + 5 - 1))
    assert len(ends) == 1, ends                                # every column right-aligned at the same place
    assert lines[-1].endswith('  (basis: inferred)')


def test_lint_json(tmp_path, env):
    f = tmp_path / 'catalog.json'
    f.write_bytes(COMBINED.read_bytes())
    for args in (['lint', '--json', str(f)], ['lint', str(f), '--json'], ['--json', 'lint', str(f)]):
        p = cli(*args, env=env)
        assert (p.returncode, p.stderr, p.stdout.count(b'\n')) == (0, b'', 1)
        d = json.loads(p.stdout)
        assert d == lint(COMBINED.read_bytes()).to_dict()
        assert d['basis'] == 'inferred' and d['tokens_before'] == sum(t['tokens_before'] for t in d['tools']) + d['envelope']['tokens_before']
        assert list(d['tools'][0]) == ['name', 'tokens_before', 'tokens_after', 'ratio']


def test_lint_aligns_wide_names(tmp_path, env):
    "CJK and Hangul tool names take two terminal columns a character: the numbers still line up (display width, not characters)."
    import unicodedata
    width = lambda t: sum(2 if unicodedata.east_asian_width(c) in 'WF' else 0 if unicodedata.combining(c) else 1 for c in t)
    cat = {'tools': [{'name': n, 'description': 'Finds files. ' * 20, 'inputSchema': {'type': 'object', 'title': 'x'}}
                     for n in ['ファイル検索', '查询订单', '파일_검색_도구', 'search_issues', 'отправить_письмо', 'e\u0301tat']]}
    f = tmp_path / 'wide.json'
    f.write_text(json.dumps(cat, ensure_ascii=False), encoding='utf-8')
    p = cli('lint', str(f), env=env)
    assert p.returncode == 0
    lines = p.stdout.decode().splitlines()
    assert len({width(l) for l in lines[:-1]}) == 1, lines
    assert len({width(l[:l.index('%') + 1]) for l in lines[1:]}) == 1, lines


def test_lint_errors(tmp_path, env):
    (tmp_path / 'bad.json').write_bytes(b'{"tools": [')
    (tmp_path / 'empty.json').write_bytes(b'{"tools": []}')
    for path, code in [(tmp_path / 'missing.json', 'cave_read_failed'), (tmp_path, 'cave_read_failed'),
                       (tmp_path / 'bad.json', 'cave_invalid_catalog'), (tmp_path / 'empty.json', 'cave_invalid_catalog')]:
        p = cli('lint', str(path), env=env)
        assert (p.returncode, p.stdout) == (1, b'')
        assert one_json_line(p.stderr)['error'] == code


def test_recover_unknown_handle(env):
    p = cli('recover', 'ccr_deadbeef', env=env)
    assert (p.returncode, p.stdout) == (1, b'')
    err = one_json_line(p.stderr)
    assert err['error'] == 'cave_unknown_handle' and 'ccr_deadbeef' in err['message']


@pytest.mark.parametrize('args', [['frobnicate'], ['lint'], ['recover'], ['lint', 'a', 'b'], ['shrink', 'a', 'b'],
                                  ['--json'], ['recover', 'h', '--json'], ['--nope']])
def test_usage_errors(env, args):
    "An unknown verb, a missing or extra argument, or a misplaced flag: usage on stderr, nothing on stdout, exit 2."
    p = cli(*args, input=COMBINED.read_bytes(), env=env)
    assert (p.returncode, p.stdout) == (2, b'')
    assert p.stderr.startswith(b'usage: caveman-shrink')


@pytest.mark.parametrize('flag', ['--help', '-h', 'help'])
def test_help(env, flag):
    p = cli(flag, env=env)
    assert p.returncode == 0 and p.stdout.startswith(b'usage: caveman-shrink')
    for word in (b'lint', b'recover', b'--json', b'stdin'): assert word in p.stdout


def test_file_argument_works_like_stdin(env, tmp_path):
    "`caveman-shrink FILE` and `caveman-shrink shrink FILE` give the same view and report as `caveman-shrink < FILE`."
    piped = cli(input=COMBINED.read_bytes(), env=env)
    for args in ([str(COMBINED)], ['shrink', str(COMBINED)], ['-']):
        p = cli(*args, input=COMBINED.read_bytes() if args == ['-'] else b'', env=env)
        assert (p.returncode, p.stdout, one_json_line(p.stderr)) == (0, piped.stdout, one_json_line(piped.stderr))
    p = cli('shrink', str(tmp_path / 'missing.json'), env=env)
    assert (p.returncode, p.stdout, one_json_line(p.stderr)['error']) == (1, b'', 'cave_read_failed')


def test_lint_reads_stdin(env):
    by_file, by_stdin = cli('lint', '--json', str(COMBINED), env=env), cli('lint', '--json', '-', input=COMBINED.read_bytes(), env=env)
    assert by_stdin.returncode == 0 and json.loads(by_stdin.stdout) == json.loads(by_file.stdout)


def test_recover_accepts_every_handle_spelling(env):
    "The spellings `caveman retrieve` and `caveman_retrieve` accept: bare, marker, `ccr:`, `ccr://`, the bare hash in any case."
    h = one_json_line(cli(input=COMBINED.read_bytes(), env=env).stderr)['recovery_handle']
    for spelling in (h, f'<<ccr:{h}>>', f'ccr:{h}', f'ccr://{h}', h[4:], h[4:].upper(), f' {h}\n'):
        p = cli('recover', spelling, env=env)
        assert (p.returncode, p.stdout) == (0, COMBINED.read_bytes()), spelling


@pytest.mark.parametrize('flag', ['--version', '-V'])
def test_version(env, flag):
    import caveman
    p = cli(flag, env=env)
    assert (p.returncode, p.stdout, p.stderr) == (0, f'caveman-shrink {caveman.__version__}\n'.encode(), b'')


@pytest.mark.parametrize('doc', [COMBINED.read_bytes(), b'{"tools": []}', b'"[{\\"name\\": \\"x\\"}]"'], ids=['catalog', 'no tools', 'a string'])
def test_the_command_parses_the_catalog_once(monkeypatch, tmp_path, doc):
    "The JSON check, the shrink and the no-tools note share one parse (each parse of a 13 MB catalog costs about half a count)."
    import io
    from caveman import shrink as shrink_module, toolschema
    real, calls = toolschema.loads_typed, []
    def counting(data, *a, **k):
        calls.append(len(data)); return real(data, *a, **k)
    monkeypatch.setattr(shrink_module, 'loads_typed', counting)
    monkeypatch.setattr(toolschema, 'loads_typed', counting)
    path = tmp_path / 'catalog.json'
    path.write_bytes(doc)
    out, err = io.BytesIO(), io.BytesIO()
    assert shrink_module.run('shrink', str(path), stdout=out, stderr=err, store=str(tmp_path / 'ccr.db')) == 0
    assert len(calls) == 1, calls
    assert json.loads(err.getvalue())['content_type'] == 'toolschema' or 'note' in json.loads(err.getvalue())
