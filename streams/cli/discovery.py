"""`sourcewatch train|eval discovery`, `train|eval classifier` and `bench discovery`: the discovery agent and
the source-page classifier."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from infra.settings import get_settings
from streams.cli.base import Command, CommandError, add_json, note, print_json, progress_bar
from streams.threads import threads_for_reading


def add_sites(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("--sites", nargs="+", required=required, metavar="DIR",
                        help="labelled site folders or folders of them, e.g. <data>/sites")


def add_agent_training_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--epochs", type=int, help="pre-training epochs (default: the trainer's)")
    parser.add_argument("--no-aux", action="store_true",
                        help="train the agent without the auxiliary box task (no Chromium needed)")
    parser.add_argument("--stop-rule", choices=["out_of_fold", "eq5", "learned"], default="out_of_fold",
                        help="how the agent stops — at the threshold η with the fewest errors on training sites held "
                             "out from brief agents (default), at the seed's Eq. 5 η, or by the stopping model "
                             "fitted on those held-out episodes (eval with folds reports Eq. 5's and the learned "
                             "model's figures beside the default's)")
    parser.add_argument("--finetune-simweb", type=int, metavar="N",
                        help="after pre-training, fine-tune the agent on N sites of the simulated web with the "
                             "source-page classifier as reward (Eq. 4; eval: in every fold, reported as "
                             "rl_finetuned beside rl)")
    parser.add_argument("--finetune-seed", type=int, default=3,
                        help="the fine-tuning web's seed (default 3; held-out evaluation uses 7)")
    parser.add_argument("--finetune-epochs", type=int, help="fine-tuning epochs (default 30)")
    parser.add_argument("--no-rehearse", action="store_true",
                        help="fine-tune on the simulated sites alone, without rehearsing the labelled ones (the "
                             "seed's Eq. 4 as written)")


def add_encoder(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--encoder", choices=["use", "laser", "e5", "none"], default="use",
                        help="pretrained text encoder (default use)")


def pretrain_config(args: argparse.Namespace):
    from models.discovery.training import PretrainConfig

    return PretrainConfig(**({"epochs": args.epochs} if args.epochs else {}), auxiliary=not args.no_aux,
                          stop_rule=args.stop_rule)


def finetuning(args: argparse.Namespace):
    """The fine-tuning asked for by --finetune-simweb N (None without)."""
    if not args.finetune_simweb:
        return None
    from models.discovery.evaluation import Finetuning
    from models.discovery.finetuning import STOPPING_WEB_SEED, FinetuneConfig

    if args.finetune_seed == STOPPING_WEB_SEED:
        raise CommandError(f"--finetune-seed {STOPPING_WEB_SEED} is the web whose truth labels the fine-tuned agent's "
                           "own choices for its stopping model: fine-tune on another seed")
    config = FinetuneConfig(**({"epochs": args.finetune_epochs} if args.finetune_epochs else {}),
                            stop_rule=args.stop_rule)
    return Finetuning(args.finetune_simweb, args.finetune_seed, config, rehearse=not args.no_rehearse)


def training_note(point: dict) -> str:
    if "recall_at_clicks" in point:
        return f"pre-training: recall at 1/2/3 clicks {point['recall_at_clicks']}"
    return f"fine-tuning: judged found {point['judged_found']}"


class TrainDiscovery(Command):
    name = "discovery"
    small_models = True
    help = "pre-train the RL agent on labelled sites, then (--finetune-simweb) fine-tune it with the classifier"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        add_sites(parser)
        add_agent_training_options(parser)
        parser.add_argument("--out", required=True, help="agent file to write")
        parser.add_argument("--from", dest="start_from", metavar="PATH",
                            help="fine-tune this saved agent instead of pre-training a new one (--finetune-simweb), "
                                 "or fit a pre-trained agent's stopping model (--stop-rule learned; a fine-tuned "
                                 "agent's is fitted as it is fine-tuned)")

    def run(self, args: argparse.Namespace) -> int:
        from models.discovery.anchor_boxes import BrowserUnavailable
        from models.discovery.evaluation import NoSites, NotRefittable, train_agent
        from models.discovery.training import CALIBRATION_FOLDS
        from models.model_files import ModelVersionError

        if args.start_from and not args.finetune_simweb and args.stop_rule != "learned":
            raise CommandError("--from fine-tunes a saved agent or fits its stopping model: give --finetune-simweb N "
                               "or --stop-rule learned too")
        config, tuning = pretrain_config(args), finetuning(args)
        # A fine-tuned agent's stopping model learns from brief agents fine-tuned as it was, one a third of the sites.
        briefs = CALIBRATION_FOLDS if tuning and args.stop_rule == "learned" else 0
        steps = (0 if args.start_from else config.epochs) + (tuning.config.epochs * (1 + briefs) if tuning else 0)
        try:
            with progress_bar("training", steps) as advance:
                agent, history = train_agent([Path(folder) for folder in args.sites], config,
                                             progress=lambda epoch, point: advance(training_note(point)),
                                             finetuning=tuning,
                                             start_from=Path(args.start_from) if args.start_from else None)
        except (NoSites, NotRefittable, FileNotFoundError, BrowserUnavailable, ModelVersionError) as error:
            raise CommandError(str(error)) from None
        agent.save(Path(args.out))
        finetuned = f", fine-tuned on {len(agent.finetuned_on)} simulated sites" if agent.finetuned_on else ""
        stopping = "the learned stopping model" if agent.stopper else f"η {agent.eta:.3f}"
        print(f"trained on {len(agent.trained_on)} sites{finetuned}, stops by {stopping}; "
              f"{training_note(history[-1]) if history else ''} → {args.out}")
        return 0


class EvalDiscovery(Command):
    name = "discovery"
    small_models = True
    help = "discovery policies on labelled sites served on loopback (or the simulated web), one episode per site"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        add_sites(parser, required=False)
        parser.add_argument("--simweb", type=int, metavar="N",
                            help="evaluate on N sites of the simulated web instead (held out)")
        parser.add_argument("--simweb-seed", type=int, default=7,
                            help="the simulated web's seed (default 7; the demo uses 1; 11 labels the fine-tuned "
                             "agent's stopping model, so it is not held out)")
        parser.add_argument("--policy", nargs="+", metavar="NAME",
                            help="policies to run (default: rl, bfs, random, keyword, qlearning)")
        parser.add_argument("--max-steps", type=int, default=10, help="click budget per site")
        parser.add_argument("--finds", type=int, default=1, metavar="K",
                            help="source pages an episode looks for at most (default 1: first-hit stopping; the "
                                 "stream's SOURCEWATCH_DISCOVERY_FINDS)")
        protocol = parser.add_mutually_exclusive_group()
        protocol.add_argument("--folds", type=int, help="train the learning policies by site-grouped CV, K folds")
        protocol.add_argument("--model", help="the RL agent to evaluate (default: the shipped one)")
        parser.add_argument("--fold-seed", type=int, default=0, help="shuffles the sites into folds (default 0)")
        add_agent_training_options(parser)
        parser.add_argument("--plot", metavar="PREFIX", help="write PREFIX-learning.png, PREFIX-stopping.png and PREFIX-reliability.png")
        parser.add_argument("--verdicts", type=int, metavar="K",
                            help="instead: what `retrain discovery` buys the stopping model when people give a "
                                 "verdict on each of K sites of a simulated web (--verdict-seed) after the agent's "
                                 "episodes there — the saved agent (--model) on the held-out web (--simweb N) or the "
                                 "labelled sites (--sites) with its own stopping model and with the retrained one")
        parser.add_argument("--verdict-seed", type=int, default=VERDICT_WEB_SEED,
                            help=f"the judged simulated web's seed (default {VERDICT_WEB_SEED})")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from models.discovery.anchor_boxes import BrowserUnavailable
        from models.discovery.evaluation import FINETUNED, POLICIES, NoSites, evaluate_discovery
        from models.model_files import ModelVersionError

        if not args.sites and not args.simweb:
            raise CommandError("eval discovery needs --sites DIR… or --simweb N")
        if args.finds < 1:
            raise CommandError("--finds must be at least 1")
        if args.verdicts:
            return _eval_stopping_verdicts(args)
        policies = args.policy or list(POLICIES)
        unknown = [name for name in policies if name not in POLICIES]
        if unknown:
            raise CommandError(f"policy {', '.join(unknown)} is not built yet; available: {', '.join(POLICIES)}")
        try:
            result = evaluate_discovery([Path(folder) for folder in args.sites or []], policies, args.max_steps,
                                        args.folds, args.fold_seed, Path(args.model) if args.model else None,
                                        pretrain_config(args),
                                        progress=lambda name: print(f"  {name} done", file=sys.stderr),
                                        simweb=(args.simweb, args.simweb_seed) if args.simweb else None,
                                        finetuning=finetuning(args), max_finds=args.finds)
        except (NoSites, FileNotFoundError, ModelVersionError, BrowserUnavailable) as error:
            raise CommandError(str(error)) from None
        if args.plot and "rl" in result:
            from models.discovery.plots import plot_discovery

            for path in plot_discovery(result, Path(args.plot)):
                print(f"plot written to {path}", file=sys.stderr)
        if args.json:
            print_json(result)
            return 0
        print(f"{result[policies[0]]['sites']} sites ({result[policies[0]]['sites_with_source_pages']} with a "
              f"source page), at most {result['max_steps']} clicks; {result['protocol']}")
        if args.finds != (stream_finds := get_settings().discovery_finds):
            print(f"  (the stream's episodes look for up to {stream_finds} source pages, SOURCEWATCH_DISCOVERY_FINDS: "
                  f"--finds {stream_finds} evaluates them as it runs them)")
        for name in [name for name in (*policies, FINETUNED) if name in result]:
            f = result[name]
            print(f"  {name:<12} precision {f['precision']}, recall {f['recall']}, unit cost {f['unit_cost']}, "
                  f"clicks on sites without one {f['clicks_on_negative_sites']}, labelled source pages reached "
                  f"{f['source_pages_reached']}")
            for k, fixed in f.get("fixed_steps", {}).items():
                print(f"    {k} fixed click(s): precision {fixed['precision']}, recall {fixed['recall']}, unit "
                      f"cost {fixed['unit_cost']}, clicks on sites without one {fixed['clicks_on_negative_sites']}")
            for rule, label in (("eq5_eta", "stopping at Eq. 5's η"), ("learned_stop", "the learned stopping model")):
                if rule in f:
                    other = f[rule]
                    print(f"    {label}: precision {other['precision']}, recall {other['recall']}, unit cost "
                          f"{other['unit_cost']}, clicks on sites without one {other['clicks_on_negative_sites']}")
            if "judged_by_classifier" in f:
                judged = f["judged_by_classifier"]
                print(f"    ended by the classifier (as the stream runs it): precision {judged['precision']}, recall "
                      f"{judged['recall']}, unit cost {judged['unit_cost']}, {judged['false_finds']} false finds, "
                      f"labelled source pages reached {judged['source_pages_reached']}")
            if "stopping_calibration" in f:
                calibration = f["stopping_calibration"]
                print(f"    stopping model on {calibration['choices']} held-out choices: Brier {calibration['brier']}")
            for cost, stopped in f.get("learned_stop_by_miss_cost", {}).items():
                print(f"    the stopping model, a miss costing {cost} clicks: precision {stopped['precision']}, recall "
                      f"{stopped['recall']}, unit cost {stopped['unit_cost']}, clicks on sites without one "
                      f"{stopped['clicks_on_negative_sites']}")
        return 0


# The simulated web people judge in `eval discovery --verdicts`: none of the demo's (1), fine-tuning's (3), the
# held-out evaluation's (7) or the stopping model's own (11).
VERDICT_WEB_SEED = 13


def _eval_stopping_verdicts(args: argparse.Namespace) -> int:
    """`eval discovery --simweb N --verdicts K`: the agent plays K sites of the judged web as the stream would, a
    person gives a verdict on each site (its truth), `retrain discovery`'s stopping half retrains on them, and
    the held-out web is evaluated with the agent's stopping model and with the retrained one."""
    import asyncio
    import tempfile

    from jobs.retrain_stopping import rehearsed_verdicts, retrain_stopping, verdict_samples
    from models.discovery.agent import DEFAULT_AGENT, RLCrawler
    from models.discovery.classifier import SourcePageClassifier, current_classifier_path
    from models.discovery.evaluation import evaluate_discovery
    from models.discovery.sites import simulated_web
    from models.discovery.stopping import load_retrained

    if args.folds or (args.sites and args.simweb):
        raise CommandError("--verdicts evaluates a saved agent on one held-out set: --simweb N or --sites DIR…, "
                           "without --folds")
    if args.simweb and args.verdict_seed == args.simweb_seed:
        raise CommandError(f"--verdict-seed {args.verdict_seed} is the evaluated web's: the verdicts would not be "
                           "held out")
    settings = get_settings()
    model = Path(args.model) if args.model else DEFAULT_AGENT
    agent = RLCrawler.load(model)
    if agent.stopper is None:
        raise CommandError(f"{model} stops by η, not by a stopping model")
    classifier = SourcePageClassifier.load(current_classifier_path(settings))

    async def rehearse():
        async with simulated_web(args.verdicts, args.verdict_seed) as (sites, homepages, fetch):
            return await rehearsed_verdicts(agent, classifier, sites, homepages, fetch, args.max_steps,
                                            settings.discovery_finds)

    held_out = (f"the held-out web ({args.simweb} sites, seed {args.simweb_seed})" if args.simweb
                else f"the labelled sites ({', '.join(args.sites)})")

    def evaluated(agent_file: Path, stopping: str) -> dict:
        note(f"{held_out} with the {stopping} stopping model")
        return evaluate_discovery([Path(folder) for folder in args.sites or []], ["rl"], args.max_steps,
                                  model=agent_file, config=pretrain_config(args),
                                  simweb=(args.simweb, args.simweb_seed) if args.simweb else None,
                                  max_finds=args.finds)["rl"]

    note(f"the agent's episodes on {args.verdicts} judged sites (seed {args.verdict_seed})")
    episodes, verdicts = asyncio.run(rehearse())
    base = agent.stopper.at_miss_cost(settings.discovery_miss_cost)
    figures = {"agent": evaluated(model, "agent's own")}
    with tempfile.TemporaryDirectory() as run_dir:
        retrained_path, retrained_agent = Path(run_dir) / "stopping.json", Path(run_dir) / "agent.pt"
        result = retrain_stopping(base, base, verdict_samples(episodes, verdicts, []), retrained_path, False,
                                  args.folds or 5)
        if result.swapped:
            agent.stopper = load_retrained(retrained_path, base)
            agent.save(retrained_agent)
            figures["retrained"] = evaluated(retrained_agent, "retrained")
    # The retrained model lived in a folder of its own for the run: no path of it to report.
    retrained = {key: value for key, value in vars(result).items() if key != "written_to"}
    report = {"judged_sites": args.verdicts, "verdict_seed": args.verdict_seed, "retrain": retrained,
              "evaluated_on": held_out, "held_out": {name: _discovery_figures(f) for name, f in figures.items()}}
    if args.json:
        print_json(report)
        return 0
    print(f"stopping model retrained on verdicts on {args.verdicts} sites of the simulated web of seed "
          f"{args.verdict_seed}: {result.samples} choices; held out by site, decisions cost "
          f"{result.held_out['current']['cost']} now, {result.held_out['with_verdicts']['cost']} retrained "
          f"({'swapped in' if result.swapped else 'not better: ' + '; '.join(result.reasons)})")
    for name, f in report["held_out"].items():
        print(f"  {name:<9} on {held_out}: precision {f['precision']}, recall {f['recall']}, unit cost "
              f"{f['unit_cost']}, clicks on sites without one {f['clicks_on_negative_sites']}; as the stream runs "
              f"it: precision {f['judged']['precision']}, recall {f['judged']['recall']}, "
              f"{f['judged']['false_finds']} false finds")
    return 0


def _discovery_figures(figures: dict) -> dict:
    judged = figures["judged_by_classifier"]
    return {key: figures[key] for key in ("precision", "recall", "unit_cost", "clicks_on_negative_sites")} | {
        "judged": {key: judged[key] for key in ("precision", "recall", "unit_cost", "clicks_on_negative_sites",
                                                "false_finds")}}


class TrainClassifier(Command):
    name = "classifier"
    small_models = True
    help = "train the source-page classifier"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        add_sites(parser)
        add_encoder(parser)
        parser.add_argument("--out", required=True, help="classifier file to write")

    def run(self, args: argparse.Namespace) -> int:
        from models.discovery.classifier import train_source_classifier
        from models.text_encoders import EncoderUnavailable

        try:
            classifier = train_source_classifier([Path(folder) for folder in args.sites], args.encoder)
        except (FileNotFoundError, EncoderUnavailable, ValueError) as error:
            raise CommandError(str(error)) from None
        classifier.save(Path(args.out))
        print(f"trained on {len(classifier.trained_on)} sites → {args.out}")
        return 0


class EvalClassifier(Command):
    name = "classifier"
    small_models = True
    help = "the source-page classifier by site-grouped cross-validation, with each page input"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        add_sites(parser)
        add_encoder(parser)
        parser.add_argument("--folds", type=int, default=5, help="site-grouped folds (default 5)")
        parser.add_argument("--fold-seed", type=int, default=0, help="shuffles the sites into folds (default 0)")
        parser.add_argument("--extra-positives", metavar="DIR",
                            help="add City Scrapers' listing pages (<data>/records/city-scrapers) to every "
                                 "training fold as source pages")
        parser.add_argument("--verdicts", type=int, metavar="K",
                            help="instead: what retraining on people's verdicts buys (`retrain classifier`'s "
                                 "comparison) when K labelled sites, drawn 3 times, stand for the judged ones")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from models.discovery.classifier import PAGE_INPUTS, cross_validate, labelled_pages, listing_pages, page_vectors
        from models.text_encoders import EncoderUnavailable, get_encoder

        try:
            pages = labelled_pages([Path(folder) for folder in args.sites])
            if args.extra_positives:
                pages += listing_pages(Path(args.extra_positives))
            encoder = get_encoder(args.encoder)
        except (FileNotFoundError, EncoderUnavailable, ValueError) as error:
            raise CommandError(str(error)) from None
        sites = len({page.site for page in pages})
        folds = min(args.folds, sites)
        if folds < 2:
            raise CommandError("eval classifier needs at least two labelled sites (site-grouped cross-validation)")
        if args.verdicts:
            return _eval_verdicts(pages, encoder, args.verdicts, folds, args.fold_seed, args.json)
        result = {"protocol": f"site-grouped {folds}-fold cross-validation, fold seed {args.fold_seed}"
                              + (f"; {args.extra_positives} listing pages added to every training fold"
                                 if args.extra_positives else ""),
                  "encoder": args.encoder, "sites": sites}
        for name in PAGE_INPUTS:
            print(f"  encoding ({name}) …", file=sys.stderr)
            result[name] = cross_validate(pages, page_vectors(pages, encoder, name), folds, args.fold_seed)
        if args.json:
            print_json(result)
            return 0
        print(f"{result['four_texts']['pages']} pages of {sites} sites ({result['four_texts']['source_pages']} "
              f"source pages); {result['protocol']}; encoder {args.encoder}")
        for name in PAGE_INPUTS:
            f = result[name]
            print(f"  {name:<19} accuracy {f['accuracy']}, precision {f['precision']}, recall {f['recall']}, "
                  f"f1 {f['f1']}")
        return 0


VERDICT_DRAWS = 3


def _eval_verdicts(pages: list, encoder, judged_sites: int, folds: int, seed: int, as_json: bool) -> int:
    """`eval classifier --verdicts K`: K labelled sites' pages (source pages and the sampled others) as the
    verdicts people gave, the other sites as the labelled data; the comparison `retrain classifier` makes."""
    import random

    from jobs.retrain_classifier import VerdictPages, compare_recipes
    from models.discovery.classifier import DEFAULT_INPUT, TRAIN_ONLY, LabelledPage

    names = sorted({page.site for page in pages if not page.site.startswith(TRAIN_ONLY)})
    if not 2 <= judged_sites <= len(names) - folds:
        raise CommandError(f"--verdicts must be between 2 and {len(names) - folds} (the labelled sites less the folds)")
    draws = []
    for draw in range(VERDICT_DRAWS):
        judged = set(random.Random(seed + draw).sample(names, judged_sites))
        verdicts = [LabelledPage(TRAIN_ONLY + page.site, page.path, page.html, page.source)
                    for page in pages if page.site in judged]
        result = compare_recipes([page for page in pages if page.site not in judged], VerdictPages(verdicts, []),
                                 encoder, DEFAULT_INPUT, folds, progress=note)
        draws.append({"judged_sites": sorted(judged), **vars(result)})
    if as_json:
        print_json({"protocol": f"{judged_sites} of {len(names)} labelled sites as verdicts, {VERDICT_DRAWS} draws "
                                f"(seed {seed}); site-grouped {folds}-fold CV on the rest", "draws": draws})
        return 0
    print(f"{judged_sites} of {len(names)} labelled sites stand for the verdicts ({VERDICT_DRAWS} draws, seed {seed}); "
          f"the rest by site-grouped {folds}-fold CV; encoder {encoder.name}")
    for index, draw in enumerate(draws):
        held, labelled = draw["verdicts_held_out"], draw["labelled"]
        low, high = draw["labelled_f1_change"]
        print(f"  draw {index}: {draw['verdicts']} judged pages held out: accuracy {held['without']['accuracy']} → "
              f"{held['with']['accuracy']}, F1 {held['without']['f1']} → {held['with']['f1']}; labelled sites F1 "
              f"{labelled['without']['f1']} → {labelled['with']['f1']} (95 % {low:+}…{high:+}); "
              + ("better" if draw["better"] else "not better: " + "; ".join(draw["reasons"])))
    return 0


class BenchDiscovery(Command):
    name = "discovery"
    help = "anchors scored per second by the discovery agent, cold and warm text cache"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--data", nargs="+", metavar="DIR", help="site folders (default <data>/sites)")
        parser.add_argument("--model", help="discovery agent (default: the shipped one)")
        parser.add_argument("--runs", type=int, default=3, help="runs (default 3)")
        add_json(parser)

    def run(self, args: argparse.Namespace) -> int:
        from agents.discover import PAGE_BATCH
        from models.discovery.agent import DEFAULT_AGENT, RLCrawler
        from models.discovery.throughput import bench_discovery
        from models.model_files import ModelVersionError

        try:
            agent = RLCrawler.load(Path(args.model) if args.model else DEFAULT_AGENT)
        except (FileNotFoundError, ModelVersionError) as error:
            raise CommandError(str(error)) from None
        folders = [Path(folder) for folder in args.data or [get_settings().data / "sites"]]
        threads_for_reading()  # as a worker does: its figures are a worker's
        result = bench_discovery(agent, folders, PAGE_BATCH, runs=args.runs)
        print_json(result) if args.json else print(
            f"{result['anchors']} anchors of {result['pages']} pages, {result['batch']} pages a call as the "
            f"discovery stage: {result['anchors_per_s_cold']} anchors/s with a cold text cache, "
            f"{result['anchors_per_s_warm']} warm (median of {result['runs']}); one page a call: "
            f"{result['anchors_per_s_cold_one_page']} cold, {result['anchors_per_s_warm_one_page']} warm")
        return 0
