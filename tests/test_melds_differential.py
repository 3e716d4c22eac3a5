"""Differential tests: the compiled meld engine (``kalooki_sim.melds``) against the slow reference.

For every preset (and K40 with house variation V4) the public API must agree with
``kalooki_sim.melds.reference`` on thousands of seeded random inputs built by ``kalooki_sim.testing``
(hands around Caribbean contracts and points openings, joker-heavy and duplicate-heavy hands,
legal and nearly-legal meld candidates):

* ``best_lay_down``: the same minimum penalty (or both None), and the kernel's lay-down must itself be
  valid per the reference (legal melds, melds + left == hand, penalty == penalty of left, contract met
  or opening minimum reached);
* ``is_legal_meld`` for every kind, ``meld_value``, ``opening_value``, ``meets_contract`` and
  ``scoring.hand_penalty``.

Each failure message prints the input and both answers.  The kernels are imported once at module
level, so their compilation (or cache load) is shared by all tests of a worker.  Work is split into
chunks so that ``pytest -n 2`` spreads it over both cores.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from kalooki_sim import load_rules, melds as M
from kalooki_sim.core.scoring import hand_penalty
from kalooki_sim.melds.reference import (
    ref_best_lay_down, ref_hand_penalty, ref_is_legal_meld, ref_meets_contract, ref_meld_value, ref_opening_value,
)
from kalooki_sim.testing import lay_down_problems, random_meld_candidate, random_test_hand

PRESETS = ["caribbean", "k40", "k51", "k101", "na15", "american", "k40+v4"]
N_HANDS = 5000            # per preset (Caribbean: spread evenly over the 9 rounds)
N_MELDS = 5000            # per preset, each checked for every kind and for its value
N_GROUPS = 1500           # per preset, meld groups for opening_value / meets_contract
HAND_CHUNKS = 3           # chunks per preset so pytest-xdist can balance the load
MAX_SHOWN = 8             # mismatches printed in full per failing test
SEED = 20261130

RULES = {p: load_rules(p) for p in PRESETS}


def _rng(preset: str, purpose: str, chunk: int = 0) -> np.random.Generator:
    """A fixed, process-independent seed per (preset, purpose, chunk)."""
    return np.random.default_rng([SEED, zlib.crc32(preset.encode()), zlib.crc32(purpose.encode()), chunk])


def _round_of(rules, i: int):
    """Contract variants cycle through every round; points variants have none."""
    return i % len(rules.contracts) + 1 if rules.opening_mode == "contract" else None


def _report(failures: list[str], total: int, what: str) -> str:
    shown = "\n\n".join(failures[:MAX_SHOWN])
    more = f"\n\n... and {len(failures) - MAX_SHOWN} more" if len(failures) > MAX_SHOWN else ""
    return f"{len(failures)} of {total} {what} disagree with the reference:\n\n{shown}{more}"


def _answer(fn, *args):
    """A function's result, or the exception it raised (so both sides can be compared and shown)."""
    try:
        return fn(*args)
    except Exception as e:             # noqa: BLE001 - any crash of the kernel is a finding
        return e


def _same(a, b) -> bool:
    """Equal results, or both raised ValueError."""
    if isinstance(a, Exception) or isinstance(b, Exception):
        return isinstance(a, ValueError) and isinstance(b, ValueError)
    return a == b


# ------------------------------------------------------------------------------------------------
# best_lay_down and hand_penalty


def _check_hand(rules, hand: list[str], round_no) -> str | None:
    """None when kernel and reference agree on ``hand``, else a printable description."""
    ref = ref_best_lay_down(rules, hand, round_no)
    got = _answer(M.best_lay_down, rules, hand, round_no)
    header = f"variant {rules.name}, round {round_no}, hand: {' '.join(hand)}"
    ref_text = "None" if ref is None else f"penalty {ref[0]}: {ref[1]} left {ref[2]}"
    got_text = repr(got) if got is None or isinstance(got, Exception) else f"penalty {got.penalty}: {got.melds} left {got.left}"
    problems = []
    if isinstance(got, Exception):
        problems.append(f"kernel raised {got!r}")
    elif (ref is None) != (got is None):
        problems.append("one side finds a lay-down, the other does not")
    elif got is not None:
        if got.penalty != ref[0]:
            problems.append(f"penalty {got.penalty} != reference {ref[0]}")
        problems += lay_down_problems(rules, hand, round_no, got.melds, got.left, got.penalty)
    penalty = _answer(hand_penalty, rules, hand)
    if penalty != ref_hand_penalty(rules, hand):
        problems.append(f"hand_penalty {penalty!r} != reference {ref_hand_penalty(rules, hand)}")
    if not problems:
        return None
    return f"{header}\n  reference: {ref_text}\n  kernel:    {got_text}\n  problems:  {'; '.join(problems)}"


@pytest.mark.parametrize("chunk", range(HAND_CHUNKS))
@pytest.mark.parametrize("preset", PRESETS)
def test_best_lay_down_matches_reference(preset, chunk):
    rules = RULES[preset]
    rng = _rng(preset, "hands", chunk)
    lo, hi = chunk * N_HANDS // HAND_CHUNKS, (chunk + 1) * N_HANDS // HAND_CHUNKS
    failures = []
    for i in range(lo, hi):
        round_no = _round_of(rules, i)
        hand = random_test_hand(rules, rng, round_no=round_no)
        found = _check_hand(rules, hand, round_no)
        if found:
            failures.append(found)
    assert not failures, _report(failures, hi - lo, "hands")


@pytest.mark.parametrize("preset,overrides", [("caribbean", {}), ("k40", {"set_allow_duplicate_suit": True})])
def test_best_lay_down_with_three_packs_matches_reference(preset, overrides):
    """A deck of three packs (the most ``n_decks`` allows) puts three copies of a natural in a hand:
    the search must put every count it takes out of its pool back (``_dfs`` keeps them in two bit
    planes), and the hands here hold such triples."""
    rules = load_rules(preset, n_decks=3, **overrides)
    rng = _rng(preset, "three packs")
    failures = []
    triples = 0
    n = 1500
    for i in range(n):
        round_no = _round_of(rules, i)
        hand = random_test_hand(rules, rng, round_no=round_no)
        triples += max((hand.count(c) for c in hand if c != "JK"), default=0) >= 3
        found = _check_hand(rules, hand, round_no)
        if found:
            failures.append(found)
    assert not failures, _report(failures, n, "hands")
    assert triples > 100, triples


# ------------------------------------------------------------------------------------------------
# Single melds: is_legal_meld (every kind) and meld_value


def _check_meld(rules, meld: list[str]) -> str | None:
    rows = []
    for kind in (None, "set", "run"):
        ref = ref_is_legal_meld(rules, meld, kind)
        got = _answer(M.is_legal_meld, rules, meld, kind)
        if got is not ref:
            rows.append(f"is_legal_meld(kind={kind!r}): reference {ref}, kernel {got!r}")
    ref_v = _answer(ref_meld_value, rules, meld)
    got_v = _answer(M.meld_value, rules, meld)
    if not _same(ref_v, got_v):
        rows.append(f"meld_value: reference {ref_v!r}, kernel {got_v!r}")
    if not rows:
        return None
    return f"variant {rules.name}, meld: [{' '.join(meld)}]\n  " + "\n  ".join(rows)


@pytest.mark.parametrize("preset", PRESETS)
def test_meld_legality_and_value_match_reference(preset):
    rules = RULES[preset]
    rng = _rng(preset, "melds")
    failures = [f for f in (_check_meld(rules, random_meld_candidate(rules, rng)) for _ in range(N_MELDS)) if f]
    assert not failures, _report(failures, N_MELDS, "meld candidates")


# ------------------------------------------------------------------------------------------------
# Groups of melds: opening_value and meets_contract


def _random_group(rules, rng, round_no) -> list[list[str]]:
    """A meld group: mostly a real lay-down (from the reference) edited a little, else random melds.
    Repeated melds make some groups exceed the deck."""
    group: list[list[str]] = []
    if rng.random() < 0.6:
        found = ref_best_lay_down(rules, random_test_hand(rules, rng, round_no=round_no, family="target"), round_no)
        if found is not None:
            group = [list(m) for m in found[1]]
    roll = rng.random()
    if not group or roll < 0.2:
        group = [random_meld_candidate(rules, rng) for _ in range(int(rng.integers(1, 5)))]
    elif roll < 0.35:
        group.pop(int(rng.integers(len(group))))
    elif roll < 0.5:
        group[int(rng.integers(len(group)))] = random_meld_candidate(rules, rng)
    elif roll < 0.6:
        group.append(random_meld_candidate(rules, rng))
    elif roll < 0.65:
        group.append(list(group[int(rng.integers(len(group)))]))
    return group


def _check_group(rules, group, round_no) -> str | None:
    rows = []
    ref_v = _answer(ref_opening_value, rules, group)
    got_v = _answer(M.opening_value, rules, group)
    if not _same(ref_v, got_v):
        rows.append(f"opening_value: reference {ref_v!r}, kernel {got_v!r}")
    if rules.opening_mode == "contract":
        ref_c = ref_meets_contract(rules, round_no, group)
        got_c = _answer(M.meets_contract, rules, round_no, group)
        if got_c is not ref_c:
            rows.append(f"meets_contract(round {round_no}): reference {ref_c}, kernel {got_c!r}")
    if not rows:
        return None
    shown = " ".join("[" + " ".join(m) + "]" for m in group)
    return f"variant {rules.name}, melds: {shown}\n  " + "\n  ".join(rows)


@pytest.mark.parametrize("preset", PRESETS)
def test_meld_groups_match_reference(preset):
    rules = RULES[preset]
    rng = _rng(preset, "groups")
    failures = []
    for i in range(N_GROUPS):
        round_no = _round_of(rules, i)
        found = _check_group(rules, _random_group(rules, rng, round_no), round_no)
        if found:
            failures.append(found)
    assert not failures, _report(failures, N_GROUPS, "meld groups")


# ------------------------------------------------------------------------------------------------
# Inputs the generators never produce


DECK_OVERFLOW = {
    # (preset, meld) pairs that use more copies than the deck holds: illegal for both sides.
    "caribbean": ["5H 5H 5H", "KH KH KS KD KC JK JK JK JK JK"],
    "k40": ["5H 6H JK JK JK", "JK JK JK 7S"],
    "k51": ["5H 6H JK JK JK JK JK"],
    "k101": ["QS QH QD JK JK JK"],
    "na15": ["AS 2S 3S AS AS"],
    "american": ["JK JK JK JK JK"],
    "k40+v4": ["AH AH AH"],
}


@pytest.mark.parametrize("preset", PRESETS)
def test_deck_overflow_melds_match_reference(preset):
    rules = RULES[preset]
    failures = [f for f in (_check_meld(rules, m.split()) for m in DECK_OVERFLOW[preset]) if f]
    assert not failures, _report(failures, len(DECK_OVERFLOW[preset]), "overflowing melds")


@pytest.mark.parametrize("preset", [p for p in PRESETS if RULES[p].opening_mode == "points"])
def test_meets_contract_rejects_points_variants(preset):
    with pytest.raises(ValueError):
        ref_meets_contract(RULES[preset], 1, [["5H", "6H", "7H"]])
    with pytest.raises(ValueError):
        M.meets_contract(RULES[preset], 1, [["5H", "6H", "7H"]])


# ------------------------------------------------------------------------------------------------
# the search's pre-check for contracts of runs and sets together


@pytest.mark.parametrize("overrides", [{}, {"set_min_naturals": 3}, {"run_min_size": 3},
                                       {"set_allow_duplicate_suit": False, "set_max_size": 4}, {"ace_low": False}],
                         ids=["caribbean", "set_nat3", "run3", "distinct_suits", "ace_high_only"])
def test_mixed_contract_precheck_only_rejects_hands_the_reference_cannot_lay_down(overrides):
    """``runs_first._runs_then_sets_fit`` lets the search give up at once on a contract of runs and sets
    together; whenever it says no, the reference must find no lay-down either.  The hands are the
    random contract hands of the differential test, kept when they pass the older sum-of-parts
    bound (which the search asks first), so the checks are not vacuous."""
    from kalooki_sim.core.cards import counts_of
    from kalooki_sim.melds.runs_first import _runs_then_sets_fit
    from kalooki_sim.melds.workspace import make_params

    rules = load_rules("caribbean", **overrides)
    rv = np.ascontiguousarray(rules.to_vector(), dtype=np.int64)
    rng = _rng("caribbean-precheck", str(sorted(overrides.items())))
    mixed = [i + 1 for i, (sets, runs) in enumerate(rules.contracts) if sets > 0 and runs > 0]
    rejected = 0
    for i in range(4000):
        round_no = mixed[i % len(mixed)]
        hand = random_test_hand(rules, rng, round_no)
        counts = counts_of(hand).astype(np.int64)
        if counts[52] > 2:
            continue
        prm = make_params(rv, round_no - 1)
        if _plain_joker_bound(counts, prm) > counts[52]:
            continue
        if not _runs_then_sets_fit(counts, prm, np.int64(counts[52])):
            rejected += 1
            assert ref_best_lay_down(rules, hand, round_no) is None, (round_no, " ".join(hand))
    assert rejected >= 50, rejected


def _plain_joker_bound(counts, prm) -> int:
    """The search's first test spelled out: the sum-of-parts lower bound on the jokers a contract
    lay-down needs (99 when too few ranks hold enough naturals for the sets)."""
    from kalooki_sim.melds.workspace import P_F, P_HI_MAX, P_LO_MIN, P_RUN_MIN, P_SET_MIN, P_SET_MIN_NAT, P_T

    rc = [int(sum(counts[s * 13 + r] for s in range(4))) for r in range(13)]
    T, F = int(prm[P_T]), int(prm[P_F])
    if T > 0:
        if sum(c >= prm[P_SET_MIN_NAT] for c in rc) < T:
            return 99
        sets = max(T - sum(c >= prm[P_SET_MIN] for c in rc), 0)
    else:
        sets = 0
    if F == 0:
        return sets
    w, lo_min, hi_max = int(prm[P_RUN_MIN]), int(prm[P_LO_MIN]), int(prm[P_HI_MAX])
    best = []
    for s in range(4):
        held = {q for q in range(lo_min, hi_max + 1)
                if counts[s * 13 + (0 if q in (1, 14) else q - 1)] > 0}
        best.append(min((sum(q not in held for q in range(lo, lo + w))
                         for lo in range(lo_min, hi_max - w + 2)), default=99))
    return sets + sum(sorted(best)[:F])


def _plain_runs_then_sets_fit(counts, prm_T, prm_F, smin, snat, w, lo_min, hi_max, jokers) -> bool:
    """``runs_first._runs_then_sets_fit`` spelled out: every choice of F suits and one window of ``w``
    positions in each, its gaps plus the sets' joker floor over the naturals the windows leave."""
    from itertools import combinations, product

    def typ(s, q):
        return s * 13 + (0 if q in (1, 14) else q - 1)

    counts = [int(c) for c in counts]            # (plain ints: numpy scalars are slow to index)
    held_per_rank = [sum(counts[s * 13 + r] for s in range(4)) for r in range(13)]
    starts = range(lo_min, hi_max - w + 2)
    for suits in combinations(range(4), prm_F):
        for los in product(starts, repeat=prm_F):
            rc = list(held_per_rank)
            gaps = 0
            for s, lo in zip(suits, los):
                for q in range(lo, lo + w):
                    if counts[typ(s, q)] > 0:
                        rc[typ(s, q) % 13] -= 1
                    else:
                        gaps += 1
            needs = sorted(max(smin - rc[r], 0) for r in range(13) if held_per_rank[r] >= snat)
            if len(needs) >= prm_T and gaps + sum(needs[:prm_T]) <= jokers:
                return True
    return False


@pytest.mark.parametrize("overrides", [{}, {"run_min_size": 3}, {"ace_low": False}],
                         ids=["caribbean", "run3", "ace_high_only"])
def test_mixed_contract_precheck_equals_its_plain_enumeration(overrides):
    """``_runs_then_sets_fit`` skips a window holding the same naturals as one already tried (the
    answer below it is the same); its answers must equal the plain enumeration of every choice of
    suits and windows, yes and no alike, on hands near the mixed contracts."""
    from kalooki_sim.core.cards import counts_of
    from kalooki_sim.melds.runs_first import _runs_then_sets_fit
    from kalooki_sim.melds.workspace import (
        P_F, P_HI_MAX, P_LO_MIN, P_RUN_MIN, P_SET_MIN, P_SET_MIN_NAT, P_T, make_params,
    )

    rules = load_rules("caribbean", **overrides)
    rv = np.ascontiguousarray(rules.to_vector(), dtype=np.int64)
    rng = _rng("caribbean-precheck-plain", str(sorted(overrides.items())))
    mixed = [i + 1 for i, (sets, runs) in enumerate(rules.contracts) if sets > 0 and runs > 0]
    answers = {True: 0, False: 0}
    for i in range(1500):
        round_no = mixed[i % len(mixed)]
        counts = counts_of(random_test_hand(rules, rng, round_no)).astype(np.int64)
        jokers = min(int(counts[52]), 2)
        prm = make_params(rv, round_no - 1)
        got = bool(_runs_then_sets_fit(counts, prm, np.int64(jokers)))
        want = _plain_runs_then_sets_fit(counts, prm[P_T], prm[P_F], prm[P_SET_MIN], prm[P_SET_MIN_NAT],
                                         prm[P_RUN_MIN], prm[P_LO_MIN], prm[P_HI_MAX], jokers)
        assert got == want, (round_no, jokers, counts.tolist())
        answers[got] += 1
    assert min(answers.values()) >= 100, answers


@pytest.mark.parametrize("preset", PRESETS)
def test_contract_out_of_reach_only_rejects_hands_the_reference_cannot_lay_down(preset):
    """``search.contract_out_of_reach`` lets the engine skip the search of most draws before the
    opening; whenever it says yes, the reference must find no lay-down.  It is the search's own
    first test, so it must also agree with that test spelled out (``_plain_joker_bound``) and with
    the search's own call of it wherever it applies, on int8 counts (the engine's hands) as on
    int64.  Points variants: never out of reach."""
    from kalooki_sim.core.cards import counts_of
    from kalooki_sim.melds.reach import _contract_needs_more_jokers, contract_out_of_reach
    from kalooki_sim.melds.workspace import make_params

    rules = RULES[preset]
    rv = np.ascontiguousarray(rules.to_vector(), dtype=np.int64)
    rng = _rng(preset, "out-of-reach")
    contract = rules.opening_mode == "contract"
    rejected = kept = 0
    for i in range(1500):
        round_no = _round_of(rules, i)
        hand = random_test_hand(rules, rng, round_no=round_no)
        counts = counts_of(hand).astype(np.int64)
        rnd = round_no - 1 if contract else 0
        out = contract_out_of_reach(counts, rv, rnd)
        assert out == contract_out_of_reach(counts.astype(np.int8), rv, rnd)
        if not contract:
            assert not out
            continue
        prm = make_params(rv, rnd)
        assert out == (_plain_joker_bound(counts, prm) > counts[52])
        assert out == _contract_needs_more_jokers(counts, prm, rv)
        if out:
            rejected += 1
            assert ref_best_lay_down(rules, hand, round_no) is None, (round_no, " ".join(hand))
        else:
            kept += 1
    if contract:
        assert rejected >= 100 and kept >= 100, (rejected, kept)
