"""The agent session: ten realistic tool calls through the real Claude Code binary, with and without caveman.

A fake Messages API (tests/_fake_anthropic.py) plays the model with a fixed script of tool calls on this
machine — a verbose `pip install` of a local package, `git log -p`, a failing pytest run, `cat` of a large
JSON API page, `Read` of a large source file, `Grep` over site-packages, `ls -laR`, `ps aux`, `dpkg -l`,
`Glob` — through the real Claude Code binary (npm, pinned in tests/_claude_code.py), once in a project
where `caveman install claude-code --scope project` ran and once in a bare one. Everything the API receives
is recorded. Reported:

- o200k input tokens of every main-loop request (system prompt + tool definitions + messages, as JSON) and
  in total, side by side; and the tokens of the tool results alone;
- prompt-cache stability: every `tool_result` of an earlier request is byte-identical in every later one;
- retention: for each output, probes taken from the original by this file's own code (its first and last
  non-blank lines, and its error/failure lines) must be visible in what the model saw.

Anchors: upstream's wrap benchmark, 33.2% fewer input tokens over six agent tasks; headroom's 6.7%.
Target: >= 40% fewer input tokens.
"""
import json, os, re, shutil, subprocess, sys, tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / 'tests'))

from _fake_anthropic import FakeAnthropic, tool_use, tool_results, result_text   # noqa: E402
from _claude_code import claude_binary, host_env, run_claude                      # noqa: E402

from caveman.corpus import corpus_path
from caveman import ccr
from caveman.engine import Engine
from caveman.tokens import count_tokens

TOOLS = 'Bash,Read,Grep,Glob,mcp__caveman__caveman_retrieve'
HANDLE = re.compile(r'recovery_handle="(ccr_[0-9a-f]{32})"')
SITE = Path(next(p for p in sys.path if p.endswith('site-packages')))


def make_package(where: Path) -> Path:
    "A small local Python package (40 modules) to pip-install verbosely."
    pkg = where / 'benchpkg'
    (pkg / 'benchpkg').mkdir(parents=True)
    (pkg / 'pyproject.toml').write_text('[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
                                        '[project]\nname = "benchpkg"\nversion = "1.0.0"\n\n[tool.setuptools]\npackages = ["benchpkg"]\n')
    for i in range(40): (pkg / 'benchpkg' / f'mod_{i:02d}.py').write_text(f'def f{i}(x):\n    return x + {i}\n')
    (pkg / 'benchpkg' / '__init__.py').write_text('')
    return pkg


def make_failing_tests(where: Path) -> Path:
    "A pytest file of 80 cases, four of which fail with assertion diffs."
    f = where / 'test_orders.py'
    f.write_text('import pytest\n\n'
                 'TOTALS = {i: i * 3 for i in range(80)}\n\n'
                 '@pytest.mark.parametrize("order_id", range(80))\n'
                 'def test_order_total(order_id):\n'
                 '    expected = order_id * 3 + (1 if order_id in (7, 23, 51, 66) else 0)\n'
                 '    assert TOTALS[order_id] == expected, f"order {order_id}: total mismatch"\n')
    return f


GIT_LOG_AT = 'c06ac5e'   # a fixed commit of this repository, so `git log -p` shows the same six commits in every run


def git_log_rev() -> str:
    "`GIT_LOG_AT` when this clone has it, else HEAD (a shallow clone)."
    r = subprocess.run(['git', '-C', str(ROOT), 'cat-file', '-e', f'{GIT_LOG_AT}^{{commit}}'], capture_output=True, timeout=60)
    return GIT_LOG_AT if r.returncode == 0 else 'HEAD'


def script(project: Path, work: Path) -> list:
    py = sys.executable
    return [
        ('pip install -v (local package)', 'Bash', {'command': f'{py} -m pip install -v --no-index --no-deps --no-build-isolation '
                                                    f'--target {work}/target {work}/benchpkg 2>&1'}),
        ('git log -p', 'Bash', {'command': f'git -C {ROOT} log -p -6 --no-color {git_log_rev()}'}),
        ('failing pytest run', 'Bash', {'command': f'cd {work} && {py} -m pytest -v -p no:cacheprovider test_orders.py 2>&1; true'}),
        ('cat JSON API page', 'Bash', {'command': f'cat {corpus_path("json_github_list_issues.json")}'}),
        ('Read source file', 'Read', {'file_path': str(ROOT / 'caveman' / 'compressors' / 'base.py')}),
        ('Grep site-packages', 'Grep', {'pattern': 'def __init__', 'path': str(SITE / 'fastcore'), 'output_mode': 'content', '-n': True}),
        ('ls -laR', 'Bash', {'command': f'ls -laR {SITE / "mcp"}'}),
        ('ps aux', 'Bash', {'command': 'ps aux'}),
        ('dpkg -l', 'Bash', {'command': 'dpkg -l'}),
        ('Glob site-packages', 'Glob', {'pattern': '**/*.py', 'path': str(SITE / 'IPython')}),
    ]


def probes(text: str) -> list[str]:
    "Facts a faithful view must show, taken from the original by this file's own rules: the first and last non-blank lines and every line reporting a failure or error (at most 10)."
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    if not lines: return []
    bad = [l for l in lines if re.search(r'\b(FAILED|ERROR|Error|error:|failed)\b', l)][:10]
    return list(dict.fromkeys([lines[0], lines[-1], *bad]))


def visible(probe: str, seen: str) -> bool:
    "A probe is visible when its text appears in what the model saw (Read's line-number gutter ignored)."
    return probe in seen or probe in re.sub(r'(?m)^\s*\d+\t', '', seen)


def request_tokens(body: dict) -> int:
    return count_tokens(json.dumps({k: body.get(k) for k in ('system', 'tools', 'messages')}, ensure_ascii=False))


def session(claude: str, with_caveman: bool, steps: list, tmp: Path) -> dict:
    project, home = tmp / 'project', tmp / 'home'
    project.mkdir(parents=True); home.mkdir()
    env = host_env(home)
    if with_caveman:
        exe = Path(sys.executable).with_name('caveman')
        r = subprocess.run([str(exe), 'install', 'claude-code', '--scope', 'project'], cwd=project, env=env,
                           capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stderr
    ids = [f'toolu_{i:02d}' for i in range(len(steps))]
    with FakeAnthropic([[tool_use(tool, inp, id=i)] for i, (_, tool, inp) in zip(ids, steps)]) as api:
        r = run_claude(claude, project, {**env, **api.env()}, TOOLS)
        assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
        reqs = api.main_requests()
    seen = {b['tool_use_id']: b for b in tool_results(reqs[-1])}
    key = lambda b: (result_text(b), bool(b.get('is_error')))     # the content; cache_control markers move between requests
    stable = all(key(b) == key(later[b['tool_use_id']])
                 for k, req in enumerate(reqs) for b in tool_results(req)
                 for later in ({x['tool_use_id']: x for x in tool_results(r2)} for r2 in reqs[k + 1:]))
    results = {i: result_text(seen[i]) for i in ids if i in seen}
    originals = {}
    for i, t in results.items():       # what the tool really printed: the stored original behind a view's handle
        m = HANDLE.search(t)
        if m:
            r = subprocess.run([str(Path(sys.executable).with_name('caveman')), 'retrieve', m.group(1)], env=env,
                               capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
            originals[i] = r.stdout.decode('utf-8', 'replace')
    return {'requests': [request_tokens(b) for b in reqs], 'bodies': reqs, 'results': results, 'originals': originals,
            'stable': stable, 'tools': len(reqs[-1].get('tools', []))}


def bash_original(inp: dict) -> str:
    r = subprocess.run(inp['command'], shell=True, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    return r.stdout + r.stderr


def run() -> str:
    claude = claude_binary()
    tmp = Path(tempfile.mkdtemp(prefix='bench-agent-'))
    try:
        work = tmp / 'work'; work.mkdir()
        make_package(work); make_failing_tests(work)
        steps = script(tmp, work)
        bare = session(claude, False, steps, tmp / 'bare')
        shutil.rmtree(work / 'target', ignore_errors=True)
        cave = session(claude, True, steps, tmp / 'caveman')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ids = [f'toolu_{i:02d}' for i in range(len(steps))]
    rows, kept, kept_bare, total_probes = [], 0, 0, 0
    for i, (name, tool, _) in enumerate(steps):
        a, b = bare['results'].get(ids[i], ''), cave['results'].get(ids[i], '')
        # probes come from the full original: behind the view's handle, else the untouched result itself
        ps = probes(cave['originals'].get(ids[i]) or (a if tool != 'Bash' or 'persisted-output>' not in a else b))
        ok, ok_bare = sum(visible(p, b) for p in ps), sum(visible(p, a) for p in ps)
        kept += ok; kept_bare += ok_bare; total_probes += len(ps)
        ta, tb = count_tokens(a), count_tokens(b)
        whole = cave['originals'].get(ids[i]) or (a if 'persisted-output>' not in a else '')
        kind = Engine(ccr.open_store(':memory:')).detect(whole.encode('utf-8', 'surrogatepass')) if whole else '?'
        sent = sum(1 for r in bare['bodies'] if any(x['tool_use_id'] == ids[i] for x in tool_results(r)))
        rows.append(f'| {i + 1} | {name} ({tool}) | {count_tokens(whole):,} | {kind} | {ta:,} | {tb:,} | {(ta - tb) / ta if ta else 0:.1%} '
                    f'| {sent} | {ok_bare}/{len(ps)} | {ok}/{len(ps)} |')
    req_rows = [f'| {k + 1} | {x:,} | {y:,} | {(x - y) / x:.1%} |' for k, (x, y) in enumerate(zip(bare['requests'], cave['requests']))]
    tb, tc = sum(bare['requests']), sum(cave['requests'])
    full = [i for i in ids if 'persisted-output>' not in bare['results'].get(i, '')]   # calls whose whole output the bare model saw
    fb, fc = sum(count_tokens(bare['results'].get(i, '')) for i in full), sum(count_tokens(cave['results'].get(i, '')) for i in full)
    fixed, fixed_cave, n = bare['requests'][0], cave['requests'][0], len(bare['requests'])
    floor = (tb - fixed_cave * n) / tb     # the saving if every tool result cost nothing: the fixed prompt bounds it
    rb, rc = sum(count_tokens(t) for t in bare['results'].values()), sum(count_tokens(t) for t in cave['results'].values())
    resent = lambda s: sum(count_tokens(result_text(b)) for r in s['bodies'] for b in tool_results(r))   # every result, as often as it is sent
    wc = resent(cave)
    need = 0.6 * tb - (tc - wc)          # what all tool results, counted each time they are sent, may cost for 40% fewer in total
    return '\n'.join([
        '## agent: a ten-call session through the real Claude Code binary',
        '',
        f'Claude Code {__import__("_claude_code").VERSION}, offline against a fake Messages API that scripts ten tool calls; '
        'once bare, once after `caveman install claude-code --scope project` (hook with recovery + caveman-mcp). '
        'Input tokens are o200k counts of each main-loop request body (system + tool definitions + messages). '
        'The caveman session also carries, in every request, the one tool its retrieve-only MCP server lists (`caveman_retrieve`).',
        '',
        f'**Total input tokens: {tb:,} bare -> {tc:,} with caveman ({(tb - tc) / tb:.1%} fewer; target >= 40%; '
        'anchors: upstream wrap 33.2%, headroom 6.7%).** Tool results alone, as last sent: '
        f'{rb:,} -> {rc:,} ({(rb - rc) / rb:.1%} fewer); on the {len(full)} calls whose whole output the bare model saw '
        f'(no 30,000-character cut): {fb:,} -> {fc:,} ({(fb - fc) / fb:.1%} fewer). The first request, before any tool '
        f'output, is {fixed:,} tokens of system prompt and tool definitions ({fixed_cave:,} with caveman_retrieve), sent again in '
        f'every one of the {n} requests: {fixed * n:,} of the {tb:,} the bare session sends ({fixed * n / tb:.0%}) are fixed. So even a '
        f'hook that turned every tool result into nothing would save at most {floor:.1%} here; the tool results are what caveman can '
        f'change. Counted every time they are sent, caveman\'s tool results cost {wc:,} tokens of its {tc:,}; for 40% fewer in total they '
        f'would have to cost at most {max(0, need):,.0f} ({1 - max(0, need) / wc:.0%} less than now)' +
        (', with every other byte of every request unchanged.' if need > 0 else ': out of reach even with empty tool results.'),
        '',
        f'Prompt-cache stability (every earlier tool_result byte-identical in every later request): bare {"yes" if bare["stable"] else "NO"}, '
        f'caveman {"yes" if cave["stable"] else "NO"}. Retention probes visible: bare {kept_bare}/{total_probes}, with caveman {kept}/{total_probes} '
        '(first and last non-blank lines and failure/error lines of each full original output). Claude Code itself '
        'shows a Bash output over 30,000 characters only as a 2 KB preview of a file (`<persisted-output>`): that preview '
        'is what the bare session sends; caveman sends a view of the whole output instead.',
        '',
        'Per call: the whole original output (o200k tokens; read back through the view\'s handle where the bare model saw only a '
        'preview), the content type caveman detects in it, the tool_result tokens each session sent, and in how many requests that '
        'tool_result is sent again (each later request repeats every earlier result).',
        '',
        '| # | call | whole output, tokens | detected as | result tokens, bare | with caveman | saved | sent in requests | probes visible, bare | with caveman |',
        '|---|---|---|---|---|---|---|---|---|---|', *rows,
        '',
        '| request | input tokens, bare | with caveman | saved |', '|---|---|---|---|', *req_rows,
        f'| total | {tb:,} | {tc:,} | {(tb - tc) / tb:.1%} |',
    ])


if __name__ == '__main__': print(run())
