"""Analyses built on a Trace or on runs of the model: head statistics, alignment, ablation,
rollout, logit lens and the per-head weights the steps view shows."""
