"""`sourcewatch eval discovery --plot PREFIX`: the RL agent's learning curves (the seed's Figure 5) and its
fixed-step vs adaptive-threshold results (Figure 6), and the learned stopping model's reliability diagram,
from one cross-validated run."""

from __future__ import annotations

from pathlib import Path


def plot_discovery(result: dict, prefix: Path) -> list[Path]:
    """PREFIX-learning.png: recall within 1, 2, 3 clicks on the held-out sites after each epoch (mean over the
    folds); PREFIX-stopping.png: precision, recall and unit cost of 1, 2, 3 fixed clicks beside η's (and the
    fine-tuned agent's, when the run fine-tuned); PREFIX-reliability.png: the stopping model's predicted
P(reachable) against the observed share on held-out choices, where the run fitted one. Returns the files
written."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    agent = result["rl"]
    written = []
    if agent.get("learning_curve"):
        figure, axes = plt.subplots(figsize=(7, 4.5))
        epochs = [point["epoch"] for point in agent["learning_curve"]]
        for k in range(len(agent["learning_curve"][0]["recall_at_clicks"])):
            axes.plot(epochs, [point["recall_at_clicks"][k] for point in agent["learning_curve"]],
                      label=f"within {k + 1} click{'s' * (k > 0)}")
        axes.set(xlabel="pre-training epoch", ylabel="recall (held-out sites, ε = 0)", ylim=(0, 1.02),
                 title="RL agent learning curve (site-grouped CV)")
        axes.legend(loc="lower right")
        written.append(_save(figure, prefix, "learning"))
    figure, axes = plt.subplots(1, 2, figsize=(10, 4))
    variants = [(f"{k} fixed", agent["fixed_steps"][k]) for k in sorted(agent.get("fixed_steps", {}))]
    variants.append(("η", agent))
    if "rl_finetuned" in result:
        variants.append(("fine-tuned, η", result["rl_finetuned"]))
    names = [name for name, _ in variants]
    for offset, metric in enumerate(("precision", "recall")):
        axes[0].bar([i + 0.4 * offset for i in range(len(variants))], [v[metric] or 0 for _, v in variants], 0.4,
                    label=metric)
    axes[0].set_xticks([i + 0.2 for i in range(len(variants))], names, fontsize=8)
    axes[0].set(ylim=(0, 1.05), title="precision and recall")
    axes[0].legend(loc="lower left")
    axes[1].bar(names, [v["unit_cost"] or 0 for _, v in variants], label="unit cost")
    axes[1].bar(names, [v["clicks_on_negative_sites"] or 0 for _, v in variants], 0.4,
                label="clicks on sites without one")
    axes[1].set(title="clicks")
    axes[1].tick_params(axis="x", labelsize=8)
    axes[1].legend(loc="upper left")
    written.append(_save(figure, prefix, "stopping"))
    calibration = agent.get("stopping_calibration")
    if calibration and calibration["bins"]:
        figure, axes = plt.subplots(figsize=(5, 5))
        axes.plot([0, 1], [0, 1], color="grey", linestyle=":", label="perfectly calibrated")
        axes.plot([b["predicted"] for b in calibration["bins"]], [b["observed"] for b in calibration["bins"]],
                  marker="o", label=f"stopping model (Brier {calibration['brier']})")
        for point in calibration["bins"]:
            axes.annotate(str(point["choices"]), (point["predicted"], point["observed"]), fontsize=7,
                          textcoords="offset points", xytext=(4, -10))
        axes.set(xlabel="predicted P(a source page reachable)", ylabel="observed share (held-out choices)",
                 xlim=(0, 1), ylim=(0, 1.05), title="Stopping model reliability (site-grouped CV)")
        axes.legend(loc="lower right")
        written.append(_save(figure, prefix, "reliability"))
    return written


def _save(figure, prefix: Path, name: str) -> Path:
    path = prefix.with_name(f"{prefix.name}-{name}.png")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    return path
