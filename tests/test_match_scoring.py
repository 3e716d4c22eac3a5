"""Match scoring against RULES.md §2.2 / §2.4-§2.7 and the vectors T32, T34, T35, T86-T92.

Seats are 0-based in code and written P1..Pn in the comments, as in RULES.md (P1 = seat 0, play
goes P1 -> P2 -> ...; the "left" of a seat is the next seat in the direction of play).  Positions
in the middle of a game are set up with ``MatchScore.from_sheet``; whole games go through
``score_match``.  A few tests call the compiled kernels directly on plain arrays.
"""

from __future__ import annotations

import numpy as np
import pytest

from kalooki_sim import load_rules
from kalooki_sim.core.scoring import hand_penalty
from kalooki_sim.engine import match as M
from kalooki_sim.engine.match_sheet import HandResult, MatchScore, score_match


def H(winner, how, penalties, **kw):
    return HandResult(winner, how, tuple(penalties), **kw)


# ------------------------------------------------------------------------------------------------
# T86 / T87: elimination mark (A18: eliminated when total >= elimination_at)


@pytest.mark.parametrize(
    "variant, before, penalty, eliminated",
    [
        ("k40", 140, 10, True),        # T86: 150 eliminates
        ("k40", 140, 9, False),
        ("k40+v5", 140, 10, False),    # T86: V5 (151) -> 150 stays in
        ("k40+v5", 140, 11, True),
        ("k51", 149, 1, True),
        ("k101", 95, 6, True),         # T87: 101 eliminates in K101
        ("k101", 95, 5, False),
    ],
)
def test_T86_T87_elimination_mark(variant, before, penalty, eliminated):
    m = MatchScore.from_sheet(variant, [before, 0, 0, 0], buy_back="never")
    st = m.play(H(1, "rip", [penalty, 0, 3, 4]))
    assert st.totals[0] == before + penalty
    assert (0 in st.eliminated) is eliminated
    assert st.active[0] is (not eliminated)
    assert st.status[0] == ("declined" if eliminated else "in")
    assert st.total_at_elimination[0] == (before + penalty if eliminated else 0)


# ------------------------------------------------------------------------------------------------
# T88 / T91: buy-backs


def test_T88_buy_back_resets_to_highest_total_in_game():
    # After a hand won by P4: P1 160, P2 100, P3 120, P4 40.
    states = score_match("k40", 4, [H(0, "rip", [0, 100, 110, 40]),
                                    H(3, "rip", [160, 0, 10, 0])])
    before, st = states[1], states[2]
    assert st.total_at_elimination == (160, 0, 0, 0)
    assert st.status[0] == "bought_back"
    assert st.others_in[0] == 3                       # 3 other players in, >= 2 required
    assert st.totals == (120, 100, 120, 40)           # reset to max(100, 120, 40)
    assert st.pool == before.pool + 5 == 25
    assert st.buybacks == (1, 0, 0, 0)
    assert st.units == (2, -2, -2, 2)                  # the buy-back is not in the units column
    assert st.money == (2 - 5 - 5, -2 - 5, -2 - 5, 2 - 5)
    assert not st.over


@pytest.mark.parametrize(
    "used, limit, status, active, pool",
    [
        (0, 2, "bought_back", True, 20 + 0 + 5),
        (1, 2, "bought_back", True, 20 + 5 + 5),
        (2, 2, "refused_limit", False, 20 + 10),     # T91: a third buy-back is refused
        (0, 0, "refused_limit", False, 20),          # buy_back_limit = 0: never
        (3, 3, "refused_limit", False, 20 + 15),
    ],
)
def test_T91_buy_back_limit_per_game(used, limit, status, active, pool):
    rules = load_rules("k40", buy_back_limit=limit)
    m = MatchScore.from_sheet(rules, [140, 20, 30, 10], buybacks=[used, 0, 0, 0])
    st = m.play(H(1, "rip", [20, 0, 5, 5]))
    assert st.status[0] == status
    assert st.active[0] is active
    assert st.pool == pool
    assert st.buybacks[0] == used + (1 if status == "bought_back" else 0)
    assert st.totals[0] == (35 if active else 160)
    assert st.units[0] == -1                          # he paid the rip stake either way


def test_T91_twice_bought_back_player_is_out_for_good():
    # P1 is eliminated three times; the third time he is out and pays/receives nothing afterwards.
    hands = [H(1, "rip", [150, 0, 10, 10]),     # P1 out, buys back (1st) -> 10
             H(1, "rip", [140, 0, 10, 10]),     # 150 -> buys back (2nd) -> 20
             H(1, "rip", [130, 0, 10, 10]),     # 150 -> refused (limit 2)
             H(2, "rip", [99, 10, 0, 10])]      # P1 is out: no stake, no penalty
    st = score_match("k40", 4, hands)
    assert [s.status[0] for s in st[1:]] == ["bought_back", "bought_back", "refused_limit", "out"]
    assert [s.totals[0] for s in st[1:]] == [10, 20, 150, 150]
    assert [s.buybacks[0] for s in st[1:]] == [1, 2, 2, 2]
    assert st[4].units[0] == st[3].units[0] == -3
    assert st[4].payments == (0, -1, 2, -1)            # only the 3 players still in pay/receive
    assert st[4].pool == 20 + 10


# ------------------------------------------------------------------------------------------------
# T35 / T34 / K101 stakes: rip and kalooki


@pytest.mark.parametrize(
    "variant, how, winner_gets, loser_pays",
    [
        ("k40", "rip", 3, 1),          # T35
        ("k40", "kalooki", 6, 2),      # T35: the kalooki stake replaces the rip (A25): not +9/-3
        ("k51", "kalooki", 6, 2),
        ("k101", "rip", 3, 1),         # §2.4: 1 / 3 / 5 / 5
        ("k101", "kalooki", 9, 3),
        ("k40+v6", "kalooki", 6, 2),   # V6 doubles penalties, not stakes
    ],
)
def test_T35_hand_stakes_four_players(variant, how, winner_gets, loser_pays):
    st = score_match(variant, 4, [H(2, how, [12, 7, 0, 30])])[1]
    assert st.units == (-loser_pays, -loser_pays, winner_gets, -loser_pays)
    assert st.payments == st.units
    assert st.pool == 20                              # stakes never touch the pool


@pytest.mark.parametrize(
    "variant, how, added",
    [
        ("k40+v6", "kalooki", 46),    # T34
        ("k40", "kalooki", 23),       # T34 default
        ("k40+v6", "rip", 23),
        ("k101+v6", "kalooki", 46),
    ],
)
def test_T34_kalooki_penalty_multiplier(variant, how, added):
    st = score_match(variant, 3, [H(0, how, [0, 23, 5])])[1]
    assert st.totals[1] == st.penalties[1] == added
    assert st.totals[2] == 5 * (2 if added == 46 else 1)


def test_eliminated_player_still_pays_the_stake_of_that_hand():
    m = MatchScore.from_sheet("k40", [10, 149, 10], buy_back="never")
    st = m.play(H(0, "kalooki", [0, 5, 5]))
    assert st.status[1] == "declined" and not st.active[1]
    assert st.units == (4, -2, -2)


# ------------------------------------------------------------------------------------------------
# T32 and the per-hand settlement variants (NA15, AMER)


def test_T32_na15_pays_per_penalty_point():
    loser = "JK AS AH KD 7C"
    assert hand_penalty("na15", loser) == 62
    hand = HandResult.from_cards("na15", 0, "rip", ["", loser, "2C 3C"])
    st = score_match("na15", 3, [hand])[1]
    assert st.payments == (62 + 5, -62, -5)
    assert st.units == st.money == (67, -62, -5)
    assert st.pool == 0 and not st.over


@pytest.mark.parametrize("variant", ["na15", "american"])
def test_per_hand_modes_have_no_elimination_pool_or_buy_back(variant):
    hands = [H(0, "rip", [0, 140, 30], cards=[0, 9, 3]),
             H(2, "rip", [60, 90, 0], cards=[5, 6, 0])]
    st = score_match(variant, 3, hands)
    assert st[0].pool == 0 and st[-1].pool == 0
    assert st[-1].totals == (60, 230, 30)             # totals still accumulate (informational)
    assert all(st[-1].active) and st[-1].status == ("in", "in", "in")
    assert st[-1].buybacks == (0, 0, 0) and not st[-1].over
    assert st[-1].money == st[-1].units
    assert sum(st[-1].units) == 0


@pytest.mark.parametrize(
    "variant, how, expected",
    [
        ("na15", "rip", (62 + 5, -62, -5)),
        ("na15", "kalooki", (62 + 5, -62, -5)),                  # NA15: no kalooki extra
        # AMER: 1 per card, 2 per joker: P2 4 naturals + 1 joker = 6, P3 2 naturals + 2 jokers = 6
        ("american", "rip", (12, -6, -6)),
        ("american", "kalooki", (24, -12, -12)),                 # doubled on a kalooki
    ],
)
def test_per_card_and_per_point_settlement(variant, how, expected):
    hands = ["", "JK AS AH KD 7C", "2C 3C" if variant == "na15" else "2C JK 3C JK"]
    st = score_match(variant, 3, [HandResult.from_cards(variant, 0, how, hands)])[1]
    assert st.payments == expected


@pytest.mark.parametrize(
    "cards, jokers, how, pay",
    [
        (13, 0, "rip", 13), (13, 0, "kalooki", 26),
        (5, 5, "rip", 10), (5, 5, "kalooki", 20),
        (1, 1, "rip", 2), (0, 0, "rip", 0),
    ],
)
def test_amer_per_card_table(cards, jokers, how, pay):
    st = score_match("american", 2, [H(1, how, [40, 0], cards=[cards, 0], jokers=[jokers, 0])])[1]
    assert st.payments == (-pay, pay)


def test_fixed_hands_mode_only_adds_penalties():
    st = score_match("caribbean", 3, [H(1, "rip", [50, 0, 83]), H(0, "rip", [0, 20, 1])])
    assert st[-1].totals == (50, 20, 84)
    assert st[-1].units == (0, 0, 0) and st[-1].pool == 0 and not st[-1].over


# ------------------------------------------------------------------------------------------------
# T92: the repaired worked score sheet of §2.7(d), row by row

SHEET_HANDS = [
    # winner (seat), how, penalties P1..P4
    H(2, "rip", [70, 30, 0, 60]),
    H(0, "rip", [0, 60, 45, 15]),
    H(2, "kalooki", [10, 55, 0, 10]),
    H(3, "rip", [10, 20, 35, 0]),
    H(2, "rip", [61, 110, 0, 85]),
]
# after hand: totals, pool, units, eliminated by the hand, bought back, match winner
SHEET_ROWS = [
    ((0, 0, 0, 0), 20, (0, 0, 0, 0), (), (), None),
    ((70, 30, 0, 60), 20, (-1, -1, 3, -1), (), (), None),
    ((70, 90, 45, 75), 20, (2, -2, 2, -2), (), (), None),
    ((80, 145, 45, 85), 20, (0, -4, 8, -4), (), (), None),
    ((90, 90, 80, 85), 25, (-1, -5, 7, -1), (1,), (1,), None),
    ((151, 200, 80, 170), 25, (-2, -6, 10, -2), (0, 1, 3), (), 2),
]


@pytest.mark.parametrize("variant", ["k40", "k40+v5"])   # elimination_at 150 and 151
def test_T92_worked_score_sheet(variant):
    states = score_match(variant, 4, SHEET_HANDS)
    assert len(states) == len(SHEET_ROWS)
    for k, (st, row) in enumerate(zip(states, SHEET_ROWS)):
        totals, pool, units, elim, bought, winner = row
        got = (st.totals, st.pool, st.units, st.eliminated, st.bought_back, st.match_winner)
        assert got == row, f"after hand {k}"
    # hand 4: P2 165 -> eliminated, 3 others in, 1st buy-back, reset to max(90, 80, 85)
    h4 = states[4]
    assert h4.total_at_elimination[1] == 165 and h4.others_in[1] == 3 and h4.buybacks == (0, 1, 0, 0)
    # hand 5: offers from the winner's (P3's) left: P4, P1, P2; each sees only P3 in
    h5 = states[5]
    assert h5.offer_order == (2, 3, 0, 1)
    assert h5.others_in == (1, 1, -1, 1)
    assert h5.status == ("refused_few_players", "refused_few_players", "in", "refused_few_players")
    assert h5.active == (False, False, True, False)
    assert h5.over and h5.match_winner == 2
    assert h5.money == (-7, -16, 30, -7) and sum(h5.money) == 0


def test_T92_no_hand_after_the_game_is_over():
    m = MatchScore("k40", 4)
    for h in SHEET_HANDS:
        m.play(h)
    with pytest.raises(ValueError, match="over"):
        m.play(H(2, "rip", [1, 1, 0, 1]))


# ------------------------------------------------------------------------------------------------
# Buy-back order, counting, and small tables


@pytest.mark.parametrize(
    "direction, order",
    [("left", (2, 3, 0, 0, 1)),     # winner P3: P4 (in), P5, P1, P2
     ("right", (2, 1, 0, 0, 3))],   # winner P3: P2, P1, P5, P4 (in)
)
def test_buy_back_order_from_winners_left(direction, order):
    rules = load_rules("k40", play_direction=direction)
    m = MatchScore.from_sheet(rules, [100, 110, 20, 30, 120])
    st = m.play(H(2, "rip", [60, 50, 0, 10, 40]))
    assert st.eliminated == (0, 1, 4)
    assert st.offer_order == order
    # each check counts the players currently in, earlier buy-backs included: 2, 3, 4
    first = order.index(1)
    assert st.others_in[first] == 2
    assert sorted(st.others_in[p] for p in st.eliminated) == [2, 3, 4]
    assert st.bought_back == (0, 1, 4)
    assert st.totals == (40, 40, 20, 40, 40)          # max of the players in at each check
    assert st.pool == 25 + 15


def test_min_other_players_counts_earlier_buy_backs():
    # 4 players, winner P1; P2 and P3 eliminated, P4 in.  P2 checks 2 others (P1, P4) and buys
    # back; P3 then counts P1, P4 and P2 = 3.  If P2 declines, P3 counts only 2.
    sheet = dict(totals=[10, 140, 140, 50])
    hand = [0, 20, 30, 5]
    st = MatchScore.from_sheet("k40", **sheet).play(H(0, "rip", hand))
    assert st.others_in == (-1, 2, 3, -1) and st.bought_back == (1, 2)
    assert st.totals == (10, 55, 55, 55)
    st = MatchScore.from_sheet("k40", **sheet).play(H(0, "rip", hand, buy_back=(True, False, True, True)))
    assert st.others_in == (-1, 2, 2, -1) and st.bought_back == (2,)
    assert st.status[1] == "declined" and st.totals == (10, 160, 55, 55)
    # with buy_back_min_other_active = 3 nobody can: the first check sees only P1 and P4
    rules = load_rules("k40", buy_back_min_other_active=3)
    st = MatchScore.from_sheet(rules, **sheet).play(H(0, "rip", hand))
    assert st.status == ("in", "refused_few_players", "refused_few_players", "in")
    assert st.active == (True, False, False, True) and not st.over


def test_two_player_game_has_no_buy_back():
    rules = load_rules("k40", players_min=2)
    st = score_match(rules, 2, [H(0, "rip", [0, 100]), H(0, "kalooki", [0, 60])])
    assert st[0].pool == 10
    last = st[-1]
    assert last.status == ("in", "refused_few_players") and last.others_in == (-1, 1)
    assert last.over and last.match_winner == 0
    assert last.units == (3, -3)
    assert last.money == (3 - 5 + 10, -3 - 5)


@pytest.mark.parametrize("hand", [HandResult.void(), H(None, "rip", [5, 5, 5, 5]),
                                  H(1, "void", [5, 0, 5, 5])])
@pytest.mark.parametrize("variant", ["k40", "na15", "american"])
def test_void_hand_changes_nothing(variant, hand):
    m = MatchScore.from_sheet(variant, [70, 30, 0, 60], units=[-1, -1, 3, -1])
    before = m.history[-1]
    st = m.play(hand)
    assert (st.totals, st.units, st.pool, st.active, st.buybacks) == \
        (before.totals, before.units, before.pool, before.active, before.buybacks)
    assert st.payments == (0, 0, 0, 0) and st.penalties == (0, 0, 0, 0)
    assert st.how == "void" and st.winner is None and st.hand == 1


def test_buy_back_policies():
    sheet = [140, 10, 10, 10]
    hand = H(1, "rip", [20, 0, 1, 1])
    assert MatchScore.from_sheet("k40", sheet).play(hand).status[0] == "bought_back"     # default
    assert MatchScore.from_sheet("k40", sheet, buy_back="never").play(hand).status[0] == "declined"
    assert MatchScore.from_sheet("k40", sheet, buy_back=False).play(hand).status[0] == "declined"
    assert MatchScore.from_sheet("k40", sheet, buy_back=[False, True, True, True]).play(hand).status[0] == "declined"
    asked = []

    def policy(match, seat):
        asked.append(seat)
        return match.buybacks[seat] == 0
    assert MatchScore.from_sheet("k40", sheet, buy_back=policy).play(hand).status[0] == "bought_back"
    assert asked == [0, 1, 2, 3]
    assert MatchScore.from_sheet("k40", sheet, buybacks=[1, 0, 0, 0], buy_back=policy).play(hand).status[0] == "declined"
    with pytest.raises(ValueError):
        MatchScore("k40", 4, buy_back="sometimes")


@pytest.mark.parametrize(
    "kw, hand, message",
    [
        ({}, H(4, "rip", [1, 1, 1, 1]), "not in 0..3"),
        ({"active": [True, False, True, True]}, H(1, "rip", [1, 0, 1, 1]), "not in the game"),
        ({}, H(1, "rip", [1, 2, 1, 1]), "cannot have penalty"),
        ({}, H(1, "rip", [1, 0, 1]), "4 values"),
        ({}, H(1, "double", [1, 0, 1, 1]), "how must be"),
        ({}, H(1, "rip", [1, 0, -1, 1]), ">= 0"),
    ],
)
def test_wrapper_rejects_bad_hands(kw, hand, message):
    m = MatchScore.from_sheet("k40", [0, 0, 0, 0], **kw)
    with pytest.raises(ValueError, match=message):
        m.play(hand)


def test_wrapper_rejects_bad_player_counts():
    with pytest.raises(ValueError, match="n_players"):
        MatchScore("k40", 2)                           # K40 preset: 3..6 (A38: override players_min)
    with pytest.raises(ValueError, match="n_players"):
        MatchScore("k40", 7)


# ------------------------------------------------------------------------------------------------
# The compiled kernels on plain arrays


def _arrays(n):
    return (np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64),
            np.zeros(n, np.int64), np.zeros(1, np.int64), np.zeros((n, M.N_EV), np.int64))


def test_kernels_on_plain_arrays():
    rv = load_rules("k40").to_vector()
    n = 4
    active, totals, units, bb, pool, ev = _arrays(n)
    M.start_match(rv, n, active, totals, units, bb, pool)
    assert pool[0] == 20 and active.tolist() == [1, 1, 1, 1]
    zeros = np.zeros(n, np.int64)
    wants = np.ones(n, np.int8)
    for w, how, pen in [(2, M.HOW_RIP, [70, 30, 0, 60]), (0, M.HOW_RIP, [0, 60, 45, 15]),
                        (2, M.HOW_KALOOKI, [10, 55, 0, 10]), (3, M.HOW_RIP, [10, 20, 35, 0])]:
        r = M.settle_hand(rv, n, active, totals, units, bb, pool, w, how,
                          np.array(pen, np.int64), zeros, zeros, wants, ev)
        assert r == M.MATCH_ON
    assert ev[1, M.EV_STATUS] == M.ST_BOUGHT_BACK and ev[1, M.EV_TOTAL_AT_ELIMINATION] == 165
    r = M.settle_hand(rv, n, active, totals, units, bb, pool, 2, M.HOW_RIP,
                      np.array([61, 110, 0, 85], np.int64), zeros, zeros, wants, ev)
    assert r == 2
    money = np.zeros(n, np.int64)
    M.final_money(rv, n, active, units, bb, pool, money)
    assert money.tolist() == [-7, -16, 30, -7]
    # sticky end: another hand changes nothing and returns the winner again
    snap = (totals.copy(), units.copy(), pool.copy(), active.copy())
    r = M.settle_hand(rv, n, active, totals, units, bb, pool, 2, M.HOW_RIP,
                      np.array([5, 5, 0, 5], np.int64), zeros, zeros, wants, ev)
    assert r == 2
    for a, b in zip(snap, (totals, units, pool, active)):
        assert (a == b).all()


def test_kernel_rejects_a_winner_who_is_out():
    rv = load_rules("k40").to_vector()
    n = 3
    active, totals, units, bb, pool, ev = _arrays(n)
    M.start_match(rv, n, active, totals, units, bb, pool)
    active[1] = 0
    zeros = np.zeros(n, np.int64)
    r = M.settle_hand(rv, n, active, totals, units, bb, pool, 1, M.HOW_RIP,
                      np.array([5, 0, 5], np.int64), zeros, zeros, np.ones(n, np.int8), ev)
    assert r == M.ERR_BAD_WINNER
    assert totals.tolist() == [0, 0, 0] and units.tolist() == [0, 0, 0]


@pytest.mark.parametrize("variant", ["k40", "k51", "k101", "k40+v5+v6"])
@pytest.mark.parametrize("n_players", [3, 4, 6])
def test_random_games_conserve_money(variant, n_players):
    """Whole random games: money sums to zero, the pool is antes + buy-backs, totals stay legal."""
    rules = load_rules(variant)
    rng = np.random.default_rng(n_players * 1000 + len(variant))
    for game in range(40):
        m = MatchScore(rules, n_players, buy_back=lambda mm, p: rng.random() < 0.7)
        for _ in range(500):
            if m.over:
                break
            ins = [p for p in range(n_players) if m.active[p]]
            w = int(rng.choice(ins))
            how = ["rip", "kalooki", "void"][int(rng.choice(3, p=[0.8, 0.15, 0.05]))]
            pens = [0 if p == w else int(rng.integers(0, 90)) for p in range(n_players)]
            st = m.play(H(w, how, pens))
            lim = rules.elimination_at
            assert all(t < lim for t, a in zip(st.totals, st.active) if a)
            assert all(b <= rules.buy_back_limit for b in st.buybacks)
            assert st.pool == n_players * rules.stake_ante + sum(st.buybacks) * rules.stake_buy_back
            assert sum(st.units) == 0
        assert m.over, f"game {game} did not finish"
        final = m.history[-1]
        assert sum(final.money) == 0
        assert final.active.count(True) == 1 and final.active[final.match_winner]


def test_plain_tuples_and_mappings_are_accepted():
    plain = [(h.winner, h.how, list(h.penalties)) for h in SHEET_HANDS[:3]]
    plain.append({"winner": 3, "how": "rip", "penalties": [10, 20, 35, 0]})
    plain.append(SHEET_HANDS[4])
    assert score_match("k40", 4, plain) == score_match("k40", 4, SHEET_HANDS)
    with pytest.raises(TypeError):
        score_match("k40", 4, ["rip"])


def test_no_winner_hand_scored_in_caribbean_only():
    """D27: a hand stopped without a winner (turn cap, void cap) counts as it stands in Caribbean's
    fixed-hands mode; in the money and elimination modes it changes nothing (MS8)."""
    carib = MatchScore("caribbean", 3)
    st = carib.play(HandResult(None, "void", (12, 0, 30)))
    assert st.totals == (12, 0, 30) and st.penalties == (12, 0, 30)
    for variant in ("k40", "na15"):
        m = MatchScore(variant, 3)
        st = m.play(HandResult(None, "void", (12, 0, 30)))
        assert st.totals == (0, 0, 0) and st.payments == (0, 0, 0)


def test_penalty_multiplier_is_the_one_rule():
    """The kalooki and down-and-out multipliers, as the engine and the sheet both apply them."""
    for variant in ("caribbean", "k40", "american"):
        r = load_rules(variant)
        rv = r.to_vector()
        assert M.penalty_multiplier(rv, M.HOW_RIP) == 1
        assert M.penalty_multiplier(rv, M.HOW_VOID) == 1
        assert M.penalty_multiplier(rv, M.HOW_KALOOKI) == r.kalooki_penalty_multiplier
        assert M.penalty_multiplier(rv, M.HOW_DOWN_AND_OUT) == r.down_and_out_multiplier
    dao = load_rules("caribbean", down_and_out_multiplier=2)
    m = MatchScore(dao, 3)
    st = m.play(HandResult(0, "down_and_out", (0, 5, 7)))
    assert st.totals == (0, 10, 14)
