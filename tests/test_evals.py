"""The eval harness end to end: `make eval`'s command, the bundled manifest, path-escape checks on run_dir."""
import os, subprocess, sys
from pathlib import Path

import pytest

from caveman.detect import CONTENT_TYPES
from caveman.evals import ManifestError, evals_dir, load_manifest, run, run_dir
from conftest import child_env

ROOT = Path(__file__).resolve().parents[1]
EVAL_CMD = [sys.executable, '-c', 'import sys; from caveman.evals import main; sys.exit(main(sys.argv[1:]))']
KINDS = {'json', 'log', 'tabular', 'text', 'diff', 'config', 'search-result', 'terminal', 'html', 'code', 'toon',
         'toolschema', 'repetition'}


def test_make_eval_command_prints_the_table_and_passes():
    p = subprocess.run(EVAL_CMD, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300, cwd=ROOT,
                       env=child_env(CAVEMAN_CCR_DB='/nonexistent/never-used.db'))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    lines = p.stdout.strip().split('\n')
    n = len(load_manifest(evals_dir() / 'manifest.yaml'))
    assert lines[0].startswith('fixture') and len(lines) == n + 2
    assert lines[-1].startswith(f'{n}/{n} fixtures passed') and 'lost 0' in lines[-1] and 'basis inferred' in lines[-1]
    assert 'verified' not in p.stdout


def test_bundled_manifest_covers_every_kind_and_every_fixture_file():
    report = run()
    assert report['passed'], [(r['name'], r['failures']) for r in report['fixtures'] if not r['passed']]
    assert {r['content_type'] for r in report['fixtures']} >= KINDS
    assert KINDS - {'toolschema', 'repetition'} <= set(CONTENT_TYPES)
    assert all(r['byte_recoverable'] for r in report['fixtures'])
    fixtures = load_manifest(evals_dir() / 'manifest.yaml')
    used = {f['file'] for f in fixtures if 'file' in f}
    on_disk = {f'fixtures/{p.name}' for p in (evals_dir() / 'fixtures').iterdir() if not p.name.startswith('.')}
    assert used == on_disk                                   # no orphan fixture, no missing one
    assert sum('corpus' in f for f in fixtures) >= 10 and sum('file' in f for f in fixtures) >= 15
    assert sum(bool(r['probes']) for r in report['fixtures']) >= 25


def test_every_report_carries_the_reference_fields():
    report = run()
    for r in report['fixtures']:
        assert set(r) >= {'name', 'content_type', 'tokens_before', 'tokens_after', 'ratio', 'words_before', 'words_after',
                          'word_ratio', 'basis', 'passed', 'byte_recoverable', 'failures', 'probes'}
        for p in r['probes']:
            assert p['status'] in ('retained', 'recoverable', 'lost') and p['value_sha256'].startswith('sha256:')
    t = report['totals']
    assert t['tokens_before'] == sum(r['tokens_before'] for r in report['fixtures']) and t['basis'] == 'inferred'


def write(d: Path, manifest: str, files: dict | None = None) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for name, data in (files or {}).items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(data)
    (d / 'manifest.yaml').write_text(manifest)
    return d


LOG = b''.join(b'2026-11-30 07:00:%02d INFO worker=w1 job=%d status=ok\n' % (i % 60, i) for i in range(60))


def test_failing_fixture_makes_the_command_fail(tmp_path):
    d = write(tmp_path / 'ev', 'fixtures:\n  - name: impossible\n    file: a.log\n    graders: [{type: ratio_threshold, min: 0.999}]\n'
                                '  - name: unknown\n    file: a.log\n    graders: [{type: vibes}]\n', {'a.log': LOG})
    report = run_dir(d)
    assert [r['passed'] for r in report['fixtures']] == [False, False]
    assert report['fixtures'][1]['failures'] == ['unknown grader vibes']
    p = subprocess.run(EVAL_CMD + [str(d)], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert p.returncode == 1 and 'FAIL: unknown grader vibes' in p.stdout


def test_probe_states_and_lost_fails(tmp_path):
    d = write(tmp_path / 'ev', 'fixtures:\n  - name: probes\n    file: a.log\n    graders: [{type: compressed}]\n    probes:\n'
                                '      - {dimension: head, value: job=0 }\n      - {dimension: middle, value: job=33 }\n'
                                '      - {dimension: nowhere, value: not in the input at all}\n', {'a.log': LOG})
    r = run_dir(d)['fixtures'][0]
    # a value that is not in the view is "recoverable" when the handle gives the input back (reference semantics)
    assert [p['status'] for p in r['probes']] == ['retained', 'recoverable', 'recoverable']
    assert r['passed'] and r['byte_recoverable']
    # a store that forgets: the same view, but nothing behind the handle -> the hidden values are lost, the fixture fails
    from caveman import ccr
    from caveman.engine import Engine
    class Forgetful:
        def put(self, original, *a, **k): return ccr.handle_for(original)
        def get(self, handle): raise ccr.NotFound(handle)
    r = run_dir(d, Engine(Forgetful()))['fixtures'][0]
    assert [p['status'] for p in r['probes']] == ['retained', 'lost', 'lost']
    assert not r['passed'] and not r['byte_recoverable'] and 'probe middle: lost' in r['failures']


@pytest.mark.parametrize('rel', ['../outside.log', '/etc/hostname', 'sub/../../outside.log', 'link/outside.log',
                                 'filelink.log', '~/x.log', 'a\x00.log'])
def test_run_dir_refuses_escapes(tmp_path, rel):
    outside = tmp_path / 'outside.log'; outside.write_bytes(LOG)
    d = write(tmp_path / 'ev', f'fixtures:\n  - name: x\n    file: "{rel}"\n    graders: [{{type: compressed}}]\n', {'sub/a.log': LOG})
    (d / 'link').symlink_to(tmp_path, target_is_directory=True)
    (d / 'filelink.log').symlink_to(outside)
    with pytest.raises(ManifestError):
        run_dir(d)


def test_symlink_inside_the_root_is_fine(tmp_path):
    d = write(tmp_path / 'ev', 'fixtures:\n  - name: x\n    file: alias.log\n    graders: [{type: compressed}]\n', {'sub/a.log': LOG})
    (d / 'alias.log').symlink_to(d / 'sub' / 'a.log')
    assert run_dir(d)['passed']


@pytest.mark.parametrize('manifest', ['', 'fixtures: []', 'fixtures: {}', 'just text', 'fixtures: [{name: a}, {name: a}]',
                                      'fixtures: [{file: a.log}]', 'fixtures: [{name: a, file: a.log, extra: 1}]'])
def test_bad_manifests_raise(tmp_path, manifest):
    d = write(tmp_path / 'ev', manifest, {'a.log': LOG})
    with pytest.raises(ManifestError):
        run_dir(d)


def test_corpus_names_are_checked(tmp_path):
    for name in ['../SOURCES.md', 'catalogs/../../x', '/etc/passwd', 'no_such_file.json', '.hidden']:
        d = write(tmp_path / 'ev', f'fixtures:\n  - name: x\n    corpus: "{name}"\n    graders: [{{type: compressed}}]\n')
        with pytest.raises(ManifestError):
            run_dir(d)
