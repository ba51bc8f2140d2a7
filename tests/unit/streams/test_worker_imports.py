"""A worker imports only what it runs: the libraries used to train models (scikit-learn, LightGBM, and the SciPy
and pandas they bring, ~300 MB resident together) stay out of every worker process."""

import subprocess
import sys

TRAINING_ONLY = ("sklearn", "lightgbm", "pandas", "scipy")


def test_a_worker_with_every_agent_loaded_imports_no_training_library():
    probe = ("import sys; from streams.worker import load_agents; load_agents('all'); "
             f"print(' '.join(name for name in {TRAINING_ONLY!r} if name in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
