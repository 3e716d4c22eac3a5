"""What plays games: the one turn loop (``loop``) and its closed-loop driver (``rollout``), the
lockstep learning environments (``env``, ``env_kernels``, ``env_wrappers``, ``policy_play``), the
readable ``Game`` (``game``, ``position_text``), replays (``replay``, ``replay_check``,
``replay_render``), ``kalooki play`` (``play``) and named strategies (``strategies``).

It stands on the engine and the agents; studies and the command line stand on it.
"""
