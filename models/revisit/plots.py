"""`sourcewatch eval revisit --plot PNG`: the timeliness–friendliness plane (Shi et al.'s Figure 7)."""

from __future__ import annotations

from pathlib import Path

from models.revisit.evaluation import RC_RANGE

THRESHOLDED = {"poisson": "Poisson", "how": "hour/day of week", "logreg": "logistic regression",
               "logreg_honest": "logistic regression (honest)", "model": "TSP model",
               "model_honest": "TSP model (honest)", "model_per_source": "TSP, one model per source",
               "rhythm": "the page's rhythm alone", "model_previous": "TSP (previous model)"}


def plot_plane(result: dict, path: Path) -> None:
    """RC(1..23) as a curve, each thresholded policy's test curve over its thresholds, the adaptive interval's
    point and the model's operating points chosen on validation."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 5.5))
    rc = [result[f"rc_{k}"] for k in RC_RANGE]
    axes.plot([r["timeliness"] for r in rc], [r["friendliness"] for r in rc], "k.-", label="RC(1…23)")
    for k in (1, 2, 3, 6, 12):
        point = result[f"rc_{k}"]
        axes.annotate(f"RC({k})", (point["timeliness"], point["friendliness"]), fontsize=7)
    axes.plot(result["adaptive"]["timeliness"], result["adaptive"]["friendliness"], "s", label="adaptive interval")
    cold_start = result.get("protocol_name") == "cold start"
    for name, label in THRESHOLDED.items():
        if name not in result:
            continue
        label = "TSP-R" if cold_start and name == "model" else label
        points = [(t, f) for t, f in result[name]["curve"] if t is not None and f is not None]
        axes.plot([t for t, _ in points], [f for _, f in points], "--" if "honest" in name else "-", alpha=0.8,
                  label=label)
    for key, marker in (("at_t95", "*"), ("at_t90", "^")):
        chosen = result.get("model", {}).get(key)
        if chosen:
            axes.plot(chosen["timeliness"], chosen["friendliness"], marker, markersize=12, color="crimson",
                      label=f"{'TSP-R' if cold_start else 'TSP model'}, threshold for {key[-2:]} % (validation)")
    axes.set(xlabel="timeliness (macro)", ylabel="friendliness (macro)", xlim=(0, 1.02), ylim=(0, 1.02),
             title=f"{result['sources_used']} sources, {result['tick']} ticks ({result['rows']})"
                   + (", cold start, held out by source" if cold_start else ""))
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="lower left")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
