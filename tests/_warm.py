"""The warm hook server (`caveman.hook_server`) seen from a test: its status in a given environment, waiting for it,
stopping it. A server computes its key from its own environment, so each look runs in a process with exactly that
environment."""
import json, os, subprocess, sys, time
from pathlib import Path


def in_env(code: str, env: dict) -> str:
    "What the Python `code` prints in a process with exactly `env` (the module computes a server's key from its own environment)."
    r = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return r.stdout


def server_status(env: dict) -> dict | None:
    "`hook_server.status()` in `env`: `{'pid', 'calls', 'cpu', 'rss', 'declines'}`, or None when no server of that configuration answers."
    return json.loads(in_env('import json; from caveman.hook_server import status; print(json.dumps(status()))', env))


def wait_for_server(env: dict, timeout: float = 60) -> dict:
    "The status of the server of `env` once it answers; fails after `timeout` seconds."
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if st := server_status(env): return st
        time.sleep(0.2)
    raise AssertionError('no server came up')


def gone(pid: int, timeout: float = 60) -> bool:
    "True once the process `pid` has exited (a zombie counts: it runs no more code)."
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0] == 'Z': return True
        except FileNotFoundError: return True
        time.sleep(0.05)
    return False


def stop(env: dict) -> None:
    "Stop the server of `env`, if one answers (SIGTERM: it removes its socket and lock file), and wait until it has exited."
    if st := server_status(env):
        os.kill(st['pid'], 15)
        assert gone(st['pid']), f'the server {st["pid"]} did not exit'
