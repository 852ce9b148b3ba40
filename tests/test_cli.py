"""The `caveman` command as a real process (SPEC §11, §13): every verb through the installed console script,
with the store in a temp dir. Checks the stream contract (data on stdout, one JSON line or nothing on stderr),
fail-closed TOON, the 64 MiB input cap, usage errors, and that handles are shared with `caveman-mcp`."""
import json, os, shutil, stat, subprocess

import pytest

from caveman import ccr
from caveman.corpus import KINDS, corpus_files, corpus_path
from caveman.detect import detect as detect_type, unwrap
from conftest import child_env

CAP = 64 * 1024 * 1024


def exe(name='caveman') -> str:
    path = shutil.which(name)
    if path is None: pytest.fail(f'{name} is not on PATH: run the tests through `make test` (it installs the package)')
    return path


@pytest.fixture
def env(tmp_path):
    "A process environment whose store lives under tmp_path (never ~/.caveman)."
    return child_env(CAVEMAN_CCR_DB=str(tmp_path / 'store' / 'ccr.db'), CAVEMAN_HOME=str(tmp_path / 'home'))


def cav(env, *args, input=b'', timeout=120):
    return subprocess.run([exe(), *args], input=input, capture_output=True, env=env, timeout=timeout)


def one_json_line(err: bytes) -> dict:
    assert err.endswith(b'\n') and err.count(b'\n') == 1, err
    return json.loads(err)


def error_of(r) -> dict:
    "A failed run: exit 1, nothing on stdout, one JSON error line on stderr."
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert r.stdout == b''
    e = one_json_line(r.stderr)
    assert e['error'].startswith('cave_') and e['message']
    return e


def store_count(env) -> int:
    if not os.path.exists(env['CAVEMAN_CCR_DB']): return 0
    with ccr.open_store(env['CAVEMAN_CCR_DB']) as s: return s.summary()['totals']['count']


# ------------------------------------------------------------------------------------------- compress / retrieve

@pytest.mark.parametrize('name', ['log_npm_install_verbose.log', 'json_github_list_issues.json', 'code_express_response_js.txt'])
def test_compress_then_retrieve(env, name):
    data = corpus_path(name).read_bytes()
    r = cav(env, 'compress', str(corpus_path(name)))
    assert r.returncode == 0
    rep = one_json_line(r.stderr)
    assert list(rep)[:6] == ['content_type', 'tokens_before', 'tokens_after', 'token_count_basis', 'ratio', 'basis']
    assert rep['basis'] == 'inferred' and b'verified' not in r.stderr
    assert 0 < rep['ratio'] <= 1 and rep['tokens_after'] < rep['tokens_before']
    assert rep['bytes_before'] == len(data) and rep['bytes_after'] == len(r.stdout) < len(data)
    assert r.stdout != data and rep['recovery_handle'] == ccr.handle_for(data)
    back = cav(env, 'retrieve', rep['recovery_handle'])
    assert (back.returncode, back.stdout, back.stderr) == (0, data, b'')


def test_compress_stdin_equals_file(env):
    path = corpus_path('log_pip_install_verbose.log')
    a = cav(env, 'compress', str(path))
    b = cav(env, 'compress', '-', input=path.read_bytes())
    c = cav(env, 'compress', input=path.read_bytes())
    assert a.stdout == b.stdout == c.stdout
    strip = lambda r: {k: v for k, v in one_json_line(r.stderr).items() if k != 'warnings'}
    assert strip(a) == strip(b) == strip(c)


def test_store_home_created_private(tmp_path, env):
    "With only CAVEMAN_HOME set, the store file is created there and the directory is 0700 (SPEC §4)."
    del env['CAVEMAN_CCR_DB']
    home = tmp_path / 'fresh' / 'home'
    env['CAVEMAN_HOME'] = str(home)
    r = cav(env, 'compress', str(corpus_path('json_github_list_issues.json')))
    assert r.returncode == 0 and (home / 'ccr.db').is_file()
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    h = one_json_line(r.stderr)['recovery_handle']
    assert cav(env, 'retrieve', h).stdout == corpus_path('json_github_list_issues.json').read_bytes()


def test_record_mode_and_pass_through(env):
    data = corpus_path('json_github_list_issues.json').read_bytes()
    r = cav(env, 'compress', '--mode', 'record', input=data)
    rep = one_json_line(r.stderr)
    assert (r.returncode, r.stdout, rep['ratio'], rep['tokens_after']) == (0, data, 0, rep['tokens_before'])
    assert 'recovery_handle' not in rep and 'method' not in rep
    small = b'not much to say\n'
    r = cav(env, 'compress', input=small)
    assert (r.stdout, one_json_line(r.stderr)['ratio']) == (small, 0)
    assert store_count(env) == 0   # nothing lossy was published, so nothing was stored


def test_forced_type_and_query(env):
    data = b'[' + b','.join(b'{"id":%d,"state":"ok","n":%d}' % (i, i * 7 % 13) for i in range(60)) + b']'
    r = cav(env, 'compress', '--type', 'toon', input=data)
    rep = one_json_line(r.stderr)
    assert (rep['content_type'], rep['method'], rep['lossless_to_model']) == ('toon', 'toon', True)
    assert r.stdout.startswith(b'[60]{id,state,n}:')
    r = cav(env, 'compress', '--query', 'state', str(corpus_path('json_github_list_issues.json')))
    assert r.returncode == 0 and one_json_line(r.stderr)['content_type'] == 'json'


def test_unreadable_store_passes_through(tmp_path, env):
    "A store that cannot be opened never costs the payload: it passes through and the report says why."
    env['CAVEMAN_CCR_DB'] = str(tmp_path / 'not-a-dir')
    (tmp_path / 'not-a-dir').mkdir()
    data = corpus_path('log_npm_install_verbose.log').read_bytes()
    r = cav(env, 'compress', input=data)
    rep = one_json_line(r.stderr)
    assert (r.returncode, r.stdout, rep['ratio']) == (0, data, 0)
    assert 'recovery_handle' not in rep and rep['warnings']


def test_html_report_written(tmp_path, env):
    out = tmp_path / 'r.html'
    r = cav(env, 'compress', '--html', str(out), str(corpus_path('log_npm_install_verbose.log')))
    rep = one_json_line(r.stderr)
    assert rep['html_report'] == str(out)
    page = out.read_text(encoding='utf-8')
    assert rep['recovery_handle'] in page and page.startswith('<!doctype html>')
    r = cav(env, 'compress', '--html', str(tmp_path / 'missing' / 'r.html'), input=b'x')
    assert error_of(r)['error'] == 'cave_report_unwritable'


def test_retrieve_spellings_query_and_errors(env):
    data = corpus_path('json_github_list_issues.json').read_bytes()
    h = one_json_line(cav(env, 'compress', input=data).stderr)['recovery_handle']
    for spelling in (h, f'<<ccr:{h}>>', f'ccr:{h}'):
        assert cav(env, 'retrieve', spelling).stdout == data
    assert cav(env, 'retrieve', h, '--query', '   ').stdout == data   # blank query: the exact original
    narrowed = cav(env, 'retrieve', h, '--query', 'issue 13 locked')
    assert narrowed.returncode == 0 and narrowed.stdout != data
    assert '… [caveman: non-adjacent] …'.encode() in narrowed.stdout
    assert error_of(cav(env, 'retrieve', 'ccr_' + 'f' * 32))['error'] == 'cave_unknown_handle'
    assert error_of(cav(env, 'retrieve', '<<ccr:>>'))['error'] in ('cave_invalid_arguments', 'cave_unknown_handle')


def test_retrieve_into_closed_pipe(env):
    "`caveman retrieve H | head -c 10`: the reader goes away early; no traceback on stderr."
    data = corpus_path('json_pip_inspect.json').read_bytes()
    h = one_json_line(cav(env, 'compress', input=data).stderr)['recovery_handle']
    r = subprocess.run(f'"{exe()}" retrieve {h} | head -c 10', shell=True, capture_output=True, env=env, timeout=60)
    assert r.stdout == data[:10] and b'Traceback' not in r.stderr


def test_handle_resolves_in_caveman_mcp(env):
    "A handle minted by the CLI is retrievable from a caveman-mcp process sharing the store (SPEC §4, §8)."
    data = corpus_path('log_npm_install_verbose.log').read_bytes()
    h = one_json_line(cav(env, 'compress', input=data).stderr)['recovery_handle']
    msgs = [{'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {'protocolVersion': '2024-11-05', 'capabilities': {}, 'clientInfo': {'name': 't', 'version': '0'}}},
            {'jsonrpc': '2.0', 'method': 'notifications/initialized'},
            {'jsonrpc': '2.0', 'id': 2, 'method': 'tools/call', 'params': {'name': 'caveman_retrieve', 'arguments': {'recovery_handle': h}}}]
    r = subprocess.run([exe('caveman-mcp')], input=''.join(json.dumps(m) + '\n' for m in msgs).encode(),
                       capture_output=True, env=env, timeout=120)
    replies = {m['id']: m for m in map(json.loads, r.stdout.splitlines())}
    assert replies[2]['result']['content'][0]['text'] == data.decode()


# ------------------------------------------------------------------------------------------- detect / stats

@pytest.mark.parametrize('kind', KINDS)
def test_detect_matches_engine(env, kind):
    path = corpus_files(kind)[0]
    r = cav(env, 'detect', str(path))
    assert (r.returncode, r.stderr) == (0, b'')
    assert r.stdout.decode() == detect_type(unwrap(path.read_bytes())[0]) + '\n'
    assert cav(env, 'detect', input=path.read_bytes()).stdout == r.stdout


def test_stats(env):
    r = cav(env, 'stats')
    s = json.loads(r.stdout)
    assert (r.returncode, s['totals']['count'], s['totals']['ratio'], s['basis']) == (0, 0, 0, 'inferred')
    made = []
    for name in ('log_npm_install_verbose.log', 'json_github_list_issues.json'):
        made.append(one_json_line(cav(env, 'compress', str(corpus_path(name))).stderr))
    s = json.loads(cav(env, 'stats').stdout)
    assert s['totals']['count'] == 2 and set(s['by_content_type']) == {'log', 'json'}
    assert s['totals']['tokens_before'] == sum(m['tokens_before'] for m in made)
    assert s['totals']['tokens_after'] == sum(m['tokens_after'] for m in made)


# ------------------------------------------------------------------------------------------- toon

def test_toon_round_trip_through_pipes(env):
    data = corpus_path('json_github_list_issues.json').read_bytes()
    enc = cav(env, 'toon', 'encode', input=data)
    assert enc.returncode == 0 and enc.stderr == b'' and enc.stdout.endswith(b'\n')
    assert len(enc.stdout) < len(data)
    dec = cav(env, 'toon', 'decode', input=enc.stdout)
    assert json.loads(dec.stdout) == json.loads(data)
    for d in ('tab', '|'):
        enc = cav(env, 'toon', 'encode', '--delimiter', d, '--indent', '4', input=data)
        assert json.loads(cav(env, 'toon', 'decode', '--indent', '4', input=enc.stdout).stdout) == json.loads(data)


@pytest.mark.parametrize('op,bad,code', [
    ('decode', b'items[3]: 1,2\n', 'cave_invalid_toon'),                  # declared length disagrees
    ('decode', b'a:\n   b: 1\n', 'cave_invalid_toon'),                    # indentation not a multiple of 2
    ('decode', b'{"a": 1}', 'cave_invalid_toon'),                         # JSON is not TOON: never echoed back
    ('decode', b'\xff\xfe a: 1', 'cave_invalid_toon'),                    # not UTF-8
    ('decode', b'a: "unterminated\n', 'cave_invalid_toon'),
    ('encode', b'{"a": 1} {"b": 2}', 'cave_invalid_json'),                # trailing content
    ('encode', b'{"a": NaN}', 'cave_invalid_json'),
    ('encode', b'{"a": 1, "a": 2}', 'cave_invalid_json'),                 # duplicate keys
    ('encode', b'', 'cave_invalid_json'),
])
def test_toon_fails_closed(env, op, bad, code):
    r = cav(env, 'toon', op, input=bad)
    e = error_of(r)
    assert e['error'] == code
    if len(bad) > 8: assert bad.decode('utf-8', 'replace') not in e['message']   # the input is never echoed


def test_toon_bad_options(env):
    assert error_of(cav(env, 'toon', 'encode', '--delimiter', ';', input=b'[1]'))['error'] == 'cave_invalid_arguments'
    assert cav(env, 'toon', 'sideways', input=b'[1]').returncode == 2


# ------------------------------------------------------------------------------------------- the 64 MiB cap

def test_stdin_over_cap_refused_before_anything(env):
    r = cav(env, 'compress', input=b'a' * (CAP + 1), timeout=300)
    assert error_of(r)['error'] == 'cave_input_too_large'
    assert store_count(env) == 0
    r = cav(env, 'toon', 'decode', input=b'a' * (CAP + 1), timeout=300)
    assert error_of(r)['error'] == 'cave_input_too_large'


def test_file_over_cap_refused(tmp_path, env):
    big = tmp_path / 'big.log'
    with open(big, 'wb') as f: f.truncate(CAP + 1)   # sparse: cheap to make
    assert error_of(cav(env, 'compress', str(big)))['error'] == 'cave_input_too_large'
    assert error_of(cav(env, 'detect', str(big)))['error'] == 'cave_input_too_large'


def test_exactly_cap_accepted(env):
    r = cav(env, 'detect', input=b'x' * (CAP - 1) + b'\n', timeout=300)
    assert (r.returncode, r.stderr) == (0, b'') and r.stdout.strip()


# ------------------------------------------------------------------------------------------- usage

@pytest.mark.parametrize('args', [(), ('frobnicate',), ('compress', '--mode', 'fast'), ('retrieve',), ('toon',), ('stats', 'extra')])
def test_usage_errors_exit_2(env, args):
    r = cav(env, *args)
    assert r.returncode == 2 and r.stdout == b'' and b'usage' in r.stderr.lower()


def test_help_and_version(env):
    r = cav(env, '--help')
    assert r.returncode == 0 and all(v in r.stdout for v in (b'compress', b'retrieve', b'detect', b'stats', b'toon'))
    r = cav(env, 'compress', '--help')
    assert r.returncode == 0 and b'--html' in r.stdout and b'--query' in r.stdout
    from caveman import __version__
    assert cav(env, 'version').stdout.decode().split() == ['caveman', __version__]


def test_missing_file(env, tmp_path):
    assert error_of(cav(env, 'compress', str(tmp_path / 'nope.json')))['error'] == 'cave_input_unreadable'


def test_binary_input_is_refused_not_echoed(tmp_path):
    "An executable piped to `caveman compress` is a clear error (exit 1, stdout empty), never echoed back as text."
    import sys as _sys
    exe = open(_sys.executable, 'rb').read()
    r = subprocess.run(['caveman', 'compress'], input=exe, capture_output=True, timeout=120,
                       env=child_env(CAVEMAN_CCR_DB=str(tmp_path / 'ccr.db')))
    assert (r.returncode, r.stdout) == (1, b'')
    assert json.loads(r.stderr)['error'] == 'cave_binary_input'


def test_unknown_type_is_a_usage_error_listing_the_types(tmp_path):
    r = subprocess.run(['caveman', 'compress', '--type', 'jsno'], input=b'{"a": 1}', capture_output=True, timeout=120,
                       env=child_env(CAVEMAN_CCR_DB=str(tmp_path / 'ccr.db')))
    assert (r.returncode, r.stdout) == (2, b'')
    assert b"unknown content type 'jsno'" in r.stderr and b'json' in r.stderr and b'listing' in r.stderr
