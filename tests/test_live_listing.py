"""`ls -l` listings captured on this machine now, through the real `Engine`: every fact a marker states names
an `ls` field by its meaning (and `dpkg -l`'s markers its header's column names) (mode, links, owner, group, size or major/minor, month/day/time|year or
date/time/zone, name, target) — never a column position `cN` — and holds of the original by the
independent checker (tests/_truth.py, which reads `ls` rows with its own code)."""
import os, re, shutil, subprocess, sys
from pathlib import Path

import pytest
import _truth

from caveman import ccr
from caveman.engine import Engine

SITE = Path(next(p for p in sys.path if p.endswith('site-packages')))
COMMANDS = {     # full-iso dates make the detector call it a log: that one is compressed as the table it is (type='table')
    'devices': ['ls', '-laR', '/dev'],
    'full_iso': ['ls', '-la', '--time-style=full-iso', str(SITE)],
    'years': ['ls', '-laR', str(Path(os.__file__).parent / 'json'), str(Path(os.__file__).parent / 'email')],
    'recursive': ['ls', '-laR', str(SITE / 'mcp')],
}
FIELD = re.compile(r'(?:^|[;:] |all |range | )([A-Za-z_][A-Za-z0-9_@-]*)(?:=|: )')


def markers(view: str) -> list[str]:
    return [l for l in view.splitlines() if re.fullmatch(r'… \d+ rows? elided \(caveman\).*…', l)]


@pytest.mark.parametrize('name', sorted(COMMANDS))
def test_ls_markers_name_fields_by_meaning(name):
    data = subprocess.run(COMMANDS[name], capture_output=True, timeout=120, stdin=subprocess.DEVNULL).stdout
    if len(data) < 2048: pytest.skip(f'{COMMANDS[name]} printed under 2 KB on this machine')
    r = Engine(ccr.open_store(':memory:')).compress(data, type='table' if name == 'full_iso' else '')
    view = r.output.decode()
    ms = markers(view)
    if r.content_type != 'table' or not ms: pytest.skip(f'{name}: not compressed as a table here ({r.content_type})')
    fields = {f for m in ms for f in FIELD.findall(m.split('elided (caveman)', 1)[1])}
    assert fields and not [f for f in fields if re.fullmatch(r'c\d+(@\d+)?', f)], (name, ms[:3])
    assert fields <= set(_truth.LS_NAMES), (name, fields - set(_truth.LS_NAMES))
    assert _truth.false_claims(data.decode(), view, 'table') == [], name


def test_dpkg_markers_name_the_header_columns():
    "`dpkg -l`'s header (`||/ Name Version Architecture Description`) does not line up with its columns; the markers still name them."
    if shutil.which('dpkg') is None: pytest.skip('no dpkg on this machine')
    data = subprocess.run(['dpkg', '-l'], capture_output=True, timeout=120, stdin=subprocess.DEVNULL).stdout
    r = Engine(ccr.open_store(':memory:')).compress(data)
    ms = markers(r.output.decode())
    if len(ms) < 2: pytest.skip('too few packages here for elided runs')
    fields = {f for m in ms for f in FIELD.findall(m.split('elided (caveman)', 1)[1])}
    assert {'Version', 'Architecture'} & fields and not fields & {'c2', 'c3', 'c4', 'c5'}, ms[:3]
    assert _truth.false_claims(data.decode(), r.output.decode(), 'table') == []
