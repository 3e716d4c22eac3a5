"""Experiments that play many games and write run directories (``records``): simulation runs
(``simulate``), duplicate tournaments (``tournament``) and the rule-variant balance study
(``balance``, ``balance_stats``, ``balance_report``, ``backends``).
"""
