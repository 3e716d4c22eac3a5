"""The learned agent (agents/learned): masked network, the Policy protocol, checkpoints that refuse
other rules or another observation layout."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.learn
torch = pytest.importorskip("torch", reason='learned agents need the learn extra (pip install -e ".[learn]")')

from kalooki_sim import load_rules  # noqa: E402
from kalooki_sim.agents.base import Policy  # noqa: E402
from kalooki_sim.agents.learned import (  # noqa: E402
    CheckpointMismatch, LearnedPolicy, PolicyValueNet, export_policy, load_checkpoint, policy as learned_policy,
    save_checkpoint,
)
from kalooki_sim.agents.observation import OBS_WIDTHS  # noqa: E402
from kalooki_sim.engine.layout import A_DISCARD, A_SETTAKE, A_SPLIT, A_TACK, A_TAKE_END, A_UPSWAP  # noqa: E402
from kalooki_sim.runtime.env import N_ACTIONS, OBS_DIM, OBS_VERSION, KalookiVecEnv  # noqa: E402


def _net(seed=0):
    torch.manual_seed(seed)
    return PolicyValueNet(hidden=(32,))


def test_network_plays_only_legal_actions_and_repeats_with_its_rng():
    """Every decision of a few hundred steps of a batch is the network's, and legal (the env raises
    on an illegal action); the same seed plays the same actions."""
    pol = LearnedPolicy(_net())
    assert isinstance(pol, Policy)
    runs = []
    for _ in range(2):
        env = KalookiVecEnv("caribbean", 4, batch=16, lineup=["learner", "greedy", "learner", "greedy"], seed=3)
        obs, mask, _ = env.reset()
        rng = np.random.default_rng(7)
        played = []
        for _ in range(200):
            a = pol.act(obs, mask, rng)
            assert mask[np.arange(16), a].all()
            played.append(a.copy())
            obs, mask, *_ = env.step(a)
        runs.append(np.array(played))
    np.testing.assert_array_equal(runs[0], runs[1])
    greedy = LearnedPolicy(pol.net, greedy=True)
    a = greedy.act(obs, mask, np.random.default_rng(0))
    logits, value = pol.net(torch.tensor(obs), torch.tensor(mask))     # (the env's buffers are read-only: copies)
    logits = logits.detach()
    best = logits.max(dim=1).values.numpy()
    chosen = logits.numpy()[np.arange(16), a]
    np.testing.assert_allclose(chosen, best, rtol=1e-5, atol=1e-5)      # an argmax, up to float rounding
    assert value.shape == (16,)


@pytest.mark.parametrize("seed", range(3))
def test_legal_logits_are_the_full_logits_at_those_entries(seed):
    """Differential: the logits acting computes (legal entries only) against the full forward pass,
    on random observations and masks holding draws, discards (the card scores), lay-offs."""
    torch.manual_seed(seed)
    net = PolicyValueNet(hidden=(48, 32))
    rng = np.random.default_rng(seed)
    obs = torch.tensor(rng.normal(size=(40, OBS_DIM)), dtype=torch.float32)
    mask = torch.tensor(rng.random((40, N_ACTIONS)) < 0.01)
    mask[:, 0] = True
    with torch.no_grad():
        logits, _ = net(obs, mask)
        rows, acts = torch.nonzero(mask, as_tuple=True)
        got = net.legal_logits(obs, rows, acts)
    torch.testing.assert_close(got, logits[rows, acts], rtol=1e-5, atol=1e-5)



@pytest.mark.parametrize("seed", range(4))
def test_sparse_first_layer_is_the_dense_product(seed):
    """Differential: ``fold_shared`` + ``sparse_affine`` (the non-zero entries' rows of the
    transposed weights, the ones every listed row shares folded into the bias) against torch's
    dense product, on thousands of random rows of every sparsity (all zeros, 5 %, dense, negative
    values), some columns the same in every row, a subset of the rows listed, inputs wider than
    the weights (a network of an earlier layout)."""
    from kalooki_sim.agents.learned.sparse import fold_shared, sparse_affine
    from kalooki_sim.core.lanes import run_lanes

    rng = np.random.default_rng(seed)
    d, h = int(rng.integers(1, 400)), int(rng.integers(1, 300))
    w = rng.normal(size=(h, d)).astype(np.float32)
    b = rng.normal(size=h).astype(np.float32)
    n = 2000
    x = rng.normal(size=(n, d + int(rng.integers(0, 5)))).astype(np.float32)
    x[rng.random(x.shape) > rng.choice([0.0, 0.05, 0.5, 1.0], size=(n, 1))] = 0.0
    const = rng.random(x.shape[1]) < 0.2                    # shared by every row (some of them zero)
    x[:, const] = rng.choice([0.0, 0.5, -1.0], size=int(const.sum())).astype(np.float32)
    rows = np.sort(rng.choice(n, size=int(rng.integers(1, n)), replace=False)).astype(np.int64)
    wt = np.ascontiguousarray(w.T)
    shared, bias = np.empty(d, dtype=np.bool_), np.empty(h, dtype=np.float32)
    fold_shared(x, rows, wt, b, shared, bias)
    assert shared[const[:d] & (x[0, :d] != 0)].all()
    out = np.empty((rows.size, h), dtype=np.float32)
    run_lanes(sparse_affine, rows.size, x, rows, wt, bias, shared, out, min_per_thread=64)
    want = torch.nn.functional.linear(torch.from_numpy(x[rows, :d]), torch.from_numpy(w), torch.from_numpy(b))
    np.testing.assert_allclose(out, want.numpy(), rtol=1e-4, atol=1e-4 * np.sqrt(d))


@pytest.mark.parametrize("seed", range(3))
def test_acting_scores_are_the_reference_logits(seed):
    """Differential: the compiled acting path (``LearnedPolicy.legal_scores``: sparse first layer,
    composed discard scorer, one pass over the pairs) against ``legal_logits`` (torch), on real
    positions of the env and on random observations, with draws, discards and lay-offs."""
    torch.manual_seed(seed)
    net = PolicyValueNet(hidden=(48, 32))
    pol = LearnedPolicy(net)
    rng = np.random.default_rng(seed)
    env = KalookiVecEnv("caribbean", 4, batch=64, seed=seed)
    obs, mask, _ = env.reset()
    for _ in range(int(rng.integers(0, 30))):
        obs, mask, *_ = env.step(pol.act(obs, mask, rng))
    fake = rng.normal(size=(40, OBS_DIM)).astype(np.float32)
    fake[rng.random(fake.shape) < 0.9] = 0.0
    fake_mask = rng.random((40, N_ACTIONS)) < 0.01
    for o, m in ((obs, mask), (fake, fake_mask)):
        rows, acts = np.nonzero(m)
        choice = np.unique(rows)
        local = np.searchsorted(choice, rows)
        got = pol.legal_scores(np.ascontiguousarray(o), choice, local, acts.astype(np.int64))
        with torch.no_grad():
            want = net.legal_logits(torch.tensor(o[choice]), torch.from_numpy(local), torch.from_numpy(acts))
        assert ((acts >= A_DISCARD) & (acts < A_TACK)).any()
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-4)
    takes = ((acts >= A_TAKE_END) & (acts < A_SPLIT)) | ((acts >= A_SETTAKE) & (acts < A_UPSWAP))
    assert takes.sum() > 10                 # the take term was scored (the random rows)


def test_acting_follows_weights_changed_in_place():
    """The acting path keeps the weights laid out for its kernels; an optimizer step changes the
    weights in place, and the next action must be the changed network's (its argmax)."""
    pol = LearnedPolicy(_net(4), greedy=True)
    env = KalookiVecEnv("caribbean", 4, batch=16, seed=4)
    obs, mask, _ = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(3):
        with torch.no_grad():
            pol.net.trunk[0].weight.add_(torch.randn_like(pol.net.trunk[0].weight))
            pol.net.trunk[0].bias.mul_(-2.0)
            for layer in (pol.net.pi, pol.net.family, pol.net.context, pol.net.card[0]):
                layer.weight.add_(torch.randn_like(layer.weight))
        a = pol.act(obs, mask, rng)
        logits, _ = pol.net(torch.tensor(obs), torch.tensor(mask))
        logits = logits.detach().numpy()
        np.testing.assert_allclose(logits[np.arange(16), a], logits.max(axis=1), rtol=1e-4, atol=1e-4)
        obs, mask, *_ = env.step(a)

def test_masked_logits_give_illegal_actions_no_probability():
    net = _net()
    obs = torch.zeros((2, OBS_DIM))
    mask = torch.zeros((2, N_ACTIONS), dtype=torch.bool)
    mask[0, [3, 9]] = True
    mask[1, 100] = True
    dist, _ = net.distribution(obs, mask)
    p = dist.probs
    assert torch.all(p[~mask] == 0)
    torch.testing.assert_close(p.sum(dim=1), torch.ones(2))
    assert p[1, 100] == 1


def test_checkpoint_round_trip_and_refusals(tmp_path, monkeypatch):
    rules = load_rules("caribbean")
    net = _net(1)
    path = save_checkpoint(tmp_path / "ck" / "policy.pt", net, rules, extra={"step": 12})
    again, meta = load_checkpoint(path, rules)
    assert meta["rules_digest"] == rules.digest() and meta["obs_version"] == OBS_VERSION
    assert meta["extra"] == {"step": 12}
    obs = torch.rand((4, OBS_DIM))
    mask = torch.ones((4, N_ACTIONS), dtype=torch.bool)
    for x, y in zip(net(obs, mask), again(obs, mask)):
        torch.testing.assert_close(x, y)
    other = load_rules("k40")
    with pytest.raises(CheckpointMismatch, match=r"trained on rules 'caribbean' .* not on 'k40'"):
        load_checkpoint(path, other)
    with pytest.raises(CheckpointMismatch, match="digest"):
        load_checkpoint(path, load_rules("caribbean", max_calls_per_player=1))
    monkeypatch.setattr(learned_policy, "OBS_VERSION", OBS_VERSION + 1)
    monkeypatch.setattr(learned_policy, "OBS_WIDTHS", {OBS_VERSION + 1: OBS_DIM + 7})
    with pytest.raises(CheckpointMismatch,
                       match=rf"observation version {OBS_VERSION} .* reads versions \[{OBS_VERSION + 1}\]"):
        load_checkpoint(path, rules)


def test_a_format_2_checkpoint_plays_as_trained_with_a_zero_take_term(tmp_path):
    """A checkpoint written before the take term (format 2: no ``take`` tensors) loads with that
    term zero, so its logits are those of its own weights whatever the takes section holds."""
    rules = load_rules("k40")
    net = _net(6)
    path = save_checkpoint(tmp_path / "f3.pt", net, rules)
    blob = torch.load(path, weights_only=True)
    blob["format"] = 2
    blob["state_dict"] = {k: v for k, v in blob["state_dict"].items() if not k.startswith("take.")}
    torch.save(blob, tmp_path / "f2.pt")
    old, _ = load_checkpoint(tmp_path / "f2.pt", rules)
    assert not old.take.weight.any() and not old.take.bias.any()
    with torch.no_grad():
        net.take.weight.zero_(), net.take.bias.zero_()
    obs = torch.rand((8, OBS_DIM))
    mask = torch.ones((8, N_ACTIONS), dtype=torch.bool)
    for x, y in zip(old(obs, mask), net(obs, mask)):
        torch.testing.assert_close(x, y)


def test_a_network_of_an_earlier_layout_reads_its_prefix(tmp_path):
    """A checkpoint of observation version 3 (the shipped learned-caribbean's) keeps loading after
    version 4 appended a section: it records version 3 and reads the first ``OBS_WIDTHS[3]``
    features of a version-4 observation, whatever follows them."""
    rules = load_rules("caribbean")
    torch.manual_seed(5)
    old = PolicyValueNet(OBS_WIDTHS[3], N_ACTIONS, hidden=(32,))
    again, meta = load_checkpoint(save_checkpoint(tmp_path / "v3.pt", old, rules), rules)
    assert meta["obs_version"] == 3 and again.obs_dim == OBS_WIDTHS[3]
    obs = torch.rand((4, OBS_DIM))
    noisy = obs.clone()
    noisy[:, OBS_WIDTHS[3]:] = torch.rand((4, OBS_DIM - OBS_WIDTHS[3]))
    mask = torch.ones((4, N_ACTIONS), dtype=torch.bool)
    for x, y in zip(again(obs, mask), again(noisy, mask)):
        torch.testing.assert_close(x, y)


def test_exported_policy_is_smaller_and_acts_like_its_source(tmp_path):
    """``export_policy`` drops the critic and halves the weights: a third of the file, logits
    within float16 rounding of the source's, the same argmax on random positions; its metadata
    (rules, observation version) still refuses other rules."""
    rules = load_rules("caribbean")
    net = _net(3)
    src = save_checkpoint(tmp_path / "full.pt", net, rules)
    dst = export_policy(src, tmp_path / "ship" / "policy.pt", rules)
    assert dst.stat().st_size < 0.4 * src.stat().st_size
    small, meta = load_checkpoint(dst, rules)
    assert meta["policy_only"] and meta["extra"]["exported_from"] == str(src)
    g = torch.Generator().manual_seed(4)
    obs = torch.rand((64, OBS_DIM), generator=g)
    mask = torch.rand((64, N_ACTIONS), generator=g) < 0.01
    mask[:, 4] = True
    a, _ = net(obs, mask)
    b, _ = small(obs, mask)
    legal = mask.nonzero(as_tuple=True)
    torch.testing.assert_close(a[legal], b[legal], rtol=0, atol=5e-2)
    assert (a.argmax(1) == b.argmax(1)).float().mean() >= 0.95
    with pytest.raises(CheckpointMismatch, match="not on 'k40'"):
        load_checkpoint(dst, load_rules("k40"))


def test_play_policies_rows_like_simulate_and_batch_invariant_for_a_deterministic_policy():
    """A network in two seats (one object) and compiled greedy in the others: ``simulate``'s
    columns, one row per game and seat; the argmax network plays the same games for any batch."""
    from kalooki_sim.runtime.policy_play import play_policies
    from kalooki_sim.runtime.rollout import HAND_COLUMNS

    rules = load_rules("caribbean")
    pol = LearnedPolicy(_net(2), greedy=True)
    seats = [pol, "greedy", pol, "greedy"]
    a = play_policies(rules, 4, seats, 20, seed=5, batch=3)
    b = play_policies(rules, 4, seats, 20, seed=5, batch=16)
    assert set(a) == set(HAND_COLUMNS)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    assert len(a["game_id"]) == 80 and (np.bincount(a["game_id"]) == 4).all()
    assert (a["policy_id"][np.isin(a["seat"], [0, 2])] == -1).all()
    assert (np.bincount(a["game_id"], weights=a["won"]) <= 1).all()
    with pytest.raises(ValueError, match="no policy seat"):
        play_policies(rules, 4, ["greedy"] * 4, 4)
    with pytest.raises(TypeError, match="neither"):
        play_policies(rules, 4, [object(), "greedy", "greedy", "greedy"], 4)
