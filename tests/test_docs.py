"""The notebooks as documentation (issue 18): `make docs` executes every notebook and writes a static site with
the outputs the code really gave; the README is nbs/index.ipynb executed and written as Markdown. The site is
opened in headless Chromium (Debian's `chromium`, the `chromium` fixture): its DOM must hold the executed outputs
(a compressed view with its marker, the marker's checked claims, a byte-exact retrieve) and its pixels the
output blocks' rule."""
import json, re, subprocess, sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from conftest import ROOT, chromium_args

NBDOCS = ROOT / 'docs' / 'nbdocs.py'
OUTPUT_RULE = (0x88, 0xAA, 0xAA)     # the left rule of every output block (docs/nbdocs.py CSS: #8aa)


def nbdocs(*args, timeout=1800) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(NBDOCS), *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)


class Outputs(HTMLParser):
    "The text inside each `<div class=\"output\">` of a page, and every link in order."
    def __init__(self):
        super().__init__(); self.outputs, self.links, self._depth = [], [], 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'a' and a.get('href'): self.links.append(a['href'])
        if tag == 'div':
            if self._depth: self._depth += 1
            elif a.get('class') == 'output': self._depth = 1; self.outputs.append('')
    def handle_endtag(self, tag):
        if tag == 'div' and self._depth: self._depth -= 1
    def handle_data(self, data):
        if self._depth: self.outputs[-1] += data


def parsed(html: str) -> Outputs:
    p = Outputs(); p.feed(html); return p


def longest_rule_run(img) -> int:
    "The longest vertical run of output-rule-coloured pixels in any column of `img` (colour management and anti-aliasing shift a rule's pixels a little)."
    img = img.convert('RGB'); w, h = img.size; px = img.load(); best = 0
    near = lambda p: all(abs(a - b) <= 12 for a, b in zip(p, OUTPUT_RULE))
    for x in range(w):
        run = 0
        for y in range(h):
            run = run + 1 if near(px[x, y]) else 0
            best = max(best, run)
    return best


def test_longest_rule_run_sees_a_line_not_scattered_pixels():
    from PIL import ImageDraw
    img = Image.new('RGB', (60, 80), 'white'); d = ImageDraw.Draw(img)
    for k in range(40): d.point((k, 2 * k), fill=OUTPUT_RULE)      # 40 scattered pixels: no line
    assert longest_rule_run(img) < 20
    d.line([(50, 10), (50, 60)], fill=OUTPUT_RULE, width=3)          # an output block's left rule
    assert longest_rule_run(img) >= 50


def test_readme_is_index_executed():
    "README.md is exactly what nbs/index.ipynb gives when executed and written as Markdown (`make readme`)."
    out = Path(__import__('tempfile').mkdtemp()) / 'README.md'
    r = nbdocs('readme', out, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert out.read_text() == (ROOT / 'README.md').read_text(), 'README.md drifted from nbs/index.ipynb: run `make readme`'
    text = out.read_text()
    assert 'make demo' in text and 'make test' in text            # the README's two set-up commands
    assert '"__caveman_elided__":19' in text and "('locked=false', True)" in text


def test_a_failing_cell_fails_the_build(tmp_path):
    "An execution error stops the build with exit status 1 and the notebook's traceback on stderr."
    nb = {'cells': [{'cell_type': 'markdown', 'id': 'a1', 'metadata': {}, 'source': '# broken\n\n> fails on purpose'},
                    {'cell_type': 'code', 'id': 'a2', 'metadata': {}, 'outputs': [], 'execution_count': None,
                     'source': 'x = 1\nprint("before")'},
                    {'cell_type': 'code', 'id': 'a3', 'metadata': {}, 'outputs': [], 'execution_count': None,
                     'source': 'raise RuntimeError("boom in a cell")'}],
          'metadata': {'kernelspec': {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}},
          'nbformat': 4, 'nbformat_minor': 5}
    path = tmp_path / '99_broken.ipynb'
    path.write_text(json.dumps(nb))
    r = nbdocs('site', tmp_path / 'site', path, timeout=600)
    assert r.returncode == 1 and 'boom in a cell' in r.stderr and '1 failed' in r.stdout
    page = (tmp_path / 'site' / '99_broken.html').read_text()
    assert 'before' in ''.join(parsed(page).outputs) and 'Execution failed' in page


@pytest.mark.slow
def test_docs_site_builds_and_renders_with_outputs(chromium, tmp_path):
    "`make docs`: every notebook runs without error; the contents page lists them in architecture order; Chromium shows the outputs."
    site = tmp_path / 'site'
    r = nbdocs('site', site)
    assert r.returncode == 0, (r.stdout + r.stderr)[-5000:]
    names = sorted(p.stem for p in (ROOT / 'nbs').glob('*.ipynb') if p.stem != 'index' and not p.name.startswith('_'))
    contents = parsed((site / 'index.html').read_text())
    listed = [l[:-5] for l in contents.links if l not in ('index.html', 'front.html')]
    assert listed == names and 'front.html' in contents.links
    for name in names: assert (site / f'{name}.html').stat().st_size > 1000, name

    def dom(page: str) -> Outputs:
        "The page as Chromium built it (--dump-dom), parsed."
        r = subprocess.run(chromium_args(chromium, tmp_path) + ['--dump-dom', (site / page).as_uri()],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
        assert r.returncode == 0 and '</html>' in r.stdout, r.stderr[-2000:]
        return parsed(r.stdout)

    front = '\n'.join(dom('front.html').outputs)
    assert '"__caveman_elided__":19' in front                          # the compressed view, its marker
    assert "('locked=false', True)" in front and "('comments=0..3', True)" in front   # the marker's claims, checked
    assert re.search(r"\(9522, b'\[\\n  \{", front)                     # the retrieve: all 9,522 bytes back
    report = dom('62_report.html').outputs
    assert report and any('__caveman_elided__' in o or 'elided' in o for o in report)

    # A screenshot of the notebook page whose first output sits nearest the top of its HTML: the output block's left
    # rule (3 px of #8aa) must be painted as a vertical line, i.e. some pixel column holds a run of at least 20
    # rule-coloured pixels (scattered text or code pixels of a similar colour never form one).
    offsets = {n: (site / f'{n}.html').read_text().find('class="output"') for n in names}
    first = min((n for n in names if offsets[n] > 0), key=lambda n: (offsets[n], n))
    png = tmp_path / 'page.png'
    r = subprocess.run(chromium_args(chromium, tmp_path) + [f'--screenshot={png}', '--window-size=1200,6000',
                       (site / f'{first}.html').as_uri()], stdin=subprocess.DEVNULL, capture_output=True, timeout=180)
    assert r.returncode == 0 and png.exists(), r.stderr.decode(errors='replace')[-2000:]
    assert longest_rule_run(Image.open(png)) >= 20, f'no output block painted on {first}.html'
