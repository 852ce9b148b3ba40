"""The one way tests give a subprocess its environment (`conftest.child_env`): a developer's own `CAVEMAN_*`
settings never reach the child, the shared data locations do, and a test's values go over the rest."""
import os

from fastcore.xtras import modified_env

from conftest import SHARED_DATA, child_env


def test_settings_dropped_data_kept_values_over_them():
    with modified_env(CAVEMAN_MIN_BYTES='5', CAVEMAN_CORPUS='/data/corpus', CHILD_ENV_OTHER='x', CHILD_ENV_GONE='y'):
        e = child_env(CAVEMAN_HOME='/tmp/h', CHILD_ENV_OTHER='over', CHILD_ENV_GONE=None, N=3)
    assert 'CAVEMAN_MIN_BYTES' not in e and e['CAVEMAN_CORPUS'] == '/data/corpus' and 'CAVEMAN_CORPUS' in SHARED_DATA
    assert (e['CAVEMAN_HOME'], e['CHILD_ENV_OTHER'], e['N']) == ('/tmp/h', 'over', '3') and 'CHILD_ENV_GONE' not in e
    assert e['PATH'] == os.environ['PATH']


def test_only_the_names_listed():
    with modified_env(CAVEMAN_CORPUS='/data/corpus'):
        assert child_env(only=('PATH',), HOME='/h') == {'PATH': os.environ['PATH'], 'HOME': '/h', 'CAVEMAN_HOOK_SERVER': 'off'}
        assert child_env(only=(), PATH='/bin', CAVEMAN_HOOK_SERVER=None) == {'PATH': '/bin'}
