"""view=cache's eviction what-ifs: the continuation re-scored teacher-forced with a smaller
cache (model.analysis.eviction), for one policy and budget, and the loss against the budget for
every policy side by side. The policy and the budget live in the link (`policy`, `budget`).
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from model.analysis.eviction import POLICIES, SINKS, heavy_bytes, least_budget
from model.dispatch import estimate_scan
from ui import cost
from ui.common import chart
from ui.context import Ctx
from ui.i18n import _
from ui.snapshots import cached_eviction, cached_sweep
from ui.state import link_int, seed, url_value
from ui.text import md
from viz import cache as viz_cache

DEFAULT_POLICY = "sinks"
DEFAULT_BUDGET = 16
SWEEP_AT_ONCE = 256  # longer texts wait for a button: 4 policies × several budgets of forwards
HEAVY_LIMIT = 256 << 20  # bytes the heavy policy may hold (its (L, H, n, n) keep mask)


def budgets_for(n: int) -> tuple[int, ...]:
    """Budgets for the chart: powers of two from 2, and the sizes just above the sinks, < n."""
    sizes = {2, SINKS + 1, SINKS + 2}
    b = 4
    while b < n:
        sizes.add(b)
        b *= 2
    return tuple(sorted(s for s in sizes if s < n))


def _seed_from_link(n: int) -> None:
    """policy= and budget= from the link, once; a bad value is a note and the default."""
    if "cache_policy" not in st.session_state:
        raw = url_value("policy")
        if raw is not None and raw not in POLICIES:
            st.warning(_("Unknown eviction policy {value} in the link; showing {name}.").format(
                value=md(repr(raw[:40])), name=DEFAULT_POLICY))
        st.session_state["cache_policy"] = raw if raw in POLICIES else DEFAULT_POLICY
    if "cache_budget" not in st.session_state:
        raw = url_value("budget")
        number = link_int(raw) if raw is not None else None
        if raw is not None and (number is None or not 1 <= number <= n):
            st.warning(_("Budget {value} from the link is not between 1 and {n}; showing "
                         "{d}.").format(value=md(repr(raw[:20])), n=n, d=min(DEFAULT_BUDGET, n)))
            number = None
        st.session_state["cache_budget"] = number if number is not None else min(
            DEFAULT_BUDGET, n)
    st.session_state["cache_budget"] = max(1, min(int(st.session_state["cache_budget"]), n))


def _policy_label(policy: str) -> str:
    return _(viz_cache.POLICY_LABELS[policy])


def _one(ctx: Ctx, g, ids: tuple[int, ...], start: int) -> dict:
    n = len(ids)
    c1, c2 = st.columns(2)
    policy = c1.selectbox(_("Eviction policy"), POLICIES, key="cache_policy",
                          format_func=_policy_label)
    budget = c2.slider(_("Cache budget (positions)"), 1, max(2, n), key="cache_budget")
    st.caption(_("Kept positions keep their original positions: the policy is an attention "
                 "mask, each query reading only what the cache would still hold. Window: the "
                 "last {b} positions; sinks + window: the first {s} and the last {w}; heavy "
                 "hitters: the last {r} and the keys that gathered the most attention so far "
                 "under the policy itself, per layer and head; no sink: every position but "
                 "the first.")
               .format(b=budget, s=SINKS, w=max(0, budget - SINKS), r=max(1, budget // 2)))
    if budget < least_budget(policy):
        st.info(_("The {policy} policy keeps at least {n} positions; showing a budget of {n}.")
                .format(policy=_policy_label(policy), n=least_budget(policy)))
        budget = least_budget(policy)
    if policy == "heavy" and heavy_bytes(ctx.bundle, n) > HEAVY_LIMIT:
        st.info(_("The heavy-hitter policy would hold {mb:,} MB for this text (a mask per "
                  "head); try a shorter text or another policy.").format(
            mb=heavy_bytes(ctx.bundle, n) >> 20))
        return {}
    try:
        ev = cached_eviction(ctx.bundle, ctx.key, ids, policy, int(budget), ctx.ablate)
    except ValueError as exc:
        st.info(str(exc))
        return {}
    steps = n - 1 - start
    full, kept = ev.full_loss[start:], ev.loss[start:]
    change = ev.first_change(start)
    m1, m2, m3 = st.columns(3)
    m1.metric(_("Mean loss, full cache"), f"{float(full.mean()):.3f}")
    m2.metric(_("Mean loss, {policy}").format(policy=_policy_label(policy)),
              f"{float(kept.mean()):.3f}", f"{float(kept.mean() - full.mean()):+.3f}",
              delta_color="inverse")
    m3.metric(_("Top-1 agreement"), f"{ev.agreement(start):.0%}")
    if change is None:
        st.markdown(_("The most likely next piece never changes over the {n} steps.").format(
            n=steps))
    else:
        st.markdown(_("The most likely next piece first changes at step {s}.").format(
            s=change - start))
    chart(viz_cache.loss_figure(full, kept, g.pieces[:steps], _policy_label(policy),
                                _("Loss of each generated piece, re-scored teacher-forced")),
          ctx)
    return {"policy": policy, "budget": int(budget), "loss": kept.tolist(),
            "full_loss": full.tolist(), "first_change": None if change is None
            else change - start, "agreement": ev.agreement(start)}


def sweep_seconds(ctx: Ctx, n: int, runs: int) -> float:
    """The budget chart's runs, each about one forward over the n positions (ui/cost.py): on
    the GPT-2-small shape 28 runs over 50 positions came to 4.4 s estimated, and the page took
    45 s on two busy cores without asking (heavy hitters step one piece per forward, which
    costs more than its operations say)."""
    dims = estimate_scan(ctx.bundle, ctx.lines[ctx.b], chunk=1).dims
    return 0.0 if dims is None else cost.seconds(replace(dims, batch=1, tgt=n), runs)


def _sweep(ctx: Ctx, ids: tuple[int, ...], start: int) -> dict:
    budgets = budgets_for(len(ids))
    if not budgets:
        return {}
    runs = len(budgets) * len(POLICIES)
    secs = sweep_seconds(ctx, len(ids), runs)
    if (len(ids) > SWEEP_AT_ONCE or cost.asks_first(secs)) and not st.button(
            _("Compute loss against budget ({n} runs, about {s:.0f} s)").format(n=runs, s=secs),
            key="cache_sweep"):
        return {}
    policies = tuple(p for p in POLICIES
                     if p != "heavy" or heavy_bytes(ctx.bundle, len(ids)) <= HEAVY_LIMIT)
    losses = cached_sweep(ctx.bundle, ctx.key, ids, budgets, start, ctx.ablate, policies)
    # a window of the whole text is the full cache (the same cached run as the metrics')
    whole = cached_eviction(ctx.bundle, ctx.key, ids, "window", len(ids), ctx.ablate)
    full_mean = float(whole.full_loss[start:].mean())
    chart(viz_cache.budget_figure(budgets, losses, full_mean,
                                  _("Mean loss of the continuation against the cache "
                                    "budget")), ctx)
    return {"budgets": list(budgets), "sweep": losses}


def render(ctx: Ctx, g) -> dict:
    """Draw the what-ifs for generation g; returns what the export adds."""
    st.subheader(_("Eviction what-ifs"))
    ids = tuple(g.all_ids)
    start = len(g.prompt_ids) - 1  # the prediction of the first generated piece
    if len(g.ids) < 1 or start < 0:
        st.info(_("Nothing was generated to re-score."))
        return {}
    _seed_from_link(len(ids))
    seed("cache_policy", DEFAULT_POLICY)
    out = _one(ctx, g, ids, start)
    out.update(_sweep(ctx, ids, start))
    return out
