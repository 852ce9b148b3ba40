"""`ls -l` names and link targets are values as written (break test 13 F11): a real directory, made now, of symbolic
links whose targets differ only by white space around them (a space, a tab, a no-break space, an ideographic space,
a leading space), listed by the real `ls -la`; no marker of the view claims one target for rows whose targets differ,
checked by the independent reader (`tests/_truth.py`, its own `ls` grammar)."""
import os, shutil, subprocess
import pytest
from caveman import ccr
from caveman.engine import Engine
from _truth import false_claims


@pytest.mark.skipif(not shutil.which('ls'), reason='no ls here')
def test_targets_that_differ_by_white_space_are_not_merged(tmp_path):
    d = tmp_path / 'links'; d.mkdir()
    odd = [' ', '\t', '\u00a0', '\u3000', '\u2003', '\u202f']
    n = 0
    for k, w in enumerate(odd):
        for i in range(14):
            n += 1
            os.symlink('libfoo.so' + w if i % 2 else 'libfoo.so', d / f'link{n:04d}')
        (d / f'link{n:04d}_note_{k}.log').write_text('x' * (k + 1))
    for i in range(14):
        n += 1
        os.symlink(' libfoo.so' if i % 2 else 'libfoo.so', d / f'link{n:04d}')
    out = subprocess.run(['ls', '-la', '--quoting-style=literal', str(d)], capture_output=True, timeout=30,
                         env={**os.environ, 'LC_ALL': 'C.UTF-8'}).stdout
    r = Engine(ccr.open_store(str(tmp_path / 's.db'))).compress(out)
    if r.output == out: pytest.skip(f'passed through ({r.content_type})')
    assert r.content_type in ('table', 'listing'), r.content_type
    assert false_claims(out, r.output, r.content_type) == []
