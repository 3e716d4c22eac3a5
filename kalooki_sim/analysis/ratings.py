"""Ratings of agents from finishing orders: openskill, a maximum-likelihood Plackett–Luce fit and
Bradley–Terry, with a cross-check of their orderings.

A *finishing order* is the ranking of the seats of one played game (one hand, or one deal under one
seating of the lineup in a duplicate tournament): the winner first (higher ``win_share``), then
lower ``penalty``; equal outcomes are tied.  ``finishing_orders`` turns a per-row table into a long
table (one row per seat: game code, agent, rank) that every fitter here reads.

* ``openskill_ratings``: Weng & Lin (2011) Bayesian approximation, openskill's Plackett–Luce
  model, games fed in a fixed order (sorted by game key), so the result is deterministic.
* ``plackett_luce_mle``: maximum likelihood by Hunter's (2004) MM algorithm.  Strengths are
  ``theta = log gamma`` with ``mean(theta) = 0``.  **Ties are handled Breslow-style**: a tie group
  ``T`` leaving the remaining set ``R`` contributes ``prod_{i in T} gamma_i / (sum_{k in R}
  gamma_k) ** |T|`` (every tied member is "chosen" from the whole remaining set), which needs no
  enumeration of orders.  Standard errors from the observed information (pseudo-inverse under the
  sum-zero constraint), cluster-robust (sandwich) errors by deal when a cluster column is given,
  and an optional bootstrap over deals.
* ``bradley_terry``: pairwise wins inside each game (ties half a win each), MM fit, log scale.
* ``compare_ratings``: both orderings and their Kendall / Spearman rank correlation.
See docs/statistics.md.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from .stats import _as_list, _rng, _sort_key, t_quantile

__all__ = ["finishing_orders", "openskill_ratings", "plackett_luce_mle", "bradley_terry", "compare_ratings",
           "simulate_plackett_luce"]

Z95 = 1.959963984540054


# ------------------------------------------------------------------------------------------------
# finishing orders

def finishing_orders(df: pd.DataFrame, game=("game_id", "hand_no"), group: str = "agent", win: str = "win_share",
                     penalty: str | None = "penalty", cluster=None) -> pd.DataFrame:
    """Long table of finishing orders: columns ``game`` (0..n-1, in the sorted order of the
    ``game`` key columns), ``cluster`` (code of the deal, when ``cluster`` is given), ``group`` and
    ``rank`` (1 = best; competition ranks: tied rows share the best rank of their group, the next
    rank skips).  Ranked by ``win`` (higher first), then ``penalty`` (lower first; ``None`` to rank
    by ``win`` alone).  Rows are ordered by game, rank, then original order."""
    gcols = [c for c in _as_list(game) if c in df.columns]
    if not gcols:
        raise ValueError(f"none of the game columns {list(_as_list(game))} is in the table")
    code = df.groupby(gcols, sort=True).ngroup().to_numpy(np.int64)
    w = df[win].to_numpy(float)
    pen = df[penalty].to_numpy(float) if penalty is not None else np.zeros(len(df))
    order = np.lexsort((np.arange(len(df)), pen, -w, code))
    c, w, pen = code[order], w[order], pen[order]
    new_game = np.ones(len(df), bool)
    new_game[1:] = c[1:] != c[:-1]
    new_level = new_game.copy()
    new_level[1:] |= (w[1:] != w[:-1]) | (pen[1:] != pen[:-1])
    start = np.maximum.accumulate(np.where(new_game, np.arange(len(df)), 0))
    pos = np.arange(len(df)) - start + 1
    rank = np.maximum.accumulate(np.where(new_level, np.arange(len(df)), 0)) - start + 1
    rank = np.where(new_level, pos, rank)
    out = pd.DataFrame({"game": c, group: df[group].to_numpy()[order], "rank": rank.astype(np.int64)})
    if cluster is not None:
        from .stats import cluster_codes

        out.insert(1, "cluster", cluster_codes(df, cluster)[order])
    out.attrs.update(group=group, n_rows=len(df), n_games=int(c.max()) + 1 if len(df) else 0)
    if cluster is not None:
        out.attrs["n_deals"] = int(out["cluster"].max()) + 1 if len(df) else 0
    return out


def _group_of(orders: pd.DataFrame, group: str | None) -> str:
    if group is not None:
        return group
    g = orders.attrs.get("group")
    if g is None:
        cols = [c for c in orders.columns if c not in ("game", "cluster", "rank")]
        if len(cols) != 1:
            raise ValueError("pass group= (the column naming the agent)")
        g = cols[0]
    return g


def _agents(orders, group):
    return sorted(pd.unique(orders[group]), key=_sort_key)


# ------------------------------------------------------------------------------------------------
# openskill

def openskill_ratings(orders: pd.DataFrame, group: str | None = None, model=None) -> pd.DataFrame:
    """openskill (Weng & Lin 2011) ratings, default model ``PlackettLuce()``.

    Games are rated one after the other in the order of their ``game`` code (deterministic).  An
    agent that holds several seats of one game is rated with the mean of its seats' updates.
    Columns: group, mu, sigma, ordinal (``mu - 3 sigma``), n_games, rank (by ordinal, 1 = best).
    """
    from openskill.models import PlackettLuce

    group = _group_of(orders, group)
    model = model or PlackettLuce()
    agents = _agents(orders, group)
    ratings = {a: model.rating(name=str(a)) for a in agents}
    games = {a: 0 for a in agents}
    o = orders.sort_values(["game", "rank"], kind="stable")
    g = o["game"].to_numpy()
    who = o[group].to_numpy()
    rk = o["rank"].to_numpy()
    bounds = np.flatnonzero(np.r_[True, g[1:] != g[:-1], True])
    for s, e in zip(bounds[:-1], bounds[1:]):
        seats = who[s:e]
        if len(seats) < 2:
            continue
        new = model.rate([[ratings[a]] for a in seats], ranks=[int(r) for r in rk[s:e]])
        upd: dict = {}
        for a, team in zip(seats, new):
            upd.setdefault(a, []).append(team[0])
        for a, rs in upd.items():
            if len(rs) == 1:            # one seat: its update as it is (the mean of one value)
                ratings[a] = rs[0]
            else:
                ratings[a] = model.rating(mu=sum(x.mu for x in rs) / len(rs),
                                          sigma=sum(x.sigma for x in rs) / len(rs), name=str(a))
            games[a] += 1
    out = pd.DataFrame({group: agents, "mu": [ratings[a].mu for a in agents],
                        "sigma": [ratings[a].sigma for a in agents],
                        "ordinal": [ratings[a].mu - 3 * ratings[a].sigma for a in agents],
                        "n_games": [games[a] for a in agents]})
    out["rank"] = out["ordinal"].rank(ascending=False, method="min").astype(int)
    out.attrs.update(n_games=int(orders["game"].nunique()), n_rows=len(orders))
    return out


# ------------------------------------------------------------------------------------------------
# Plackett–Luce maximum likelihood (Hunter 2004 MM), Breslow ties

def _stages(orders, group, agents):
    """Choice stages of every game: counts of each agent in the remaining set R (``cr``) and in
    the chosen tie group T (``ct``), |T| (``m``) and the game's cluster (or game) code."""
    idx = {a: i for i, a in enumerate(agents)}
    a_code = np.array([idx[a] for a in orders[group].to_numpy()], dtype=np.int64)
    g = orders["game"].to_numpy(np.int64)
    rank = orders["rank"].to_numpy(np.int64)
    clus = orders["cluster"].to_numpy(np.int64) if "cluster" in orders.columns else g
    # level = dense rank - 1 within the game
    lev = pd.Series(rank).groupby(g).rank(method="dense").to_numpy(np.int64) - 1
    n_games = int(g.max()) + 1
    n_lev = np.zeros(n_games, np.int64)
    np.maximum.at(n_lev, g, lev + 1)
    size_last = np.zeros(n_games, np.int64)
    np.add.at(size_last, g, (lev == n_lev[g] - 1).astype(np.int64))
    game_clus = np.zeros(n_games, np.int64)
    game_clus[g] = clus
    A = len(agents)
    crs, cts, ms, cls = [], [], [], []
    for k in range(int(n_lev.max())):
        cr = np.zeros((n_games, A))
        ct = np.zeros((n_games, A))
        inr = lev >= k
        np.add.at(cr, (g[inr], a_code[inr]), 1.0)
        t = lev == k
        np.add.at(ct, (g[t], a_code[t]), 1.0)
        # a stage exists where the game has level k, unless it is a single seat left alone last
        keep = (n_lev > k) & ~((k == n_lev - 1) & (size_last == 1))
        crs.append(cr[keep])
        cts.append(ct[keep])
        ms.append(ct[keep].sum(axis=1))
        cls.append(game_clus[keep])
    return np.vstack(crs), np.vstack(cts), np.concatenate(ms), np.concatenate(cls)


def _pl_fit(cr, ct, m, wt, max_iter, tol):
    """MM iterations; returns (theta with mean 0, iterations, converged)."""
    wins = wt @ ct
    gam = np.ones(cr.shape[1])
    for it in range(1, max_iter + 1):
        x = cr @ gam
        denom = (wt * m / x) @ cr
        new = wins / denom
        new /= math.exp(np.log(new).mean())
        delta = np.max(np.abs(np.log(new) - np.log(gam)))
        gam = new
        if delta < tol:
            return np.log(gam), it, True
    return np.log(gam), max_iter, False


def _pl_info(cr, ct, m, theta):
    gam = np.exp(theta)
    x = cr @ gam
    p = cr * gam / x[:, None]
    info = np.diag((m[:, None] * p).sum(axis=0)) - (p * m[:, None]).T @ p
    score = ct - m[:, None] * p
    loglik = float((ct @ theta).sum() - (m * np.log(x)).sum())
    return info, score, loglik


def _sum_zero_inverse(info):
    """Covariance of log strengths under ``sum(theta) = 0``: the pseudo-inverse of an information
    matrix whose null space is the all-ones vector, computed as ``inv(I + u u') - u u'``."""
    n = info.shape[0]
    uu = np.full((n, n), 1.0 / n)
    return np.linalg.inv(info + uu) - uu


def _check_identifiable(cr, ct, m, agents):
    wins = ct.sum(axis=0)
    losses = (cr - ct).sum(axis=0)          # times in a remaining set without being chosen
    bad = [str(a) for a, w, lo in zip(agents, wins, losses) if w == 0 or lo == 0]
    if bad:
        raise ValueError(f"Plackett-Luce strengths are not identifiable: {', '.join(bad)} never "
                         "chosen at some stage or never beaten (an infinite strength); play more games")


def plackett_luce_mle(orders: pd.DataFrame, group: str | None = None, level: float = 0.95, n_boot: int = 0,
                      seed=0, max_iter: int = 20_000, tol: float = 1e-10) -> pd.DataFrame:
    """Maximum-likelihood Plackett–Luce strengths (log scale, mean 0) by Hunter's MM algorithm.

    Ties: Breslow-style (see the module docstring).  Columns: group, strength, se, lo, hi (normal
    interval from the observed information; treats games as independent), and when ``orders``
    has a ``cluster`` column also se_cluster, lo_cluster, hi_cluster (sandwich over deals, CR1
    factor, t with n_deals - 1 df), with ``n_boot > 0`` boot_lo, boot_hi (percentile bootstrap
    resampling deals, or games without a cluster column), n_games, rank (1 = strongest).
    ``frame.attrs``: loglik, n_iter, converged, n_games, n_deals.
    """
    group = _group_of(orders, group)
    agents = _agents(orders, group)
    cr, ct, m, cl = _stages(orders, group, agents)
    _check_identifiable(cr, ct, m, agents)
    theta, n_iter, ok = _pl_fit(cr, ct, m, np.ones(len(m)), max_iter, tol)
    if not ok:
        warnings.warn(f"Plackett-Luce MM did not converge in {max_iter} iterations", RuntimeWarning, stacklevel=2)
    info, score, loglik = _pl_info(cr, ct, m, theta)
    cov = _sum_zero_inverse(info)
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + level / 2)
    n_games = orders.groupby(group)["game"].nunique()
    out = pd.DataFrame({group: agents, "strength": theta, "se": se, "lo": theta - z * se, "hi": theta + z * se})
    n_deals = None
    if "cluster" in orders.columns:
        codes, clus = np.unique(cl, return_inverse=True)
        n_deals = len(codes)
        sc = np.zeros((n_deals, len(agents)))
        np.add.at(sc, clus, score)
        meat = sc.T @ sc * (n_deals / (n_deals - 1) if n_deals > 1 else math.nan)
        cov_c = cov @ meat @ cov
        se_c = np.sqrt(np.clip(np.diag(cov_c), 0, None))
        tq = t_quantile(level, n_deals - 1)
        out["se_cluster"] = se_c
        out["lo_cluster"] = theta - tq * se_c
        out["hi_cluster"] = theta + tq * se_c
    if n_boot > 0:
        rng = _rng(seed)
        codes, clus = np.unique(cl, return_inverse=True)
        G = len(codes)
        draws = []
        for _ in range(n_boot):
            w = np.bincount(rng.integers(0, G, G), minlength=G)[clus].astype(float)
            wins = w @ ct
            losses = w @ (cr - ct)
            if np.any(wins == 0) or np.any(losses == 0):
                continue                              # a replicate without the information: skip
            th, _, _ = _pl_fit(cr, ct, m, w, max_iter, tol * 100)
            draws.append(th)
        d = np.array(draws)
        alpha = (1 - level) / 2
        out["boot_lo"] = np.quantile(d, alpha, axis=0) if len(d) else math.nan
        out["boot_hi"] = np.quantile(d, 1 - alpha, axis=0) if len(d) else math.nan
        out.attrs["n_boot_used"] = len(d)
    out["n_games"] = [int(n_games.get(a, 0)) for a in agents]
    out["rank"] = out["strength"].rank(ascending=False, method="min").astype(int)
    out.attrs.update(loglik=loglik, n_iter=n_iter, converged=ok, n_games=int(orders["game"].nunique()),
                     n_rows=len(orders), n_deals=n_deals if n_deals is not None else int(orders["game"].nunique()))
    return out


# ------------------------------------------------------------------------------------------------
# Bradley–Terry from pairwise results inside each game

def bradley_terry(orders: pd.DataFrame, group: str | None = None, level: float = 0.95, max_iter: int = 20_000,
                  tol: float = 1e-10) -> pd.DataFrame:
    """Bradley–Terry strengths (log scale, mean 0) from every pair of seats of every game held by
    different agents: the better-ranked one wins, a tie is half a win each.  MM fit (Hunter 2004);
    normal interval from the observed information (pairs treated as independent: the interval is
    too narrow when pairs share games, use it for ordering).  Columns: group, strength, se, lo, hi,
    wins, comparisons, rank."""
    group = _group_of(orders, group)
    agents = _agents(orders, group)
    idx = {a: i for i, a in enumerate(agents)}
    A = len(agents)
    o = orders.sort_values(["game", "rank"], kind="stable")
    g = o["game"].to_numpy(np.int64)
    pos = o.groupby("game").cumcount().to_numpy()
    width = int(pos.max()) + 1
    n_games = int(g.max()) + 1
    who = np.full((n_games, width), -1, np.int64)
    rk = np.zeros((n_games, width), np.int64)
    who[g, pos] = [idx[a] for a in o[group].to_numpy()]
    rk[g, pos] = o["rank"].to_numpy()
    W = np.zeros((A, A))
    for u in range(width):
        for v in range(u + 1, width):
            ok = (who[:, u] >= 0) & (who[:, v] >= 0) & (who[:, u] != who[:, v])
            i, j = who[ok, u], who[ok, v]
            ri, rj = rk[ok, u], rk[ok, v]
            wi = np.where(ri < rj, 1.0, np.where(ri == rj, 0.5, 0.0))
            np.add.at(W, (i, j), wi)
            np.add.at(W, (j, i), 1.0 - wi)
    N = W + W.T
    wins = W.sum(axis=1)
    if np.any(wins == 0) or np.any(wins == N.sum(axis=1)):
        raise ValueError("Bradley-Terry strengths are not identifiable: an agent never won or never lost a pair")
    gam = np.ones(A)
    ok = False
    for _ in range(max_iter):
        denom = (N / (gam[:, None] + gam[None, :])).sum(axis=1)
        new = wins / denom
        new /= math.exp(np.log(new).mean())
        delta = np.max(np.abs(np.log(new) - np.log(gam)))
        gam = new
        if delta < tol:
            ok = True
            break
    theta = np.log(gam)
    p = gam[:, None] / (gam[:, None] + gam[None, :])
    off = N * p * p.T
    info = np.diag(off.sum(axis=1)) - off
    se = np.sqrt(np.clip(np.diag(_sum_zero_inverse(info)), 0, None))
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + level / 2)
    out = pd.DataFrame({group: agents, "strength": theta, "se": se, "lo": theta - z * se, "hi": theta + z * se,
                        "wins": wins, "comparisons": N.sum(axis=1)})
    out["rank"] = out["strength"].rank(ascending=False, method="min").astype(int)
    out.attrs.update(converged=ok, n_games=n_games, n_rows=len(orders))
    return out


# ------------------------------------------------------------------------------------------------
# cross-check

def compare_ratings(orders: pd.DataFrame, group: str | None = None, model=None) -> dict:
    """openskill and Plackett–Luce MLE side by side (and Bradley–Terry when identifiable).

    Returns ``{"table", "kendall_tau", "spearman", "same_order"}``: ``table`` has per agent
    openskill ``mu``, ``sigma``, ``ordinal``, ``rank_openskill`` and the MLE ``strength``, ``se``,
    ``rank_mle`` (and ``strength_bt``, ``rank_bt``); the correlations compare openskill's ``mu``
    with the MLE strength; ``same_order``: the two rankings agree exactly.
    """
    from scipy.stats import kendalltau, spearmanr

    group = _group_of(orders, group)
    os_ = openskill_ratings(orders, group, model).rename(columns={"rank": "rank_openskill"})
    pl = plackett_luce_mle(orders, group)[[group, "strength", "se", "rank"]].rename(columns={"rank": "rank_mle"})
    table = os_.merge(pl, on=group)
    try:
        bt = bradley_terry(orders, group)[[group, "strength", "rank"]]
        table = table.merge(bt.rename(columns={"strength": "strength_bt", "rank": "rank_bt"}), on=group)
    except ValueError:
        pass
    n = len(table)
    tau = float(kendalltau(table["mu"], table["strength"]).statistic) if n > 1 else math.nan
    rho = float(spearmanr(table["mu"], table["strength"]).statistic) if n > 1 else math.nan
    same = list(table.sort_values("mu", ascending=False)[group]) == list(
        table.sort_values("strength", ascending=False)[group])
    return {"table": table, "kendall_tau": tau, "spearman": rho, "same_order": bool(same)}


def simulate_plackett_luce(strengths, n_games: int, seats: int | None = None, seed=0,
                           agents=None) -> pd.DataFrame:
    """Finishing orders drawn from a Plackett–Luce model (for tests): each game seats ``seats``
    distinct agents chosen at random (all when ``None``) and ranks them by ``theta + Gumbel`` noise
    (the Gumbel-max construction of Plackett–Luce).  Columns: game, agent, rank."""
    rng = _rng(seed)
    th = np.asarray(strengths, float)
    A = th.size
    k = A if seats is None else int(seats)
    names = np.asarray(agents if agents is not None else [f"a{i}" for i in range(A)], dtype=object)
    who = np.argsort(rng.random((n_games, A)), axis=1)[:, :k]
    u = th[who] + rng.gumbel(size=(n_games, k))
    order = np.argsort(-u, axis=1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(1, k + 1)[None, :].repeat(n_games, 0), axis=1)
    out = pd.DataFrame({"game": np.repeat(np.arange(n_games), k), "agent": names[who.ravel()],
                        "rank": rank.ravel()})
    out.attrs["group"] = "agent"
    return out
