"""`sourcewatch eval TASK`: one sub-command per evaluation, each with only its own flags."""

from __future__ import annotations

from streams.cli.base import Command
from streams.cli.discovery import EvalClassifier, EvalDiscovery
from streams.cli.expand import EvalExpand
from streams.cli.pagination import EvalPagination
from streams.cli.records import EvalRecords
from streams.cli.revisit import EvalRevisit
from streams.cli.topical import EvalTopical


class Evaluate(Command):
    name = "eval"
    help = ("evaluate a model (pagination tagging, record extraction, revisit scheduling, the discovery agent, "
            "the source-page classifier, topical crawl policies, domain discovery's rankers)")
    subcommands = (EvalPagination, EvalRecords, EvalRevisit, EvalDiscovery, EvalClassifier, EvalTopical, EvalExpand)
