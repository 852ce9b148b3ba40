"""The HTML report of `caveman compress --html` (SPEC §11, §12): self-contained, and what it shows survives a real
browser. The page is made by the console script on a real corpus log, checked as HTML (no external
reference of any kind, the handle, one highlighted marker per elided run), then rendered by headless
Chromium (Debian's `chromium`, installed by the session fixture when missing) to a PNG whose pixels must
show the elision highlight on both sides of the side-by-side view."""
import json, os, re, shutil, subprocess
from html.parser import HTMLParser

import pytest
from PIL import Image

from caveman.corpus import corpus_path
from conftest import chromium_args, child_env
from caveman.report import HIGHLIGHT, align

WIDTH, HEIGHT = 1400, 1600


def screenshot(chromium: str, page, png, tmp_path) -> Image.Image:
    args = chromium_args(chromium, tmp_path) + [f'--screenshot={png}', f'--window-size={WIDTH},{HEIGHT}', page.as_uri()]
    r = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, timeout=180)
    assert r.returncode == 0 and png.exists(), r.stderr.decode(errors='replace')[-2000:]
    return Image.open(png).convert('RGB')


class Refs(HTMLParser):
    def __init__(self):
        super().__init__(); self.refs, self.tags, self.marks = [], set(), 0
    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        a = dict(attrs)
        self.refs += [v for k, v in attrs if k in ('src', 'href', 'action', 'srcset', 'poster', 'data', 'background') and v]
        if tag == 'mark' and 'cv-mark' in (a.get('class') or ''): self.marks += 1


@pytest.mark.slow
def test_report_renders_highlights_and_handle(chromium, tmp_path):
    exe = shutil.which('caveman')
    if exe is None: pytest.fail('caveman is not on PATH: run the tests through `make test`')
    src = corpus_path('log_npm_install_verbose.log')
    page = tmp_path / 'report.html'
    env = child_env(CAVEMAN_CCR_DB=str(tmp_path / 'store' / 'ccr.db'), CAVEMAN_HOME=str(tmp_path / 'home'))
    r = subprocess.run([exe, 'compress', '--html', str(page), str(src)], capture_output=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stderr)
    handle = report['recovery_handle']

    html = page.read_text(encoding='utf-8')
    parsed = Refs(); parsed.feed(html)
    assert all(ref.startswith('#') for ref in parsed.refs), parsed.refs          # nothing outside the page
    assert not parsed.tags & {'script', 'link', 'img', 'iframe', 'object', 'embed', 'base'}
    assert '@import' not in html and 'url(' not in html
    assert handle in html and f'caveman retrieve {handle}' in html
    n_elided = len(align(src.read_bytes(), r.stdout, 'log').elided)
    assert n_elided > 0 and parsed.marks == n_elided

    img = screenshot(chromium, page, tmp_path / 'report.png', tmp_path)
    assert img.size == (WIDTH, HEIGHT)
    want = tuple(int(HIGHLIGHT[i:i + 2], 16) for i in (1, 3, 5))
    w, h = img.size
    px = img.load()
    left = sum(px[x, y] == want for y in range(0, h, 2) for x in range(0, w // 2, 2))
    right = sum(px[x, y] == want for y in range(0, h, 2) for x in range(w // 2, w, 2))
    # the folded originals (left) and the markers (right) are painted in the highlight colour
    assert left > 2000 and right > 2000, (left, right)
    assert len(img.getcolors(maxcolors=1 << 16) or range(1 << 16)) > 50   # text was drawn, not a blank page
    shutil.copy(tmp_path / 'report.png', os.environ.get('CAVEMAN_REPORT_PNG', tmp_path / 'kept.png'))
