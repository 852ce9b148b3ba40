"""`caveman install claude-code` then `caveman uninstall claude-code` gives the user's files back byte for byte
(break test 7 row 05), through the installed console script: for every scope, plain, `--no-mcp` and `--gateway`,
over several starting states of the settings files — absent, empty, `{}`, the user's own content in odd layouts
(4 spaces, tabs, one line without a final newline, `\\u` escapes, Windows line endings) with other hooks and servers. The judge is a
snapshot of every file (path and bytes) and directory under the home, the project and the caveman home, taken
before the install and after the uninstall: they must be identical — files and directories install created
are gone, edited files are back as they were, no backup is left. Backups are never overwritten.
"""
import json, subprocess, sys
from pathlib import Path

import pytest
from conftest import child_env

CAVEMAN = Path(sys.executable).with_name('caveman')
PY = sys.executable


def snapshot(root: Path) -> dict:
    "Every directory (None) and file (its bytes) under `root`, by relative path."
    return {str(p.relative_to(root)): (None if p.is_dir() else p.read_bytes()) for p in sorted(root.rglob('*'))}


def run(env, cwd, *args) -> subprocess.CompletedProcess:
    r = subprocess.run([str(CAVEMAN), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return r


def files(scope: str, home: Path, proj: Path) -> tuple[Path, Path]:
    "(hook settings file, MCP file) of `scope`, as Claude Code documents them."
    return {'user': (home / '.claude' / 'settings.json', home / '.claude.json'),
            'project': (proj / '.claude' / 'settings.json', proj / '.mcp.json'),
            'local': (proj / '.claude' / 'settings.local.json', home / '.claude.json')}[scope]


def user_content(scope: str, proj: Path) -> tuple[str, str]:
    "A user's own hook settings and MCP file, in layouts caveman does not write itself."
    server = {'command': PY, 'args': ['-m', 'some_server'], 'env': {'K': 'caf\u00e9'}}   # servable: it can move behind the gateway
    settings = json.dumps({'model': 'opus', 'permissions': {'allow': ['Bash(ls:*)']},
                           'hooks': {'PostToolUse': [{'matcher': 'Edit', 'hooks': [{'type': 'command', 'command': 'prettier --write'}]}],
                                     'Stop': [{'hooks': [{'type': 'command', 'command': 'notify'}]}]}}, indent=4)  # escapes kept as \u
    if scope == 'local':
        mcp = {'numStartups': 7, 'projects': {str(proj): {'allowedTools': [], 'mcpServers': {'mine': server}}, '/elsewhere': {}}, 'userID': 'u'}
    else:
        mcp = {'mcpServers': {'mine': server, 'remote': {'type': 'sse', 'url': 'https://mcp.example.com/sse'}}, 'numStartups': 3}
    return settings + '\n', json.dumps(mcp, indent='\t')          # tabs, and no final newline


STATES = {
    'absent': None,
    'empty': lambda scope, proj: ('', ''),
    'braces': lambda scope, proj: ('{}', '{}\n'),
    'one line': lambda scope, proj: (json.dumps({'env': {'A': '1'}}), json.dumps({'mcpServers': {'x': {'command': 'x-mcp'}}})),
    'user content': user_content,
    'windows line endings': lambda scope, proj: tuple(t.replace('\n', '\r\n') for t in user_content(scope, proj)),
}


def bare_line_feeds(p: Path) -> int:
    "Line feeds in file `p` not preceded by a carriage return."
    data = p.read_bytes()
    return data.count(b'\n') - data.count(b'\r\n')


@pytest.mark.parametrize('flags', [[], ['--no-mcp'], ['--gateway']], ids=['plain', 'no-mcp', 'gateway'])
@pytest.mark.parametrize('scope', ['user', 'project', 'local'])
def test_install_then_uninstall_restores_every_byte(tmp_path, scope, flags):
    if not CAVEMAN.exists(): pytest.fail('the caveman console script is not installed: run through `make test`')
    for name, state in STATES.items():
        root = tmp_path / name.replace(' ', '_')
        home, proj, cv = root / 'home', root / 'project', root / 'cv'
        home.mkdir(parents=True); proj.mkdir()
        env = child_env(only=('PATH',), HOME=str(home), CAVEMAN_HOME=str(cv))
        hook_file, mcp_file = files(scope, home, proj)
        if state is not None:
            for p, text in zip((hook_file, mcp_file), state(scope, proj.resolve())):
                p.parent.mkdir(parents=True, exist_ok=True); p.write_text(text, encoding='utf-8')
        before = snapshot(root)
        run(env, proj, 'install', 'claude-code', '--scope', scope, *flags)
        assert snapshot(root) != before, f'{name}: install changed nothing'
        assert 'hook claude-code' in hook_file.read_text(), name
        if name == 'windows line endings':                 # the file keeps the user's line endings while caveman is in
            assert bare_line_feeds(hook_file) == 0 and b'\r\n' in hook_file.read_bytes(), hook_file.read_bytes()[:300]
        run(env, proj, 'uninstall', 'claude-code', '--scope', scope)
        after = snapshot(root)
        assert after == before, (f'{name}: after install + uninstall, added {sorted(set(after) - set(before))}, '
                                 f'removed {sorted(set(before) - set(after))}, changed {sorted(k for k in before if k in after and after[k] != before[k])}')


def test_backups_are_never_overwritten_and_a_later_edit_is_kept(tmp_path):
    "When the user changes the settings after the install, uninstall takes out only caveman's entries, in the file's own layout; the install's backup still holds the user's original bytes, and a second install adds a backup rather than overwriting the first."
    if not CAVEMAN.exists(): pytest.fail('the caveman console script is not installed: run through `make test`')
    home, proj = tmp_path / 'home', tmp_path / 'project'
    (home / '.claude').mkdir(parents=True); proj.mkdir()
    env = child_env(only=('PATH',), HOME=str(home), CAVEMAN_HOME=str(tmp_path / 'cv'))
    settings = home / '.claude' / 'settings.json'
    original = '{\n    "model": "opus",\n    "env": {"A": "1"}\n}\n'
    settings.write_text(original)
    bak = Path(f'{settings}.caveman.bak')
    run(env, proj, 'install', 'claude-code')
    assert bak.read_text() == original
    edited = json.loads(settings.read_text()); edited['theme'] = 'dark'           # the user changes a setting while caveman is in
    settings.write_text(json.dumps(edited, indent=4) + '\n')
    run(env, proj, 'uninstall', 'claude-code')
    left = settings.read_text()
    assert json.loads(left) == {**json.loads(original), 'theme': 'dark'} and 'hook' not in left
    assert left == json.dumps(json.loads(left), indent=4) + '\n'                    # the file's own 4-space layout
    assert bak.read_text() == original                                               # never overwritten
    run(env, proj, 'install', 'claude-code')
    assert bak.read_text() == original and Path(f'{settings}.caveman.bak.2').read_text() == left


@pytest.mark.parametrize('target_text', ['{"model": "opus"}\n', '{}\n'], ids=['content', 'empty'])
def test_a_settings_file_linked_from_dotfiles_is_written_through_the_link(tmp_path, target_text):
    "A user settings file that is a symbolic link into a dotfiles tree stays a link: install puts the hook in the link's target, uninstall takes it out again, and the target's bytes are as before (recheck of break test 7, N3: the link became a plain file)."
    if not CAVEMAN.exists(): pytest.fail('the caveman console script is not installed: run through `make test`')
    home, proj, dots = tmp_path / 'home', tmp_path / 'project', tmp_path / 'dotfiles'
    for d in (home / '.claude', proj, dots): d.mkdir(parents=True)
    target = dots / 'claude-settings.json'; target.write_text(target_text)
    link = home / '.claude' / 'settings.json'; link.symlink_to(target)
    env = child_env(only=('PATH',), HOME=str(home), CAVEMAN_HOME=str(tmp_path / 'cv'))
    run(env, proj, 'install', 'claude-code', '--scope', 'user')
    assert link.is_symlink() and 'hook claude-code' in target.read_text()
    run(env, proj, 'uninstall', 'claude-code', '--scope', 'user')
    assert link.is_symlink() and link.resolve() == target.resolve() and 'hook claude-code' not in target.read_text()
    assert json.loads(target.read_text()) == json.loads(target_text)
