"""The live corpus for tests: `live_captures(workdir) -> [(name, bytes)]` (~50 real commands run on this
machine now; the code lives in evals/live_capture.py so `make eval` runs it without test modules) and
the session-scoped pytest fixture `live_corpus` built on it (import it into a test module)."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'evals'))
from live_capture import MIN_CAPTURES, live_captures, live_probes, answered, missing   # noqa: E402,F401


@pytest.fixture(scope='session')
def live_corpus(tmp_path_factory) -> list[tuple[str, bytes]]:
    "The live captures of this machine, run once per test session in a temp dir."
    return live_captures(tmp_path_factory.mktemp('live'))
