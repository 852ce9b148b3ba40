"""Layering (issue 18): nothing imports upward. Each module of `caveman` comes from one notebook, and the
notebooks' file names give the architecture's order (00_corpus … 70_evals, the order nbdev exports them in):
a module may import only modules from notebooks that sort before its own — at the top or inside a function,
absolute or relative. Read from the exported source with `ast`; nothing of caveman is imported."""
import ast, re
from pathlib import Path

from conftest import ROOT

PKG = ROOT / 'caveman'
SOURCE = re.compile(r'File to edit: [./]*nbs/(\S+?)\.ipynb')
# The one upward reference, by design: `ccr.open_store(url)` is the only door to a store, and for a
# postgresql:// URL it loads the opt-in PostgreSQL backend (02b, a `Store` subclass, so it must sit above
# the store it extends) on demand, inside the function. Nothing else may be added here without a reason.
OPT_IN_BACKENDS = {('caveman.ccr', 'caveman.ccr_postgres')}


def notebook_of() -> dict[str, str]:
    "{module name: notebook stem} for every exported module, from the header nbdev writes."
    out = {}
    for f in PKG.rglob('*.py'):
        m = SOURCE.search(f.read_text(encoding='utf-8')[:600])
        if m: out['.'.join(f.relative_to(ROOT).with_suffix('').parts)] = m.group(1)
    return out


def imported(path: Path, module: str) -> set[str]:
    "Every caveman module `path` imports, relative imports resolved (`from . import x` counts as module x when it is one)."
    package = module.rsplit('.', 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, ast.Import): out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                parts = package.split('.')
                base = '.'.join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            out.add(base)
            out |= {f'{base}.{a.name}' for a in node.names}
    return {m for m in out if m.startswith('caveman')}


def upward_imports() -> list[str]:
    nbs = notebook_of()
    bad = []
    for mod, nb in sorted(nbs.items()):
        path = ROOT / (mod.replace('.', '/') + '.py')
        for target in sorted(imported(path, mod)):
            if target in nbs and nbs[target] > nb and (mod, target) not in OPT_IN_BACKENDS:
                bad.append(f'{mod} ({nb}) imports {target} ({nbs[target]})')
    return bad


def test_every_module_has_a_notebook():
    nbs = notebook_of()
    assert len(nbs) > 30 and nbs['caveman.detect'] == '03_detect' and nbs['caveman.compressors.base'] == '10_compressors_base'


def test_the_checker_sees_an_upward_import(tmp_path):
    "The checker itself can fail: an import of a later notebook's module inside a function is found."
    f = tmp_path / 'x.py'
    f.write_text('def f():\n    from .compressors.base import crlf_majority\n    from caveman import engine\n')
    assert {'caveman.compressors.base', 'caveman.compressors.base.crlf_majority', 'caveman.engine'} <= imported(f, 'caveman.detect')


def test_nothing_imports_upward():
    bad = upward_imports()
    assert not bad, 'modules importing from a later notebook:\n' + '\n'.join(bad)


def test_no_method_is_a_module_name():
    "Methods added to a class after it (fastcore `@patch`) stay out of the module's `__all__`: no public name there takes `self`."
    leaks = []
    for f in sorted(PKG.rglob('*.py')):
        tree = ast.parse(f.read_text(encoding='utf-8'))
        exported = next((ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                         and any(getattr(t, 'id', '') == '__all__' for t in n.targets)), [])
        for n in tree.body:
            if isinstance(n, ast.FunctionDef) and n.name in exported and n.args.args and n.args.args[0].arg == 'self':
                leaks.append(f'{f.relative_to(ROOT)}: {n.name}')
    assert not leaks, 'methods exported as module functions (use @patch):\n' + '\n'.join(leaks)
