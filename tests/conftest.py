"""Suite-wide ordering: the tests that hold a core for minutes go first.

``test_jit_plain`` compiles the closed loop with plain numba in a fresh process (no cache: about
eight minutes of one core).  Started first, it runs on one worker while the other works through the
rest of the suite (``--dist worksteal`` in ``scripts/test.sh`` lets the idle worker take the tests
queued behind it); started last, it would be the whole suite's tail.
"""


def pytest_collection_modifyitems(config, items):
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        items[:] = slow + [item for item in items if not item.get_closest_marker("slow")]
