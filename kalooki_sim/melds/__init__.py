"""Meld engine: legality, values, contracts and the exact best lay-down (compiled with numba).

``reference.py`` holds the slow, obviously-correct oracle the kernels are tested against.
"""

from .api import LayDown, best_lay_down, is_legal_meld, meets_contract, meld_value, opening_value

__all__ = ["LayDown", "best_lay_down", "is_legal_meld", "meets_contract", "meld_value", "opening_value"]
