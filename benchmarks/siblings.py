"""Load another benchmark script of this directory as a module, by its path.

A plain ``import executor`` / ``import streaming`` finds whatever package of that name
comes first on ``sys.path`` - under pytest the test packages ``tests/executor`` and
``tests/streaming`` - so the scripts import each other through this."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load(name: str) -> ModuleType:
    """``benchmarks/<name>.py``, loaded once per process."""
    key = f"flowc_benchmark_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, Path(__file__).resolve().parent
                                                  / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module
