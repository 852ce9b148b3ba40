"""The ipywidgets explorer (SPEC §12) constructed and driven on one real payload of every corpus kind, and on
pasted text: the detected type shown is the engine's, the token bars carry the result's counts, every elided
run of the independent alignment is one highlighted marker in the view, and retrieve gives back the exact
bytes (or the engine's query-narrowed view)."""
import ipywidgets as widgets
import pytest

from caveman import ccr
from caveman.corpus import KINDS, corpus_files
from caveman.engine import Engine
from caveman.explore import Explorer
from caveman.report import align


@pytest.fixture(scope='module')
def explorer():
    return Explorer(Engine(ccr.open_store(':memory:')))


def test_built_from_widgets(explorer):
    assert isinstance(explorer.widget, widgets.VBox)
    for w in (explorer.source, explorer.type, explorer.paste, explorer.query, explorer.compress_button,
              explorer.before, explorer.after, explorer.view, explorer.retrieve_query, explorer.retrieve_button):
        assert isinstance(w, widgets.Widget)
    assert 'application/vnd.jupyter.widget-view+json' in explorer._repr_mimebundle_()
    assert len(explorer.source.options) == len(corpus_files()) + 1


@pytest.mark.parametrize('kind', KINDS)
def test_each_corpus_kind(explorer, kind):
    path = corpus_files(kind)[0]
    data = path.read_bytes()
    explorer.show(path.name)
    r = explorer.result
    fresh = Engine(ccr.open_store(':memory:'))
    assert f'detected as <code>{fresh.detect(data)}</code>' in explorer.detected.value
    assert (explorer.before.value, explorer.after.value, explorer.before.max) == (r.tokens_before, r.tokens_after, max(r.tokens_before, 1))
    assert r.output == fresh.compress(data).output   # the explorer shows what the engine does
    elided = align(data, r.output, r.content_type).elided
    assert explorer.view.value.count('class="cv-mark"') == len(elided)
    assert explorer.view.value.count('<tr class="cv-') == len(explorer.alignment.runs)
    if r.recovery_handle:
        assert not explorer.retrieve_button.disabled
        explorer.retrieve_query.value = ''
        explorer.retrieve_button.click()
        assert explorer.retrieved_bytes == data
        explorer.retrieve_query.value = 'error'
        explorer.retrieve_button.click()
        assert explorer.retrieved_bytes == explorer.engine.retrieve_query(r.recovery_handle, 'error')
    else:
        assert explorer.retrieve_button.disabled and r.passed_through


def test_pasted_text_and_forced_type(explorer):
    rows = ''.join(f'{{"id":{i},"state":"ok","ms":{i * 37 % 101}}},' for i in range(200))
    explorer.show('[' + rows.rstrip(',') + ']')
    assert explorer.source.value is None and explorer.result.content_type == 'json'
    assert explorer.alignment.elided and all(c.holds for r in explorer.alignment.elided for c in r.claims)
    explorer.show('[' + rows.rstrip(',') + ']', type='toon')
    assert explorer.result.method == 'toon' and explorer.alignment.elided == []
