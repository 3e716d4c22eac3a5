"""The core every other layer stands on: cards and their text (``cards``), the rules and their
compiled integer form (``rules``, ``rulevec``), bit tricks (``bits``), the counter-based random
streams (``rng``), the project's numba wrapper and its cache (``jit``, ``jit_cache``), lanes of
kernels on threads (``lanes``), array views (``views``) and hand penalties (``scoring``).

It imports nothing of the package above it, except that ``rules`` asks ``melds.positions`` for the
run tables it derives (one declared exception, see ``.importlinter``).
"""
