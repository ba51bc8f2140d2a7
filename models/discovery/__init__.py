"""Discovery: the RL agent that clicks from a homepage to its event/news listing page, its training and
fine-tuning, the baselines it is measured against, the source-page classifier that says when it has arrived,
and their offline evaluation."""
