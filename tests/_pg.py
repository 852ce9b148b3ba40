"""A real PostgreSQL server for the tests: `initdb` on a temporary directory, `pg_ctl` on a loopback port.

Debian's `postgresql` package provides the binaries (`.ci/run` installs it when missing). The server
runs as a non-root user when the tests run as root (PostgreSQL refuses root): the `postgres` account
the package creates, else `nobody`. Password authentication (scram) is on, so that the tests can
check that the password never leaks into errors or logs. Each test gets its own schema (through the
URL's `search_path` option), so tests sharing one server never see each other's rows.
"""
import glob, os, pwd, shutil, socket, subprocess, tempfile, time, uuid
from pathlib import Path

PASSWORD = 'Sekr3t-pw_for-tests'
USER = 'caveman'


def pg_bin(name: str) -> str:
    "Path of PostgreSQL program `name` (pg_ctl, initdb): PATH first, then Debian's /usr/lib/postgresql/*/bin (newest)."
    found = shutil.which(name)
    if found: return found
    cands = sorted(glob.glob(f'/usr/lib/postgresql/*/bin/{name}'), key=lambda p: int(p.split('/')[4]) if p.split('/')[4].isdigit() else 0)
    if cands: return cands[-1]
    raise RuntimeError(f'PostgreSQL {name} not found: install the postgresql package (.ci/run does)')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0)); return s.getsockname()[1]


def _runner() -> list:
    "The prefix that runs a command as a user PostgreSQL accepts: nothing unless root; else runuser to `postgres` (or `nobody`)."
    if os.geteuid() != 0: return []
    for user in ('postgres', 'nobody'):
        try: pwd.getpwnam(user)
        except KeyError: continue
        return ['runuser', '-u', user, '--']
    raise RuntimeError('running as root and no postgres/nobody user to run PostgreSQL as')


class PgServer:
    "One PostgreSQL server on 127.0.0.1:`port` with data in a temporary directory; `url()` gives a URL for a fresh schema."
    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix='caveman-pg-'))
        self.data, self.port, self.run_as = self.dir / 'data', _free_port(), _runner()
        if self.run_as:
            user = self.run_as[2]
            os.chmod(self.dir, 0o755)
            shutil.chown(self.dir, user=user)
        pwfile = self.dir / 'pw'
        pwfile.write_text(PASSWORD + '\n')
        if self.run_as: shutil.chown(pwfile, user=self.run_as[2])
        r = subprocess.run(self.run_as + [pg_bin('initdb'), '-D', str(self.data), '-U', USER, '--pwfile', str(pwfile),
                                          '-A', 'scram-sha-256', '-E', 'UTF8', '--no-sync', '--locale=C'],
                           capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        if r.returncode: raise RuntimeError(f'initdb failed: {r.stderr[-2000:]}')
        self.start()

    def _ctl(self, *args, timeout=60):
        return subprocess.run(self.run_as + [pg_bin('pg_ctl'), '-D', str(self.data), *args], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    def start(self):
        opts = f'-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c max_connections=100'
        r = self._ctl('-l', str(self.dir / 'log'), '-o', opts, '-w', '-t', '60', 'start')
        if r.returncode: raise RuntimeError(f'pg_ctl start failed: {r.stdout}{r.stderr}{(self.dir / "log").read_text()[-2000:]}')

    def stop(self, mode='fast'):
        "Stop the server: `fast` (clean) or `immediate` (like a crash: no shutdown checkpoint)."
        self._ctl('-m', mode, '-w', 'stop')

    def base_url(self, dbname: str = 'postgres') -> str:
        return f'postgresql://{USER}:{PASSWORD}@127.0.0.1:{self.port}/{dbname}'

    def url(self, schema: str | None = None) -> str:
        "A URL whose connections use a schema of their own (created here), so tests never share rows."
        import psycopg
        schema = schema or 't_' + uuid.uuid4().hex[:12]
        with psycopg.connect(self.base_url(), autocommit=True) as c: c.execute(f'CREATE SCHEMA IF NOT EXISTS {schema}')
        return self.base_url() + f'?options=-csearch_path%3D{schema}'

    def sql(self, url: str, query: str, params=()):
        "Run `query` on a connection of its own (outside caveman) and return all rows (or [])."
        import psycopg
        with psycopg.connect(url, autocommit=True) as c:
            cur = c.execute(query, params)
            return cur.fetchall() if cur.description else []

    def close(self):
        self.stop('immediate')
        shutil.rmtree(self.dir, ignore_errors=True)
