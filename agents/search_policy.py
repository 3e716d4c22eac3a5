"""The search agent's seats, played from Python: the lockstep env's driver of ``agents.search``.

The search (``agents/search.py``) is a *driven* agent (``agents/declare.py``): its kernel rolls
whole hands out with another agent in every seat, and compiling it into the closed loop's dispatch
would multiply the cold compile of every loop, searched or not.  Its seats are therefore played as
learned ones are (``runtime.policy_play``: ``simulate``, tournaments, ``play``), with one compiled
call per env step over every row where a search seat decides (``search_rows``, its rows split
over ``numba.get_num_threads()`` threads).  It reads the engine's state rather than the
observation, and draws on the deciding seat's own random stream exactly as the closed loop would:
a search seat plays the same games in any batch and on any number of threads, and its decisions
depend only on what the seat can see (``tests/test_search.py``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kalooki_sim.core.lanes import run_lanes

from .base import fill_params, policy_id
from .search import MAX_CANDIDATES, search_rows

__all__ = ["SearchPolicy", "Searched"]

SEARCH = policy_id("search")


class Searched(NamedTuple):
    """The search's decisions at a batch of rows, and what it compared at each: row ``i`` chose
    ``actions[i]`` among ``n_candidates[i]`` candidates ``candidates[i, :n]`` (the base's action
    first), whose mean gains in value over the base's action are ``gains[i, :n]`` with standard
    errors ``se[i, :n]`` (paired over the worlds; ``agents.search.search_decision``); 0 candidates
    where the decision was not searched."""
    actions: np.ndarray
    n_candidates: np.ndarray
    candidates: np.ndarray
    gains: np.ndarray
    se: np.ndarray


class SearchPolicy:
    """One parameter row of the search agent as a policy played from Python: ``act_state(la, rv,
    rows)`` (``runtime.policy_play`` and ``play`` call it instead of ``act``)."""

    def __init__(self, params=None, name: str = "search"):
        self.params = fill_params(SEARCH, None if params is None else np.asarray(params, dtype=np.float64)[None],
                                  f"{name} params")[0]
        self.name = name

    def act_state(self, la, rv, rows) -> np.ndarray:
        """The search's actions at the pending decisions of game rows ``rows`` of ``la`` (a
        ``runtime.loop.LoopArrays``: the state, the match sheet and every seat's random stream)
        under the rule vector ``rv``."""
        return self.search(la, rv, rows).actions

    def search(self, la, rv, rows) -> Searched:
        """``act_state``'s decisions with what the search compared at each (``Searched``)."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        n = rows.size
        out = np.empty(n, dtype=np.int64)
        n_cand = np.zeros(n, dtype=np.int64)
        cand = np.zeros((n, MAX_CANDIDATES), dtype=np.int64)
        gain = np.zeros((n, MAX_CANDIDATES), dtype=np.float64)
        se = np.zeros((n, MAX_CANDIDATES), dtype=np.float64)
        params = np.ascontiguousarray(np.broadcast_to(self.params, (n, self.params.size)))
        # a searched decision costs milliseconds: every row is worth a thread (rows are independent,
        # so the split never changes a result)
        run_lanes(search_rows, n, params, la.state.arrays(), rv, rows, la.sp, la.keys, la.ctrs, out, n_cand, cand,
                  gain, se)
        return Searched(out, n_cand, cand, gain, se)

    def act(self, obs, legal, rng):
        raise TypeError(f"{self.name}: the search reads the engine's state, not an observation; it plays "
                        f"through runtime.policy_play (play_policies, play_schedule) and play, which call "
                        f"act_state")
