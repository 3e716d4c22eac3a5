"""Decisions labelled by an expert, on the states a learner reaches: the data of behaviour cloning,
DAgger and expert iteration (``experiments/train_selfplay.py``), generated as a study.

A task plays whole episodes, one per row of a lockstep batch (``runtime.env.KalookiVecEnv``: the
learner's seat rotated game by game among compiled opponents) and, at every learner decision with more than
one legal action, records the observation, the legal actions and what the *teacher* would play
there: a compiled strategy (``env.compiled_actions``) or a driven one, the search
(``agents.search_policy``: it reads the engine's state, on the deciding seat's own random stream),
with what the search compared where it searched: its candidates and each one's mean gain in value
over its base's action and that gain's standard error (``agents.search.search_decision``), so a
network can learn how sure the search was, not only its choice.
Who actually plays the learner's seat is the teacher itself (round 0: cloning, the teacher's own
states) or a network checkpoint (later rounds: the network's states, labelled by the teacher).

Tasks are pure functions of their arguments, so they run on the study runner's backends (this
process, or Ray workers: ``runner.run_tasks``), a round's shards already on disk are not played
again, and both backends give the same rows.  A decision is stored sparsely (an observation has
120 to 170 non-zero entries of 3,737; a decision a handful of legal ids of 3,762): the table's
columns ``obs_index`` (int16 list), ``obs_value`` (float32 list), ``legal`` (int16 list),
``label``, ``game_id``, ``seat``, ``round``, and the search's ``candidates`` (int16 list),
``gain`` and ``gain_se`` (float32 lists; empty where nothing was searched).  ``read_decisions`` gives them back as compressed rows for
training (``Decisions``: ``batch(idx)`` builds the dense tensors of a minibatch).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["Decisions", "label_shard", "read_decisions", "shard_first_game", "strategy_chooser"]

ROUND_GAMES = 10**9          # game ids of round r start at r * ROUND_GAMES (EVAL deals sit at 10**12)


def shard_first_game(round_: int, shard: int, episodes: int) -> int:
    """The first deal of a shard of ``episodes`` episodes: consecutive shards, and rounds, never
    share a deal."""
    return round_ * ROUND_GAMES + shard * episodes


def strategy_chooser(name: str, rules):
    """``f(env, rng, rows=None) -> actions`` of the strategy ``name`` at the pending decision of
    the env's rows ``rows`` (default every row; the other rows' entries are unspecified): a
    compiled strategy through ``env.compiled_actions``, one played from Python (a network, the
    search) through ``policy_play.policy_actions``, as tournaments ask it (checked legal), on
    those rows only (the search's price is per row asked)."""
    from kalooki_sim.runtime.policy_play import policy_actions
    from kalooki_sim.runtime.strategies import learned_policy, load_strategy

    s = load_strategy(name)
    if not s.learned:
        return lambda env, rng, rows=None: env.compiled_actions(name)
    pol = learned_policy(s, rules)

    def choose(env, rng, rows=None):
        rows = np.arange(env.batch, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
        actions = np.zeros(env.batch, dtype=np.int64)
        actions[rows] = policy_actions(pol, env.obs[rows], env.mask[rows], rng, (env.la, env.rv), rows)
        return actions

    return choose


def label_shard(variant, players: int, mode: str, opponents: tuple, teacher: str, checkpoint: str | None,
                first_game: int, episodes: int, seed: int, round_: int, shard: int) -> dict:
    """One task: the whole episodes (hands or matches, by ``mode``) of the deals ``first_game ..
    first_game + episodes - 1``, one per row of a lockstep batch, so the decisions recorded are
    spread over every stage of a game as play reaches them (a fixed number of steps from the
    deal would record only the opening turns); the learner's seat played by ``teacher``
    (``checkpoint`` None) or by the network in ``checkpoint`` (its sampled choices, on a
    generator seeded by ``(seed, round_, shard)``)."""
    from kalooki_sim import load_rules
    from kalooki_sim.runtime.env import KalookiVecEnv
    from kalooki_sim.runtime.policy_play import checked_actions
    from kalooki_sim.runtime.strategies import learned_policy, load_strategy

    rules = load_rules(variant)
    episode = "match" if mode == "matches" else "hand"
    deals = first_game + np.arange(episodes, dtype=np.int64)
    env = KalookiVecEnv(rules, players, batch=episodes, lineup=["learner", *opponents], rotate=True, seed=seed,
                        episode_games=deals, episode=episode, reward=episode)
    s = load_strategy(teacher)
    if s.learned and not s.driven:
        raise ValueError(f"teacher {teacher}: a compiled or search strategy is needed, not a checkpoint or "
                         f"Python policy")
    searcher = learned_policy(s, rules) if s.driven else None        # its comparisons are recorded too
    labels = strategy_chooser(teacher, rules) if searcher is None else None
    learner = None
    if checkpoint is not None:
        from kalooki_sim.agents.learned import LearnedPolicy, load_checkpoint

        learner = LearnedPolicy(load_checkpoint(checkpoint, rules)[0])
    gen = np.random.default_rng([seed, round_, shard])
    obs, mask, info = env.reset()
    cols = {k: [] for k in ("obs_count", "obs_index", "obs_value", "legal_count", "legal", "label", "game_id", "seat",
                            "cand_count", "candidates", "gain", "gain_se")}
    while True:
        live = np.flatnonzero(~env.parked)          # a finished episode's row waits for the others
        if not live.size:
            break
        if searcher is None:
            label = labels(env, gen, live)
        else:
            found = searcher.search(env.la, env.rv, live)
            label = np.zeros(env.batch, dtype=np.int64)
            label[live] = checked_actions(teacher, found.actions, env.mask[live])
        choosing = env.n_legal[live] > 1
        keep = live[choosing]
        if keep.size:
            o = np.asarray(obs[keep])
            r, c = np.nonzero(o)
            n_legal = env.n_legal[keep]
            ids = env.legal_ids[keep]
            cols["obs_count"].append(np.bincount(r, minlength=keep.size))
            cols["obs_index"].append(c.astype(np.int16))
            cols["obs_value"].append(o[r, c].astype(np.float32))
            cols["legal_count"].append(n_legal)
            cols["legal"].append(ids[np.arange(ids.shape[1]) < n_legal[:, None]].astype(np.int16))
            cols["label"].append(label[keep])
            cols["game_id"].append(deals[np.asarray(info["game_id"])[keep]])
            cols["seat"].append(np.asarray(info["seat"])[keep])
            if searcher is None:
                cols["cand_count"].append(np.zeros(keep.size, dtype=np.int64))
            else:
                n_cand = found.n_candidates[choosing]
                took = np.arange(found.candidates.shape[1]) < n_cand[:, None]
                cols["cand_count"].append(n_cand)
                cols["candidates"].append(found.candidates[choosing][took].astype(np.int16))
                cols["gain"].append(found.gains[choosing][took].astype(np.float32))
                cols["gain_se"].append(found.se[choosing][took].astype(np.float32))
        if learner is None:
            play = label
        else:
            play = np.zeros(env.batch, dtype=np.int64)
            play[live] = learner.act(obs[live], mask[live], gen)
        obs, mask, _, _, info = env.step(play)
    flat = {k: np.concatenate(v) if v else np.zeros(0, dtype=np.int64) for k, v in cols.items()}
    df = pd.DataFrame({"obs_index": _lists(flat["obs_count"], flat["obs_index"], np.int16),
                       "obs_value": _lists(flat["obs_count"], flat["obs_value"], np.float32),
                       "legal": _lists(flat["legal_count"], flat["legal"], np.int16),
                       "candidates": _lists(flat["cand_count"], flat["candidates"], np.int16),
                       "gain": _lists(flat["cand_count"], flat["gain"], np.float32),
                       "gain_se": _lists(flat["cand_count"], flat["gain_se"], np.float32),
                       **{k: flat[k].astype(np.int64) for k in ("label", "game_id", "seat")}})
    df["round"] = np.int32(round_)
    return {"decisions": df}


def _lists(counts, values, dtype):
    """A list column of ``values`` cut by ``counts`` (arrow cuts them: one array per row made in C++)."""
    import pyarrow as pa

    offsets = np.zeros(len(counts) + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    arr = pa.ListArray.from_arrays(pa.array(offsets), pa.array(np.asarray(values, dtype=dtype)))
    return arr.to_numpy(zero_copy_only=False)


# the kinds of action ``action_kind`` names (the engine's action texts, one word each)
ACTION_KINDS = ("pass", "call", "allow", "deny", "draw-stock", "draw-discard", "lay-down", "discard", "tack", "other")


def action_kind(actions) -> np.ndarray:
    """The kind of each action id (``ACTION_KINDS``): the search's departures are told apart by it
    (``experiments/search_consistency.py``, ``Decisions.keep_base_labels``)."""
    from kalooki_sim.engine import layout as L

    a = np.asarray(actions)
    return np.select([a == L.A_PASS, a == L.A_CALL, a == L.A_ALLOW, a == L.A_DENY, a == L.A_DRAW_STOCK,
                      a == L.A_DRAW_DISCARD, a == L.A_LAY, (a >= L.A_DISCARD) & (a < L.A_TACK),
                      (a >= L.A_TACK) & (a < L.A_MOVE)], list(ACTION_KINDS[:-1]), ACTION_KINDS[-1])


def check_action_kinds(kinds) -> None:
    """``ValueError`` naming the kinds in ``kinds`` that are not ``ACTION_KINDS``."""
    unknown = sorted(set(kinds) - set(ACTION_KINDS))
    if unknown:
        raise ValueError(f"unknown kinds of action {unknown}; the kinds are {', '.join(ACTION_KINDS)}")


@dataclass
class Decisions:
    """Labelled decisions in compressed rows: observation ``k``'s non-zero entries are
    ``obs_index/obs_value[obs_ptr[k]:obs_ptr[k + 1]]``, its legal ids
    ``legal[legal_ptr[k]:legal_ptr[k + 1]]``, the search's candidates, gains and their standard
    errors ``candidates/gain/gain_se[cand_ptr[k]:cand_ptr[k + 1]]`` (none where it did not search)."""

    obs_ptr: np.ndarray
    obs_index: np.ndarray
    obs_value: np.ndarray
    legal_ptr: np.ndarray
    legal: np.ndarray
    label: np.ndarray
    round: np.ndarray
    cand_ptr: np.ndarray
    candidates: np.ndarray
    gain: np.ndarray
    gain_se: np.ndarray

    def __len__(self) -> int:
        return self.label.size

    def batch(self, idx: np.ndarray, obs_dim: int, n_actions: int):
        """Dense ``(obs float32[len(idx), obs_dim], mask bool[len(idx), n_actions], label)``."""
        idx = np.asarray(idx, dtype=np.int64)
        obs = np.zeros((idx.size, obs_dim), dtype=np.float32)
        mask = np.zeros((idx.size, n_actions), dtype=np.bool_)
        for out, ptr, cols, vals in ((obs, self.obs_ptr, self.obs_index, self.obs_value),
                                     (mask, self.legal_ptr, self.legal, None)):
            lo, hi = ptr[idx], ptr[idx + 1]
            n = hi - lo
            rows = np.repeat(np.arange(idx.size), n)
            at = np.repeat(lo - np.cumsum(n) + n, n) + np.arange(n.sum())
            out[rows, cols[at]] = True if vals is None else vals[at]
        return obs, mask, self.label[idx]

    def keep_base_labels(self, kinds) -> int:
        """At the decisions the search compared candidates where its base's action is of one of
        ``kinds`` (``ACTION_KINDS``), make the label the base's action: the search's departures
        there are not taught.  Returns how many labels changed.  The Caribbean search's passes
        where its base calls repeat on other random streams yet cost a network that learns them 8
        points (docs/learned-agents.md)."""
        check_action_kinds(kinds)
        rows = np.flatnonzero(np.diff(self.cand_ptr) > 0)
        base = self.candidates[self.cand_ptr[rows]]
        keep = np.isin(action_kind(base), list(kinds))
        rows, base = rows[keep], base[keep]
        changed = int((self.label[rows] != base).sum())
        self.label[rows] = base
        return changed

    def searched(self, idx: np.ndarray):
        """The search's comparisons at the decisions ``idx``, flat: ``(row, candidate, gain, se)``,
        ``row`` the place in ``idx`` (decisions it did not search have none)."""
        idx = np.asarray(idx, dtype=np.int64)
        lo, hi = self.cand_ptr[idx], self.cand_ptr[idx + 1]
        n = hi - lo
        at = np.repeat(lo - np.cumsum(n) + n, n) + np.arange(n.sum())
        return np.repeat(np.arange(idx.size), n), self.candidates[at], self.gain[at], self.gain_se[at]


def _list_column(table, name):
    col = table.column(name).combine_chunks()
    return np.asarray(col.offsets, dtype=np.int64), col.values.to_numpy(zero_copy_only=False)


def read_decisions(path: Path | str, tables) -> Decisions:
    """Every shard of the tables ``tables`` (names) under the run directory ``path``, table by
    table in the order given, each in shard order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = [f for name in tables for f in sorted((Path(path) / name).glob("shard-*.parquet"))]
    if not files:
        raise FileNotFoundError(f"{path}: no shards of {', '.join(tables)}")
    t = pa.concat_tables([_with_search_columns(pq.read_table(f)) for f in files])
    obs_ptr, obs_index = _list_column(t, "obs_index")
    _, obs_value = _list_column(t, "obs_value")
    legal_ptr, legal = _list_column(t, "legal")
    cand_ptr, candidates = _list_column(t, "candidates")
    _, gain = _list_column(t, "gain")
    _, gain_se = _list_column(t, "gain_se")
    return Decisions(obs_ptr, obs_index.astype(np.int64), obs_value.astype(np.float32), legal_ptr,
                     legal.astype(np.int64), t.column("label").to_numpy().astype(np.int64),
                     t.column("round").to_numpy(), cand_ptr, candidates.astype(np.int64),
                     gain.astype(np.float64), gain_se.astype(np.float64))


def _with_search_columns(table):
    """A shard's table in one layout, the search's columns included (shards written before they
    existed have none: every decision unsearched), so the shards of every round concatenate."""
    import pyarrow as pa

    item = table.schema.field("legal").type.value_field.name      # as the parquet writer named it
    for name, kind in (("candidates", pa.int16()), ("gain", pa.float32()), ("gain_se", pa.float32())):
        want = pa.list_(pa.field(item, kind))
        if name not in table.column_names:
            table = table.append_column(name, pa.array([[]] * table.num_rows, type=want))
        elif table.schema.field(name).type != want:
            table = table.set_column(table.column_names.index(name), name, table.column(name).cast(want))
    return table.select(sorted(table.column_names))
