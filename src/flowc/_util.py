"""Small shared helpers."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building a large graph.

    Graph builders allocate hundreds of thousands of long-lived objects; every collection
    pass rescans them all, which makes planning superlinear. The IRs hold no reference
    cycles that need the collector, so pausing it is safe; it is re-enabled on exit.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
