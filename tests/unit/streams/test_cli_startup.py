"""`sourcewatch`'s parser registers every command without importing what only running one needs: torch
(~2 s and ~600 MB resident) is loaded by the commands that use a model, not by `sql`, `watch` or `--help`."""

import subprocess
import sys

from tests.conftest import ROOT


def test_building_the_parser_imports_no_torch():
    code = ("import sys\nfrom streams.cli import build_parser\nbuild_parser()\n"
            "print(sorted(name for name in sys.modules if name == 'torch' or name.startswith('torch.'))[:3])")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
