"""The policy's logits at a batch's legal entries only, in one compiled pass (acting, not training).

``PolicyValueNet.legal_logits`` (torch, differentiable) is the reference; a tournament's learned
seat instead calls ``legal_scores``, because torch spends most of that step on a dozen small
operations (gathers of ``z`` and of the head's rows per legal pair, the discard scorer's
concatenation) rather than on arithmetic: a decision has a handful of legal actions, and each pair
needs one dot product.  The per-row parts that are products with the trunk's output (the family
bias, the discard scorer's first layer applied to the projected context, composed into one
``hidden x card_hidden`` map, and the take term's coefficients, ``LearnedPolicy``) come in as
``head``: one matrix product per batch.  ``tests/test_learned.py`` checks it against the reference.
"""

from __future__ import annotations

from kalooki_sim.core.jit import njit
from kalooki_sim.engine.layout import A_DISCARD, A_SETTAKE, A_SPLIT, A_TACK, A_TAKE_END, A_UPSWAP

__all__ = ["legal_scores"]


@njit(_nrt=False)
def legal_scores(z, pair_rows, actions, w_pi, b_pi, head, n_families, families, x, x_rows, cards_at, n_cf,
                 w_card, w_out, b_out, takes_at, takes_set, out):
    """``out[k]``: the logit of action ``actions[k]`` in row ``pair_rows[k]`` of ``z`` (the trunk's
    output): ``w_pi[a] . z[r] + b_pi[a] + head[r, families[a]]``, and for a discard of card type
    ``t`` the discard scorer ``w_out . relu(w_card @ x[x_rows[r], cards_at + t * n_cf ..] +
    head[r, n_families:]) + b_out`` (``head``'s next ``card_hidden`` columns: the scorer's first
    layer at the row's context, its bias included); for a take of a table card, its coefficient
    (``head``'s last two columns: run ends, set naturals) times the observation's takes entry at
    ``takes_at`` (the run ends first, the sets' from ``takes_set``; ``takes_at`` < 0: a network
    without the take term)."""
    h = z.shape[1]
    ch = w_card.shape[0]
    kt = n_families + ch
    for k in range(pair_rows.shape[0]):
        r = pair_rows[k]
        a = actions[k]
        s = b_pi[a] + head[r, families[a]]
        for j in range(h):
            s += w_pi[a, j] * z[r, j]
        if A_DISCARD <= a < A_TACK:
            o = cards_at + (a - A_DISCARD) * n_cf
            xr = x_rows[r]
            card = b_out
            for c in range(ch):
                u = head[r, n_families + c]
                for f in range(n_cf):
                    u += w_card[c, f] * x[xr, o + f]
                if u > 0.0:
                    card += w_out[c] * u
            s += card
        elif takes_at >= 0 and A_TAKE_END <= a < A_SPLIT:
            s += head[r, kt] * x[x_rows[r], takes_at + a - A_TAKE_END]
        elif takes_at >= 0 and A_SETTAKE <= a < A_UPSWAP:
            s += head[r, kt + 1] * x[x_rows[r], takes_at + takes_set + a - A_SETTAKE]
        out[k] = s
