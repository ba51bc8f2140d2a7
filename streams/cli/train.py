"""`sourcewatch train TASK`: one sub-command per model, each with only its own flags."""

from __future__ import annotations

from streams.cli.base import Command
from streams.cli.discovery import TrainClassifier, TrainDiscovery
from streams.cli.pagination import TrainPagination
from streams.cli.records import TrainRecords
from streams.cli.revisit import TrainRevisit


class Train(Command):
    name = "train"
    help = ("train a model (pagination tagging, revisit scheduling, the discovery agent, the source-page classifier, "
            "the list ranker)")
    subcommands = (TrainPagination, TrainRevisit, TrainDiscovery, TrainClassifier, TrainRecords)
