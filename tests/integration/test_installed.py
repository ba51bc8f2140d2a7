"""The installed distribution (what `make setup` installs and `sourcewatch` runs) carries every package of the
project and its shipped model files: imported from outside the checkout, not from the working directory."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

from tests.conftest import ROOT

PACKAGES = ["schemas", "infra", "models", "agents", "streams", "jobs"]


def test_every_module_imports_from_the_installed_distribution(tmp_path):
    modules = [module.name for package in PACKAGES
               for module in pkgutil.walk_packages([str(ROOT / package.replace(".", "/"))], f"{package}.")
               if not module.name.endswith("__main__")]
    # The agents' Faust shells register on the app when imported: importing them is what a worker does.
    code = ("import importlib, sys; sys.path = [p for p in sys.path if p not in ('', '.')]\n"
            f"for name in {modules!r}:\n"
            "    module = importlib.import_module(name)\n"
            f"    assert module.__file__.startswith({str(ROOT)!r}), module.__file__\n"
            "print(len(sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_shipped_models_are_found_beside_their_code(tmp_path):
    code = ("from models.discovery.agent import DEFAULT_AGENT\n"
            "from models.discovery.classifier import DEFAULT_CLASSIFIER\n"
            "from models.pagination.tagger import DEFAULT_MODEL as PAGINATION\n"
            "from models.revisit.report import PREVIOUS_MODEL\n"
            "from models.revisit.rhythm_model import DEFAULT_MODEL as REVISIT\n"
            "print(all(path.is_file() for path in (DEFAULT_AGENT, DEFAULT_CLASSIFIER, PAGINATION, REVISIT,\n"
            "                                      PREVIOUS_MODEL)))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr[-3000:]
