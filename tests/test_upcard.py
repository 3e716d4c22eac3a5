"""The upcard term (agents/learned/upcard.py): its features against a slow definition, the three
ways of scoring a network with it (forward, legal_logits, the compiled acting path) against each
other, an unfitted term that changes nothing, checkpoints that keep it, and train_selfplay's fit
of it, which leaves the trunk alone."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytestmark = pytest.mark.learn
torch = pytest.importorskip("torch", reason='learned agents need the learn extra (pip install -e ".[learn]")')

from kalooki_sim import load_rules  # noqa: E402
from kalooki_sim.agents.learned import (  # noqa: E402
    LearnedPolicy, PolicyValueNet, export_policy, load_checkpoint, save_checkpoint,
)
from kalooki_sim.agents.learned.upcard import N_UPCARD_FEATURES, upcard_features  # noqa: E402
from kalooki_sim.agents.observation import F_SEAT, O_HAND, O_SCAL, O_SEATS, O_TOP  # noqa: E402
from kalooki_sim.engine import layout as L  # noqa: E402
from kalooki_sim.runtime.env import N_ACTIONS, OBS_DIM, KalookiVecEnv  # noqa: E402
from kalooki_sim.studies.expert_data import Decisions  # noqa: E402
from load_script import load_script  # noqa: E402


def _features_by_hand(row: np.ndarray) -> np.ndarray:
    """The definition, one row at a time: the upcard's relations to the hand (zero unless the top
    discard is a natural), then the scalars read as they are."""
    out = np.zeros(N_UPCARD_FEATURES, dtype=np.float32)
    tops = np.flatnonzero(row[O_TOP:O_TOP + L.N_TYPES])
    hand = np.rint(row[O_HAND:O_HAND + L.N_TYPES] * 2)
    if tops.size and tops[0] < 52:
        t = int(tops[0])
        rank, suit = t % 13, t // 13
        copies = hand[t]
        same = sum(hand[s * 13 + rank] for s in range(4)) - copies
        out[min(int(same), 4)] = 1.0
        out[5 + min(int(copies), 2)] = 1.0
        for i, d in enumerate((-2, -1, 1, 2)):
            out[8 + i] = hand[suit * 13 + (rank + d) % 13]
        out[12 + rank] = 1.0
    scal = [O_SCAL + 2, O_SCAL + 3, O_SCAL + 6, O_SCAL + 33, O_SCAL + 34, O_SEATS + 1, O_SEATS + 4,
            *(O_SEATS + k * F_SEAT + 1 for k in (1, 2, 3))]
    out[25:] = row[scal]
    return out


def _observations(seed: int, steps: int = 40):
    """Observations of real Caribbean positions (greedy seats), and made-up rows whose top discard
    is a joker or missing, with hands holding both copies of cards."""
    env = KalookiVecEnv("caribbean", 4, batch=64, lineup=["learner", "greedy", "greedy", "greedy"], seed=seed)
    obs, mask, _ = env.reset()
    seen, masks = [obs.copy()], [mask.copy()]
    for _ in range(steps):
        obs, mask, *_ = env.step(env.compiled_actions("greedy"))
        seen.append(obs.copy())
        masks.append(mask.copy())
    rng = np.random.default_rng(seed)
    odd = np.zeros((20, OBS_DIM), dtype=np.float32)
    odd[:, O_HAND:O_HAND + L.N_TYPES] = rng.integers(0, 3, size=(20, L.N_TYPES)) / 2.0
    odd[:10, O_TOP + 52] = 1.0                         # a joker on top; the last ten have no top discard
    return np.concatenate(seen), np.concatenate(masks), odd


def test_features_are_their_definition():
    obs, _, odd = _observations(1)
    rows = np.concatenate([obs[::7], odd])
    got = upcard_features(torch.from_numpy(rows)).numpy()
    want = np.stack([_features_by_hand(r) for r in rows])
    np.testing.assert_array_equal(got, want)
    assert (got[:, 3:5].sum(axis=1) > 0).any()              # some hand holds three or more of the upcard's rank
    assert (got[-20:, :25] == 0).all()


def _net_with_term(seed: int, margin: float | None = 0.0):
    torch.manual_seed(seed)
    net = PolicyValueNet(hidden=(32,), upcard_hidden=8)
    with torch.no_grad():
        net.upcard.net[-1].bias.fill_(2.0)                  # a term that often overrules the trunk
        if margin is not None:
            net.upcard.margin.fill_(margin)
    return net


@pytest.mark.parametrize("seed", range(2))
def test_forward_legal_logits_and_acting_agree_with_the_term(seed):
    """Differential: the upcard's logit from the full forward pass, from ``legal_logits`` and from
    the compiled acting path, on real positions; the term raises it at some draws (so the check
    can fail) and greedy acting is the forward pass's argmax."""
    net = _net_with_term(seed)
    pol = LearnedPolicy(net, greedy=True)
    obs, mask, _ = _observations(seed)
    with torch.no_grad():
        logits, _ = net(torch.from_numpy(obs), torch.from_numpy(mask))
        rows, acts = np.nonzero(mask)
        choice = np.unique(rows)
        local = np.searchsorted(choice, rows)
        pairs = net.legal_logits(torch.from_numpy(obs[choice]), torch.from_numpy(local), torch.from_numpy(acts))
        plain = PolicyValueNet(hidden=(32,))
        plain.load_state_dict({k: v for k, v in net.state_dict().items() if not k.startswith("upcard.")})
        before, _ = plain(torch.from_numpy(obs), torch.from_numpy(mask))
    scored = pol.legal_scores(np.ascontiguousarray(obs), choice, local, acts.astype(np.int64))
    np.testing.assert_allclose(pairs.numpy(), logits.numpy()[choice[local], acts], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(scored, pairs.numpy(), rtol=1e-4, atol=1e-4)
    draws = mask[:, L.A_DRAW_STOCK] & mask[:, L.A_DRAW_DISCARD]
    raised = (logits[:, L.A_DRAW_DISCARD] > before[:, L.A_DRAW_DISCARD] + 1e-6).numpy()
    assert raised[draws].any() and not raised[~draws].any()
    assert (logits.numpy()[~draws] == before.numpy()[~draws]).all()
    chosen = pol.act(obs, mask, np.random.default_rng(0))
    np.testing.assert_array_equal(chosen[draws], logits.argmax(1).numpy()[draws])


def test_an_unfitted_term_changes_nothing_and_checkpoints_keep_a_fitted_one(tmp_path):
    rules = load_rules("caribbean")
    obs, mask, _ = _observations(3, steps=10)
    o, m = torch.from_numpy(obs), torch.from_numpy(mask)
    inert = _net_with_term(0, margin=None)
    plain = PolicyValueNet(hidden=(32,))
    plain.load_state_dict({k: v for k, v in inert.state_dict().items() if not k.startswith("upcard.")})
    with torch.no_grad():
        torch.testing.assert_close(inert(o, m)[0], plain(o, m)[0], rtol=0, atol=0)
    fitted = _net_with_term(0)
    back, meta = load_checkpoint(save_checkpoint(tmp_path / "a.pt", fitted, rules), rules)
    assert meta["upcard_hidden"] == 8 and back.upcard_hidden == 8
    small, _ = load_checkpoint(export_policy(tmp_path / "a.pt", tmp_path / "b.pt", rules), rules)
    with torch.no_grad():
        torch.testing.assert_close(back(o, m)[0], fitted(o, m)[0])
        assert (small(o, m)[0].argmax(1) == fitted(o, m)[0].argmax(1)).float().mean() > 0.99
    blob = torch.load(tmp_path / "a.pt", weights_only=True)
    del blob["upcard_hidden"]
    blob["state_dict"] = {k: v for k, v in blob["state_dict"].items() if not k.startswith("upcard.")}
    torch.save(blob, tmp_path / "old.pt")
    assert load_checkpoint(tmp_path / "old.pt", rules)[0].upcard is None    # written before the term


def test_upcard_gains_picks_the_base_s_stock_draws_the_search_compared():
    mod = load_script("experiments/train_selfplay.py")
    S, U, D = L.A_DRAW_STOCK, L.A_DRAW_DISCARD, L.A_DISCARD + 4
    cand = [[S, U], [U, S], [S], [D, D + 1], [S, U]]
    gain = [[0.0, 0.03], [0.0, -0.02], [0.0], [0.0, 0.1], [0.0, -0.01]]
    ptr = np.concatenate([[0], np.cumsum([len(c) for c in cand])])
    empty = np.zeros(6, dtype=np.int64)
    data = Decisions(obs_ptr=empty, obs_index=empty[:0], obs_value=np.zeros(0, np.float32), legal_ptr=empty,
                     legal=empty[:0], label=np.array([U, U, S, D, S]), round=np.ones(5, np.int32), cand_ptr=ptr,
                     candidates=np.concatenate(cand), gain=np.concatenate(gain), gain_se=np.zeros(ptr[-1]))
    rows, g = mod.upcard_gains(data)
    assert list(rows) == [0, 4] and list(g) == [0.03, -0.01]


def test_train_selfplay_fits_only_the_term_after_round_0(tmp_path):
    """A tiny run with ``--upcard-hidden``: round 1 fits the term to a (tiny) search's draw gains and
    sets its margin; every trunk weight is round 0's."""
    rules = load_rules("caribbean")
    teacher = tmp_path / "search-tiny.toml"
    teacher.write_text('agent = "search"\nbase = "greedy"\ndescription = "tiny"\n[params]\nworlds = 2\n'
                       'candidates = 2\nconfidence = 0\nsearch_discard = 0\nsearch_meld = 0\n')
    out = tmp_path / "run"
    mod = load_script("experiments/train_selfplay.py")
    assert mod.main(["--variant", "caribbean", "--players", "3", "--opponents", "greedy,greedy", "--hidden", "32",
                     "--bc-teacher", str(teacher), "--warmup-teacher", "greedy", "--warmup-decisions", "64",
                     "--bc-decisions", "400", "--bc-epochs", "1", "--dagger-rounds", "1", "--total-decisions", "0",
                     "--upcard-hidden", "8", "--upcard-epochs", "2", "--upcard-margin", "0.01",
                     "--upcard-scale", "0.05", "--eval-every", "0", "--out", str(out), "--no-progress"]) == 0
    r0, _ = load_checkpoint(out / "expert" / "round_00.pt", rules)
    r1, _ = load_checkpoint(out / "expert" / "round_01.pt", rules)
    s0, s1 = r0.state_dict(), r1.state_dict()
    assert all(torch.equal(s0[k], s1[k]) for k in s0 if not k.startswith("upcard."))
    assert not all(torch.equal(s0[k], s1[k]) for k in s0 if k.startswith("upcard.net"))
    assert float(r1.upcard.margin) == pytest.approx(0.01 / 0.05)
    rounds = [json.loads(x) for x in (out / "expert" / "rounds.jsonl").read_text().splitlines()]
    assert rounds[1]["upcard_draws"] > 0 and "upcard_mse" in rounds[1]
