"""Named strategies (TOML: a base compiled agent, its parameters, a description), installed as the
package ``kalooki_sim.strategy_configs`` so they ship with the wheel (``kalooki_sim.runtime.strategies``)."""
