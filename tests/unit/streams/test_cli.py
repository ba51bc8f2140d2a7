"""The command line's parser: every command and sub-command answers --help, a flag that does not apply to a
command is refused, and a command's own error comes out as `error: …` with exit code 2."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from streams.cli import COMMANDS, build_parser, main


def _every_command_line() -> list[list[str]]:
    lines = []
    for command in COMMANDS:
        lines.append([command.name])
        lines += [[command.name, sub.name] for sub in command.subcommands]
    return lines


@pytest.mark.parametrize("words", _every_command_line(), ids=" ".join)
def test_every_command_and_task_answers_help(words, capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([*words, "--help"])
    assert exit_.value.code == 0
    assert f"usage: sourcewatch {' '.join(words)}" in capsys.readouterr().out


@pytest.mark.parametrize(
    "words",
    [
        ["eval", "records", "--data", "d", "--folds", "3"],  # folds are pagination's, discovery's and the classifier's
        ["train", "pagination", "--data", "d", "--out", "m", "--sites", "s"],
        ["train", "revisit", "--events", "e.csv", "--out", "m", "--stop-rule", "eq5"],
        ["eval", "revisit", "--events", "e.csv", "--model", "m"],
        ["eval", "classifier", "--sites", "s", "--simweb", "3"],
        ["eval", "pagination", "--data", "d", "--folds", "2", "--model", "m"],  # one protocol at a time
        ["eval", "discovery", "--sites", "s", "--folds", "2", "--model", "m"],
        ["bench", "tag", "--sources", "5"],
        ["bench", "crawl", "--seeds", "http://example.org/"],
        ["watch", "https://example.org/events", "--max-pages", "3"],
        ["demo", "--watch", "60"],  # the watch is in simulated days now (--watch-days)
        ["crawl-snapshots", "d", "--sources"],
        ["eval", "nonsense"],
    ],
    ids=" ".join,
)
def test_a_flag_or_task_that_does_not_apply_is_refused(words, capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(words)
    assert exit_.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_flags_shared_by_train_and_eval_are_parsed_for_each():
    trained = build_parser().parse_args(["train", "discovery", "--sites", "s", "--out", "a.pt", "--no-aux",
                                         "--finetune-simweb", "4"])
    evaluated = build_parser().parse_args(["eval", "discovery", "--simweb", "8", "--folds", "2", "--no-aux"])
    assert (trained.no_aux, trained.finetune_simweb, trained.start_from) == (True, 4, None)
    assert (evaluated.no_aux, evaluated.folds, evaluated.sites) == (True, 2, None)


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["watch"], "watch needs --sources FILE or URLs"),
        (["watch", "https://example.org/events", "--target-timeliness", "0.9"], "--target-timeliness sets the worker"),
        (["watch", "https://example.org/events", "--run", "5", "--target-timeliness", "1.5"], "must lie in (0, 1]"),
        (["discover"], "discover needs homepage URLs"),
        (["discover", "not-a-url"], "not an absolute http(s) URL"),
        (["eval", "discovery", "--policy", "rl"], "needs --sites DIR… or --simweb N"),
        (["train", "revisit", "--events", "/nonexistent.csv", "--out", "m.pt"], "no such file: /nonexistent.csv"),
        (["eval", "pagination", "--data", "/nonexistent", "--continuation"], "/nonexistent holds no data.csv"),
        (["train", "discovery", "--sites", "s", "--out", "a.pt", "--finetune-simweb", "4", "--finetune-seed", "11"],
         "labels the fine-tuned agent's own choices"),
    ],
)
def test_a_commands_own_error_is_one_line_and_exit_code_2(words, message, capsys):
    assert main(words) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err


def test_the_parser_is_assembled_from_one_class_per_command():
    names = [command.name for command in COMMANDS]
    assert len(names) == len(set(names))
    subparsers = next(action for action in build_parser()._actions if isinstance(action, argparse._SubParsersAction))
    assert sorted(subparsers.choices) == sorted(names)


def test_a_reader_that_leaves_early_ends_the_command_quietly():
    # `sourcewatch records URL | head`: the pipe closes while the command still prints.
    program = ("import streams.cli.sql as sql\n"
               "sql.Sql.run = lambda self, args: [print('row', n) for n in range(200_000)] and 0\n"
               "from streams.cli import main\n"
               "raise SystemExit(main(['sql', 'SELECT 1']))\n")
    reader = subprocess.Popen(["head", "-n", "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    command = subprocess.run([sys.executable, "-c", program], stdout=reader.stdin, stderr=subprocess.PIPE, timeout=60,
                             cwd=Path(__file__).resolve().parents[3])
    reader.stdin.close()
    assert reader.stdout.read() == b"row 0\n"
    reader.wait(timeout=10)
    assert command.returncode == 0 and b"Traceback" not in command.stderr, command.stderr.decode()


def test_discover_marks_each_find_with_its_p_and_the_unsure_ones_to_check(capsys):
    from streams.cli.discover import print_episodes

    episode = {"clicks": 1, "end": "found", "reason": ""}
    summary = {"seconds": 3.0, "episodes": [{**episode, "homepage": "http://a.org/", "found": ["http://a.org/events/"]},
                                            {**episode, "homepage": "http://b.org/", "found": ["http://b.org/blog/"]}],
               "find_scores": {"http://a.org/events/": 0.97, "http://b.org/blog/": 0.62}}
    print_episodes(summary, 2)
    out = capsys.readouterr().out
    assert "http://a.org/events/ (P 0.97)" in out
    assert "http://b.org/blog/ (P 0.62: unsure, to check)" in out
    assert "given up on" not in out
    # A site given up on: the user is told where to answer for it.
    gave_up = {"clicks": 0, "end": "stop", "reason": "a source page reachable: 0.283 < 0.333", "found": [],
               "homepage": "http://c.org/"}
    print_episodes({"seconds": 1.0, "episodes": [gave_up]}, 1)
    out = capsys.readouterr().out
    assert "http://c.org/  stop after 0 clicks  a source page reachable: 0.283 < 0.333" in out
    assert "1 site given up on:" in out and "POST /api/v1/sites/verdict" in out
