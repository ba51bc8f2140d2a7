"""How a process that trains or evaluates the small models shares the cores (streams.threads)."""

import json
import subprocess
import sys

# A real process: the libraries' thread counts before and after, read back from the libraries themselves.
_COUNTS = """
import json, numpy, torch
from threadpoolctl import threadpool_info
from streams.threads import threads_for_small_models

def counts():
    return {"torch": torch.get_num_threads(),
            "blas": sorted({pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"})}

before = counts()
threads_for_small_models()
print(json.dumps({"before": before, "after": counts()}))
"""


def test_the_small_models_run_torch_and_numpy_s_blas_on_one_thread_each():
    env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2"}
    done = subprocess.run([sys.executable, "-c", _COUNTS], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    counts = json.loads(done.stdout)
    # Two threads each as the process started (its environment says so), one each once set.
    assert counts["before"] == {"torch": 2, "blas": [2]}
    assert counts["after"] == {"torch": 1, "blas": [1]}
