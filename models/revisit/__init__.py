"""Revisits: the TSP model that predicts when a watched page gains items, the baselines, honest-observation
rollouts, training and evaluation on update series."""
