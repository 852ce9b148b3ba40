"""A recovery store on a file system mounted read-only (a backup, a container's read-only layer): `caveman retrieve`
still gives the original back, byte for byte (break test 11 row 7: WAL mode needs its `-shm` file, which SQLite could
not create there, and every retrieve failed with `unable to open database file`). Needs a tmpfs it can mount: skipped
where the test may not mount one."""
import json, os, shutil, subprocess, tempfile
import pytest
from conftest import child_env
from caveman.corpus import corpus_path


@pytest.fixture
def tmpfs():
    d = tempfile.mkdtemp(prefix='cvro')
    if shutil.which('mount') is None or subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', d], capture_output=True).returncode:
        os.rmdir(d); pytest.skip('cannot mount a tmpfs here')
    try: yield d
    finally:
        subprocess.run(['umount', d], capture_output=True); os.rmdir(d)


def test_retrieve_from_a_store_on_a_read_only_file_system(tmpfs):
    exe = shutil.which('caveman') or pytest.skip('caveman is not installed')
    env = child_env(HOME=os.path.join(tmpfs, 'home'), CAVEMAN_HOME=os.path.join(tmpfs, 'cv'))
    os.makedirs(env['HOME'])
    original = corpus_path('log_pytest_requests_failures.log').read_bytes()
    r = subprocess.run([exe, 'compress'], input=original, capture_output=True, env=env, timeout=120)
    handle = json.loads(r.stderr.decode().strip().splitlines()[-1])['recovery_handle']
    assert subprocess.run(['mount', '-o', 'remount,ro', tmpfs], capture_output=True).returncode == 0
    r = subprocess.run([exe, 'retrieve', handle], capture_output=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == original
