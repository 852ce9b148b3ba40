"""The notebooks as documentation (issue 18): `make docs` executes every notebook and writes a static site with
the outputs the code really gave; the README is nbs/index.ipynb executed and written as Markdown. The site is
opened in headless Chromium (Debian's `chromium`, the `chromium` fixture): its DOM must hold the executed outputs
(a compressed view with its marker, the marker's checked claims, a byte-exact retrieve) and its pixels the
output blocks' rule. Every page of the site shows an output, every link and anchor in it resolves, and the contents
list every notebook under a heading that names its module."""
import json, re, subprocess, sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from PIL import Image

from conftest import ROOT, chromium_args

NBDOCS = ROOT / 'docs' / 'nbdocs.py'
OUTPUT_RULE = (0x88, 0xAA, 0xAA)     # the left rule of every output block (docs/nbdocs.py CSS: #8aa)


def nbdocs(*args, timeout=1800) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(NBDOCS), *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)


class Outputs(HTMLParser):
    "The text inside each `<div class=\"output\">` of a page, every link in order, every address a page names (`href`, `src`), the ids an anchor can point at, and the `<h2>` headings with the links under each."
    def __init__(self):
        super().__init__(); self.outputs, self.links, self.refs, self.ids, self.sections, self._depth, self._h2 = [], [], [], set(), [], 0, False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'a' and a.get('href'):
            self.links.append(a['href'])
            if self.sections: self.sections[-1][1].append(a['href'])
        self.refs += [a[k] for k in ('href', 'src') if a.get(k)]
        self.ids |= {a[k] for k in (('id', 'name') if tag == 'a' else ('id',)) if a.get(k)}
        if tag == 'h2': self._h2 = True; self.sections.append(['', []])
        if tag == 'div':
            if self._depth: self._depth += 1
            elif a.get('class') == 'output': self._depth = 1; self.outputs.append('')
    def handle_endtag(self, tag):
        if tag == 'div' and self._depth: self._depth -= 1
        if tag == 'h2': self._h2 = False
    def handle_data(self, data):
        if self._depth: self.outputs[-1] += data
        if self._h2: self.sections[-1][0] += data


def parsed(html: str) -> Outputs:
    p = Outputs(); p.feed(html); return p


def site_pages(site: Path) -> dict[str, Outputs]:
    "Every page of a built site by file name, parsed."
    return {p.name: parsed(p.read_text(encoding='utf-8')) for p in sorted(site.glob('*.html'))}


def pages_without_output(site: Path) -> list[str]:
    "The notebook pages (all but the contents, `index.html`) that show no output block holding text or an image."
    pages = site_pages(site)
    imgs = {n for n in pages if re.search(r'<div class="output"><img ', (site / n).read_text(encoding='utf-8'))}
    return [n for n, p in pages.items() if n != 'index.html' and n not in imgs and not any(o.strip() for o in p.outputs)]


def dead_links(site: Path) -> list[str]:
    "Every `href`/`src` of the site's pages that points inside the site but at no page, or at an id the page does not have, as `page: address`."
    pages, dead = site_pages(site), []
    for name, page in pages.items():
        for ref in page.refs:
            u = urlsplit(ref)
            if u.scheme or u.netloc: continue             # http(s):, mailto:, data: — not the site's own
            target = unquote(u.path) if u.path else name
            if target not in pages: dead.append(f'{name}: {ref} (no such page)')
            elif u.fragment and unquote(u.fragment) not in pages[target].ids: dead.append(f'{name}: {ref} (no such anchor)')
    return dead


def notebook_modules() -> dict[str, str]:
    "Each notebook of nbs/ (file stem, the README's index aside) and the module its `#| default_exp` names, read from the notebook's JSON."
    out = {}
    for p in sorted((ROOT / 'nbs').glob('*.ipynb')):
        if p.stem == 'index' or p.name.startswith('_'): continue
        srcs = [''.join(c['source']) for c in json.loads(p.read_text())['cells'] if c['cell_type'] == 'code']
        out[p.stem] = next(m.group(1) for s in srcs if (m := re.search(r'^#\|\s*default_exp\s+(\S+)', s, re.M)))
    return out


def contents_problems(site: Path) -> list[str]:
    "What the contents page gets wrong: a notebook missing, listed twice, out of architecture (file-name) order, before any section, or under a heading that does not name its module (`compressors.json` may be named `json` under Compressors)."
    contents, modules, problems = parsed((site / 'index.html').read_text(encoding='utf-8')), notebook_modules(), []
    listed = [l[:-5] for l in contents.links if l.endswith('.html') and l not in ('index.html', 'front.html')]
    if listed != list(modules): problems.append(f'listed {listed}, notebooks {list(modules)}')
    if 'front.html' not in contents.links: problems.append('no link to the front page')
    placed = {l[:-5] for _, links in contents.sections for l in links}
    problems += [f'{n} is under no section heading' for n in modules if n in listed and n not in placed]
    for heading, links in contents.sections:
        named = set(re.findall(r'[\w.]+', heading.lower()))
        for n in (l[:-5] for l in links if l[:-5] in modules):
            mod = modules[n]
            if mod not in named and mod.split('.')[-1] not in named: problems.append(f'{n} ({mod}) is listed under {heading.strip()!r}, which does not name it')
    return problems


def test_site_checks_see_what_is_wrong(tmp_path):
    "The three site checks fail on a site that has the faults they look for (and pass on one without)."
    page = '<!doctype html><html><body><nav><a href="index.html">contents</a></nav><main>{}</main></body></html>'
    (tmp_path / 'index.html').write_text(page.format('<h2>Foundations — corpus</h2><ul><li><a href="00_corpus.html">x</a></li></ul>'))
    (tmp_path / '00_corpus.html').write_text(page.format('<h2 id="why">Why</h2><a href="#why">up</a><a href="index.html#nope">x</a>'
                                                          '<a href="gone.html">y</a><a href="https://example.com/#z">z</a>'))
    (tmp_path / '00a_settings.html').write_text(page.format('<div class="cell code"><div class="output"><pre>7</pre></div></div>'))
    assert pages_without_output(tmp_path) == ['00_corpus.html']
    assert dead_links(tmp_path) == ['00_corpus.html: index.html#nope (no such anchor)', '00_corpus.html: gone.html (no such page)']
    got = contents_problems(tmp_path)
    assert any(p.startswith('listed [\'00_corpus\']') for p in got) and 'no link to the front page' in got, got
    assert not any('00_corpus (corpus)' in p for p in got), got          # `corpus` is named by its heading


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


@pytest.fixture(scope='module')
def built_site(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    "`make docs` once for the tests of this file: the site's directory and the build's result."
    site = tmp_path_factory.mktemp('docs') / 'site'
    return site, nbdocs('site', site)


@pytest.mark.slow
@pytest.mark.parametrize('check', [pages_without_output, dead_links, contents_problems], ids=['every-page-shows-an-output',
                         'every-link-and-anchor-resolves', 'contents-list-every-notebook-under-a-heading-naming-it'])
def test_the_built_site(check, built_site):
    "What a newcomer needs of the site, each found wanting by its check (the check's docstring says what it reads): every notebook page shows an output (prose and code alone read as if nothing ran), every link inside the site reaches a page and every anchor an id on it, and the contents page lists every notebook once, in architecture order, under a section heading naming its module."
    site, _ = built_site
    assert check(site) == [], f'{check.__name__}: {check(site)}'


@pytest.mark.slow
def test_docs_site_builds_and_renders_with_outputs(chromium, built_site, tmp_path):
    "`make docs`: every notebook runs without error; Chromium shows the outputs."
    site, r = built_site
    assert r.returncode == 0, (r.stdout + r.stderr)[-5000:]
    names = list(notebook_modules())
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
