from __future__ import annotations

import importlib.util
from pathlib import Path

# The language tests' structure()/job_graph_dump() helpers, loaded by path: both test
# directories have a conftest module, so a plain import would find this one.
_spec = importlib.util.spec_from_file_location(
    "_language_conftest", Path(__file__).parents[1] / "language" / "conftest.py")
assert _spec is not None and _spec.loader is not None
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
structure = _mod.structure
job_graph_dump = _mod.job_graph_dump
