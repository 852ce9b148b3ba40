"""Issue 18: no notebook cell holds more than one exported definition without a reason written above it.

The check reads the notebooks with its own code (json + ast). A cell that exports two or more
functions or classes passes only when the markdown cell directly above it exists and names every
one of them, so the prose a reader meets says what the cell holds and why those pieces stay together.
A family may be named once by its prefix and a star (`_g_*` names `_g_exact_match`, `_g_contains`, …).
"""
import ast, json, re
from pathlib import Path

import pytest

NBS = Path(__file__).resolve().parents[1] / 'nbs'


def exported_cells(path: Path):
    "Yield (index, [definition names], markdown directly above or None) for each `#| export` code cell."
    cells = json.loads(path.read_text(encoding='utf-8'))['cells']
    for i, c in enumerate(cells):
        src = ''.join(c['source'])
        if c['cell_type'] != 'code' or not re.match(r'\s*#\|\s*export', src): continue
        body = ast.parse('\n'.join(l for l in src.splitlines() if not l.lstrip().startswith('#|'))).body
        names = [n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        above = cells[i - 1] if i else None
        md = ''.join(above['source']) if above is not None and above['cell_type'] == 'markdown' else None
        yield i, names, md


def named(name: str, md: str) -> bool:
    "Is `name` mentioned in `md`, itself or through a backticked `prefix*` family?"
    if re.search(rf'(?<![\w]){re.escape(name)}(?![\w])', md): return True
    return any(name.startswith(p) for p in re.findall(r'`([A-Za-z_][\w]*)\*`', md))


def test_named_checks_words_and_families():
    assert named('_g_contains', 'the graders (`_g_*`)') and named('Store', 'a `Store` keeps')
    assert not named('Store', 'a StoreError') and not named('_g_contains', 'the `_h_*` helpers')


@pytest.mark.parametrize('path', sorted(NBS.glob('*.ipynb')), ids=lambda p: p.name)
def test_multi_definition_cells_say_why(path):
    bad = []
    for i, names, md in exported_cells(path):
        if len(names) < 2: continue
        missing = names if md is None else [n for n in names if not named(n, md)]
        if missing: bad.append(f'cell {i}: {", ".join(missing)} not named in the markdown above ({"none" if md is None else "present"})')
    assert not bad, '\n'.join(bad)
