"""The collector settings every sourcewatch process runs with (streams.heap)."""

import gc

from streams.cli import main
from streams.heap import YOUNG_THRESHOLD, freeze_loaded


def test_every_command_collects_young_objects_less_often():
    before = gc.get_threshold()
    try:
        assert main(["kafka", "status", "--help"]) == 0
    except SystemExit as exit_:  # argparse's --help
        assert exit_.code == 0
    try:
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD
    finally:
        gc.set_threshold(*before)


def test_what_is_loaded_is_frozen_out_of_the_collectors_walks():
    try:
        freeze_loaded()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
