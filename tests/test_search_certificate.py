"""The engine's no-lay-down certificate (``plans._certificate_verdict``) never changes an answer.

After a search finds no lay-down, the engine remembers that hand per seat (``PS_CERT``) and settles
later searches of sub-hands, and of hands with one new card that can join no meld, without
searching.  Games are played with the certificate as the engine keeps it; at every state the plans
(``core.resume`` in the play phase) and the legal mask (restricted discard draws, owed cards and
joker swaps search hypothetical hands) must be exactly those of the same state without it.
"""

from __future__ import annotations

import numpy as np
import pytest

from kalooki_sim import load_rules
from kalooki_sim.engine import core, layout as L, plans
from kalooki_sim.engine.state import State
from kalooki_sim.runtime.game import Game


def _without_certificate(game):
    other = game.copy()
    other.state.ps[:, :, L.PS_CERT] = 0
    return other


def _certificate_applies(game):
    """Would the certificate of the seat to act settle a search of its current hand?"""
    st = game.state
    p = int(st.gs[0, L.G_TO_ACT])
    laid = int(st.ps[0, p, L.PS_LAID])
    if st.ps[0, p, L.PS_CERT] != 1 + laid:
        return False
    extra = st.hands[0, p].astype(np.int64) - st.ps[0, p, L.PS_CERT_HAND:L.PS_CERT_HAND + L.N_TYPES]
    return int((extra > 0).sum()) <= 1 and int(extra.max()) <= 1


def _plans(game):
    st = game.state
    nm = int(st.plan_n[0, 0])
    return nm, st.plan[0, :max(nm, 0)].copy()


# Caribbean plays more games: the engine settles most of its draws by the contract's joker bound
# (``melds.search.contract_out_of_reach``) before it asks the certificate
@pytest.mark.parametrize("name,n_games", [("caribbean", 48), ("k40", 12), ("k51", 12), ("na15", 12),
                                          ("american", 12), ("k40+v1", 12)])
def test_certificate_never_changes_plans_or_mask(name, n_games):
    rules = load_rules(name)
    rng = np.random.default_rng(3)
    compared = applied = 0
    for seed in range(n_games):
        game = Game(rules, n_players=4, seed=seed)
        for _ in range(400):
            if game.terminal:
                break
            bare = _without_certificate(game)
            # the raw kernel, as the closed loop asks it: the hands its checks search and find
            # without a lay-down stay certified (``Game.legal_mask`` would put the state back)
            mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
            core.legal_mask(game.state.arrays(), game.rv, 0, mask)
            assert (bare.legal_mask() == mask).all(), (name, seed, str(game))
            if int(game.state.gs[0, L.G_PHASE]) == L.PH_PLAY and game.state.gs[0, L.G_OPEN_DEBT] == 0:
                applied += _certificate_applies(game)
                mine = game.copy()
                core.resume(mine.state.arrays(), mine.rv, 0)
                core.resume(bare.state.arrays(), bare.rv, 0)
                nm_a, rec_a = _plans(mine)
                nm_b, rec_b = _plans(bare)
                assert nm_a == nm_b and (rec_a == rec_b).all(), (name, seed, str(game))
                compared += 1
            acts = np.flatnonzero(mask)
            lays = [a for a in acts if L.A_LAY <= a < L.A_DISCARD]
            # lay down when offered (so games reach the opened phase), else a random legal action
            game.apply(int(lays[0]) if lays else int(rng.choice(acts)))
    assert compared > 300
    assert applied > 50          # the certificate really was in play


def test_hand_settled_by_the_new_card_becomes_the_certificate():
    """A hand one unmeldable card away from the certificate has no lay-down, and the verdict keeps
    it as the certificate: the next hand (a discard and a draw later) is one card away from it but
    two from the old one, and is settled too."""
    from kalooki_sim.core.cards import counts_of

    rv = load_rules("k40").to_vector()
    ps = State.empty(1).ps
    old = counts_of("2C 3C 7D 8D 9H JS KS QH 5C 10D")
    plans._certify_no_plan(ps, rv, 0, 1, old, 0)
    hand = counts_of("2C 3C 7D 8D 9H JS KS QH 5C 4H")           # 10D out, 4H (no partner) in
    assert plans._certificate_verdict(ps, rv, 0, 1, hand, 0) == plans.CERT_NO_PLAN
    assert (ps[0, 1, L.PS_CERT_HAND:L.PS_CERT_HAND + L.N_TYPES] == hand).all()
    later = counts_of("2C 3C 7D 8D 9H JS KS QH 4H 6S")           # 5C out, 6S in
    assert plans._certificate_verdict(ps, rv, 0, 1, later, 0) == plans.CERT_NO_PLAN
    near = counts_of("2C 3C 7D 8D 9H JS KS QH 4H 6S 4C")         # 4C joins 2C 3C: search it
    assert plans._certificate_verdict(ps, rv, 0, 1, near, 0) == counts_of("4C").argmax()
    assert plans._certificate_verdict(ps, rv, 0, 1, near, 1) == -1  # the laid flag must match


def test_certificate_is_forgotten_at_the_deal():
    game = Game("k40", n_players=4, seed=1)
    game.state.ps[0, :, L.PS_CERT] = 1
    core.start_game(game.state.arrays(), game.rv, 0, 4, -1, 5, 0, 0)
    assert (game.state.ps[0, :, L.PS_CERT] == 0).all()


DRAW = """
active: P1
phase: draw
turn: 5
P1: 7S 7D 10C JC QC 2H 3D 5S 9S KH 4C 8D 6H
P2: 2C 3C
P3: 2D 3H
P4: 5D 6D
discard: 9D 9C
"""


def test_legality_checks_leave_the_position_unchanged():
    """K51: drawing the 9C needs an opening with it; 9C-QC is worth 40 < 51, so the engine's search
    runs and fails.  Its scratch rows and the seat's certificate change (raw kernel), but ``Game``
    puts them back, so an illegal action, ``check`` and ``legal_mask`` leave every array of the
    state as it was."""
    from kalooki_sim.engine.errors import IllegalActionError

    game = Game.from_text(DRAW, "k51")
    raw = game.copy()
    raw.state.work[:] = 0                                          # a clean scratch and no certificate
    raw.state.ps[:, :, L.PS_CERT:L.NPS] = 0
    clean = raw.state.copy()
    assert core.check_action(raw.state.arrays(), raw.rv, 0, L.A_DRAW_DISCARD) == L.E_NOT_USABLE
    assert not (raw.state.work == clean.work).all()             # the search ran in the scratch
    assert raw.state.ps[0, 0, L.PS_CERT] == 1                     # and certified the hand with 9C
    before = game.state.copy()
    with pytest.raises(IllegalActionError):
        game.apply("draw discard")
    assert game.check("draw discard") == L.E_NOT_USABLE
    assert game.legal_action_texts() == ["draw stock"]
    assert all((a == b).all() for a, b in zip(before.arrays(), game.state.arrays()))


def _random_hands(r, seed, n, sizes):
    """``n`` random hands of rules ``r``'s deck (counts by card type) with a round each, their
    sizes drawn from ``range(*sizes)``."""
    n_rounds = len(r.contracts) if r.opening_mode == "contract" else 1
    deck = np.array([t for t in range(52) for _ in range(r.n_decks)] + [L.JOKER] * r.n_jokers)
    rng = np.random.default_rng(seed)
    for i in range(n):
        cards = rng.choice(deck, size=int(rng.integers(*sizes)), replace=False)
        yield i % n_rounds, np.bincount(cards, minlength=L.N_TYPES).astype(np.int64)


def _cards_of(hand):
    return np.repeat(np.arange(L.N_TYPES), hand).tolist()


@pytest.mark.parametrize("name,kw", [("caribbean", {}), ("k40", {}), ("na15", {}), ("american", {}),
                                     ("k40", {"set_allow_duplicate_suit": True}),
                                     ("k40", {"run_adjacent_jokers": False})])
def test_unmeldable_card_changes_no_lay_down(name, kw):
    """The certificate's test for the new card (``search.natural_meldable``): whenever it says a
    held natural fits in no meld, the best lay-down of the hand (the opening, and new melds after
    it) is exactly that of the hand without any copy of the card."""
    from kalooki_sim.melds.search import MAX_MELDS, REC, best_lay_down_min, natural_meldable, new_workspace

    r = load_rules(name, **kw)
    rv = r.to_vector()
    best_stack = np.zeros((MAX_MELDS, REC), dtype=np.int64)
    best = np.zeros(4, dtype=np.int64)
    ws = new_workspace()
    unmeldable = with_lay_down = 0
    for rnd, hand in _random_hands(r, 11, 1500, (6, 16)):
        cards = _cards_of(hand)
        for t in np.flatnonzero(hand[:52]):
            if natural_meldable(hand, rv, t):
                continue
            unmeldable += 1
            without = hand.copy()
            without[t] = 0
            for min_points in (-1, 1):
                got = best_lay_down_min(hand, rv, rnd, min_points, best_stack, best, ws)
                want = best_lay_down_min(without, rv, rnd, min_points, best_stack, best, ws)
                assert got == want, (name, cards, int(t), min_points)
                with_lay_down += got >= 0
    assert unmeldable > 1000 and with_lay_down > 100, (unmeldable, with_lay_down)



@pytest.mark.parametrize("name,kw", [("caribbean", {}), ("k40", {}), ("na15", {}), ("american", {}),
                                     ("caribbean", {"contract_allow_extra_melds": True}),
                                     ("k40", {"set_allow_duplicate_suit": True})])
def test_must_place_changes_no_lay_down(name, kw):
    """The search told that every lay-down places every copy of natural x
    (``best_lay_down_must``, as the engine does when the hand is a hand without a lay-down plus x)
    finds exactly the lay-down of the plain search: the branches it skips hold none."""
    from kalooki_sim.melds.search import MAX_MELDS, REC, best_lay_down_min, best_lay_down_must, new_workspace

    r = load_rules(name, **kw)
    rv = r.to_vector()
    want_stack = np.zeros((MAX_MELDS, REC), dtype=np.int64)
    got_stack = np.zeros((MAX_MELDS, REC), dtype=np.int64)
    want_best = np.zeros(4, dtype=np.int64)
    got_best = np.zeros(4, dtype=np.int64)
    ws = new_workspace()
    compared = found = 0
    for rnd, base in _random_hands(r, 12, 400, (8, 16)):
        cards = _cards_of(base)
        for min_points in (-1, 1):
            if best_lay_down_min(base, rv, rnd, min_points, want_stack, want_best, ws) >= 0:
                continue                       # x must complete a hand without a lay-down
            for x in range(52):
                if base[x] >= r.n_decks:
                    continue
                hand = base.copy()
                hand[x] += 1
                want = best_lay_down_min(hand, rv, rnd, min_points, want_stack, want_best, ws)
                got = best_lay_down_must(hand, rv, rnd, min_points, x, got_stack, got_best, ws)
                assert got == want, (name, cards, x, min_points)
                compared += 1
                if want >= 0:
                    found += 1
                    assert (got_best[:3] == want_best[:3]).all()
                    n = int(want_best[1])
                    assert (got_stack[:n] == want_stack[:n]).all(), (name, cards, x)
    assert compared > 5000 and found > 200, (compared, found)

def _fits_some_meld_by_definition(hand, t, r):
    """Can held natural t sit in some meld with the hand's cards and jokers, by the rules' words:
    a set of its rank (t plus one natural per other suit holding the rank, or every other copy
    when a set may repeat a suit; at least ``set_min_naturals`` naturals and, with the jokers,
    ``set_min_size`` cards), or a run: ``run_min_size`` consecutive positions including one of
    t's, inside the allowed range, whose positions not held in t's suit the jokers fill (no two
    adjacent unless the rules allow it)."""
    suit, rank = divmod(t, 13)
    jokers = hand[52]
    copies = [hand[s2 * 13 + rank] for s2 in range(4)]
    if r.set_allow_duplicate_suit:
        naturals = sum(copies)
    else:
        naturals = sum(1 for c in copies if c > 0)
    if naturals >= r.set_min_naturals and naturals + jokers >= r.set_min_size:
        return True
    lo_min = 1 if r.ace_low else 2
    hi_max = 14 if r.ace_high else 13

    def position_held(q):
        return hand[suit * 13 + (0 if q in (1, 14) else q - 1)] > 0

    positions_of_t = [q for q in ((1, 14) if rank == 0 else (rank + 1,)) if lo_min <= q <= hi_max]
    w = r.run_min_size
    for lo in range(lo_min, hi_max - w + 2):
        window = range(lo, lo + w)
        if not any(q in window for q in positions_of_t):
            continue
        gaps = [q for q in window if not position_held(q)]
        adjacent = any(q + 1 in gaps for q in gaps)
        if len(gaps) <= jokers and (r.run_adjacent_jokers or not adjacent):
            return True
    return False


@pytest.mark.parametrize("name,kw", [("caribbean", {}), ("k40", {}), ("american", {}),
                                     ("k40", {"set_allow_duplicate_suit": True, "n_decks": 3}),
                                     ("k40", {"run_adjacent_jokers": False}),
                                     ("k40", {"ace_low": False, "run_min_size": 4}),
                                     ("caribbean", {"ace_high": False, "set_min_naturals": 3})])
def test_meldable_filter_matches_its_definition(name, kw):
    """``natural_meldable`` (the search's filter of the naturals it may place, and the
    certificate's test) against the plain definition, for every held natural of random hands;
    and ``natural_meldable_held`` given the suit's run positions read without the card (as greedy's
    manipulation reads them once for the cards it could take from the table)."""
    from kalooki_sim.melds.positions import run_mask
    from kalooki_sim.melds.search import natural_meldable, natural_meldable_held

    r = load_rules(name, **kw)
    rv = r.to_vector()
    lo_min, hi_max = (1 if r.ace_low else 2), (14 if r.ace_high else 13)
    answers = {True: 0, False: 0}
    for _, hand in _random_hands(r, 5, 1500, (3, 16)):
        for t in np.flatnonzero(hand[:52]):
            want = _fits_some_meld_by_definition(hand, int(t), r)
            assert natural_meldable(hand, rv, t) == want, (name, kw, _cards_of(hand), int(t))
            without = hand.copy()
            without[t] -= 1
            held_s = run_mask(without, int(t) // 13, lo_min, hi_max)
            assert natural_meldable_held(hand, rv, t, held_s) == want, (name, kw, _cards_of(hand), int(t))
            answers[want] += 1
    assert min(answers.values()) > 1000, answers


def _scratch(state):
    return state.work[0]


@pytest.mark.parametrize("name", ["k40", "k51", "na15", "american"])
def test_memo_of_the_discard_draw_check_gives_the_searched_plan(name):
    """A restricted discard draw is checked by searching the hand with the card; the engine then
    reuses that search for the plan (``plans._memo_plan``) instead of searching again.  Drawing with
    the memo and with it erased must give the same plans."""
    rules = load_rules(name)
    rng = np.random.default_rng(7)
    hits = 0
    for seed in range(40):
        game = Game(rules, n_players=4, seed=seed)
        for _ in range(300):
            if game.terminal:
                break
            mask = game.legal_mask()
            if int(game.state.gs[0, L.G_PHASE]) == L.PH_DRAW and mask[L.A_DRAW_DISCARD]:
                memo = game.copy()
                assert core.check_action(memo.state.arrays(), memo.rv, 0, L.A_DRAW_DISCARD) == 0
                bare = memo.copy()
                _scratch(bare.state)[L.W_MEMO_OK] = 0
                p = int(memo.state.gs[0, L.G_ACTIVE])
                with_top = memo.state.hands[0, p].astype(np.int64)
                with_top[int(memo.state.disc[0, memo.state.gs[0, L.G_DISC_N] - 1])] += 1
                hits += bool(_scratch(memo.state)[L.W_MEMO_OK] == 1
                             and (_scratch(memo.state)[L.W_HAND:L.W_HAND + L.N_TYPES] == with_top).all())
                for g in (memo, bare):
                    assert core.step(g.state.arrays(), g.rv, 0, L.A_DRAW_DISCARD) == 0
                nm_a, rec_a = _plans(memo)
                nm_b, rec_b = _plans(bare)
                assert nm_a == nm_b and (rec_a == rec_b).all(), (name, seed, str(game))
                assert (memo.state.plan_n == bare.state.plan_n).all()
            acts = np.flatnonzero(mask)
            lays = [a for a in acts if L.A_LAY <= a < L.A_DISCARD]
            if mask[L.A_DRAW_DISCARD] and rng.random() < 0.7:
                game.apply(L.A_DRAW_DISCARD)
            else:
                game.apply(int(lays[0]) if lays else int(rng.choice(acts)))
    assert hits > 20, hits          # the memo really was used


@pytest.mark.parametrize("name", ["k40", "na15", "american"])
def test_plan_question_answered_from_the_memo_is_the_searched_answer(name):
    """``plans.hand_plan_places`` answers a repeated question (the same hand plus and minus the
    same cards, laid flag and round) from its last search (``plans._memo_holds``).  Asked in a row
    about many hands, twice each, it must answer exactly as a fresh search of each does."""
    rules = load_rules(name)
    rng = np.random.default_rng(3)
    asked = repeated = placed = 0
    for seed in range(12):
        game = Game(rules, n_players=4, seed=seed)
        for step in range(400):
            if game.terminal:
                break
            if step % 7 == 0:
                st = game.state
                p = int(st.gs[0, L.G_TO_ACT])
                held = np.flatnonzero(st.hands[0, p, :52])
                for c in rng.choice(52, size=6, replace=False):
                    t_rem = int(rng.choice(held)) if len(held) and rng.random() < 0.3 else -1
                    fresh = game.copy()
                    _scratch(fresh.state)[L.W_MEMO_OK] = 0
                    args = (p, int(c), t_rem, int(c))
                    want = plans.hand_plan_places(fresh.state.hands, fresh.state.ps, fresh.rv, fresh.state.gs,
                                                  fresh.state.work[0], 0, *args)
                    for _ in range(2):           # the second time from the memo, if it searched
                        got = plans.hand_plan_places(st.hands, st.ps, game.rv, st.gs, st.work[0], 0, *args)
                        assert got == want, (name, seed, step, args)
                        asked += 1
                    repeated += bool(_scratch(st)[L.W_MEMO_OK] == 1)
                    placed += bool(want)
            acts = np.flatnonzero(game.legal_mask())
            game.apply(int(rng.choice(acts)))
    assert asked > 3000 and repeated > 500 and placed > 50, (asked, repeated, placed)
