"""The upcard term: a small network on the upcard's relations to the hand that can overrule the
trunk's draw from the stock.

The Caribbean search's margin over its base lives mostly in its draws (docs/learned-agents.md,
session 39), as small gains of taking the upcard that follow how the upcard relates to the hand:
how many other cards of its rank the hand holds, whether it holds the same card, its suit
neighbours. A trunk reading the whole observation, regressed on those noisy gains, learns their
noise (its departures lose on states it was not fitted to); a small network reading the relations
learns their pattern. The term is ``u(x) - margin`` (logit units, ``x = upcard_features(obs)``) and
it acts only where both draws are open:

    logit(upcard) <- max(logit(upcard), logit(stock) + u(x) - margin)

so the network's greedy choice is its trunk's, except that it takes the upcard wherever ``u``
predicts a gain above the margin; with no term (``upcard_hidden = 0``) nothing changes.
"""

from __future__ import annotations

import torch
from torch import nn

from kalooki_sim.agents.observation import F_SEAT, O_HAND, O_SCAL, O_SEATS, O_TOP
from kalooki_sim.engine import layout as L

__all__ = ["N_UPCARD_FEATURES", "UpcardTerm", "upcard_features", "raise_upcard", "draw_pairs"]

_RANKS = 13
INERT_MARGIN = 1.0e4           # a margin no fitted term reaches (logit units)
_NATURALS = 4 * _RANKS
# the scalars read (observation module: turn, stock, hand of the match, the top discard's usefulness
# and live potential) and the seat features (held, total) of the viewer
_SCALARS = (O_SCAL + 2, O_SCAL + 3, O_SCAL + 6, O_SCAL + 33, O_SCAL + 34, O_SEATS + 1, O_SEATS + 4)
_OTHERS_HELD = tuple(O_SEATS + k * F_SEAT + 1 for k in (1, 2, 3))
# one-hots of the other cards of its rank held (0 .. 4+) and of its copies held (0 .. 2), its four
# suit neighbours held, its rank, the scalars, the next three seats' hand sizes
N_UPCARD_FEATURES = 5 + 3 + 4 + _RANKS + len(_SCALARS) + len(_OTHERS_HELD)

_SAME_RANK = torch.tensor([[float(c < _NATURALS and c % _RANKS == r) for c in range(L.N_TYPES)] for r in range(_RANKS)])


def upcard_features(obs: torch.Tensor) -> torch.Tensor:
    """``float32[rows, N_UPCARD_FEATURES]`` of observation rows (a row whose top discard is not a
    natural, or that has none, has zero relation features)."""
    top_hot = obs[:, O_TOP:O_TOP + L.N_TYPES]
    hand = torch.round(obs[:, O_HAND:O_HAND + L.N_TYPES] * 2.0)
    top = top_hot.argmax(dim=1)
    natural = (top_hot.sum(dim=1) > 0) & (top < _NATURALS)
    top = torch.where(natural, top, torch.zeros_like(top))      # a joker or none: masked out below
    rank, suit = top % _RANKS, top // _RANKS
    rows = torch.arange(obs.shape[0])
    copies = hand[rows, top] * natural
    same = (hand @ _SAME_RANK.T)[rows, rank] * natural - copies
    neighbours = torch.stack([hand[rows, suit * _RANKS + (rank + d) % _RANKS] for d in (-2, -1, 1, 2)], dim=1)
    return torch.cat([
        nn.functional.one_hot(same.clamp(0, 4).long(), 5) * natural[:, None],
        nn.functional.one_hot(copies.clamp(0, 2).long(), 3) * natural[:, None],
        neighbours * natural[:, None],
        nn.functional.one_hot(rank, _RANKS) * natural[:, None],
        obs[:, list(_SCALARS)], obs[:, list(_OTHERS_HELD)],
    ], dim=1).float()


class UpcardTerm(nn.Module):
    """``u(x) - margin``: a two-layer network on ``upcard_features``; ``margin`` is a buffer (logit
    units), saved with the weights, and starts out so high that the term never acts: a network is
    its trunk until its term is fitted (``experiments/train_selfplay.py``)."""

    def __init__(self, hidden: int):
        super().__init__()
        self.hidden = int(hidden)
        self.net = nn.Sequential(nn.Linear(N_UPCARD_FEATURES, self.hidden), nn.ReLU(),
                                 nn.Linear(self.hidden, self.hidden), nn.ReLU(), nn.Linear(self.hidden, 1))
        self.register_buffer("margin", torch.tensor(INERT_MARGIN))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(upcard_features(obs)).squeeze(-1) - self.margin


def raise_upcard(up: torch.Tensor, stock: torch.Tensor, term: torch.Tensor) -> torch.Tensor:
    """The upcard's logit after the term (module docstring)."""
    return torch.maximum(up, stock + term)


def draw_pairs(rows: torch.Tensor, actions: torch.Tensor):
    """Where scored pairs ``(rows[k], actions[k])`` hold both draws of a row: the upcard's entries,
    the stock's entries of the same rows, and those rows."""
    n = int(rows.max()) + 1 if rows.numel() else 0
    stock_at = torch.full((n,), -1, dtype=torch.long)
    stock = torch.nonzero(actions == L.A_DRAW_STOCK).squeeze(1)
    stock_at[rows[stock]] = stock
    up = torch.nonzero(actions == L.A_DRAW_DISCARD).squeeze(1)
    at = stock_at[rows[up]]
    keep = at >= 0
    return up[keep], at[keep], rows[up[keep]]
