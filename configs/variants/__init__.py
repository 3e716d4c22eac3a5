"""Variant presets (TOML), installed as the package ``kalooki_sim.presets`` so they ship with the wheel."""
