"""kalooki-sim: a rules-exact, numba-compiled Kalooki engine and research framework."""

from kalooki_sim.core.rules import Rules, RulesError, load_rules

__version__ = "0.1.0"
__all__ = ["Rules", "RulesError", "load_rules", "__version__"]
