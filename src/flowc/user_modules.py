"""Python modules of the user's own (UDF modules next to a script, the modules of a program
run by ``flowc run prog.py``).

Spark's workers may not see the script's directory (a standalone cluster runs them
elsewhere; a console script's ``sys.path`` lacks it), and cloudpickle pickles an importable
function by reference. The front ends record the directories user code comes from; the
Spark executor ships every loaded module from them by value (``register_pickle_by_value``)
before it runs a job.
"""

from __future__ import annotations

import os
import sys
import sysconfig

_roots: set[str] = set()


def add_directory(directory: str) -> None:
    """Modules loaded from ``directory`` (or below it) are the user's."""
    _roots.add(os.path.join(os.path.abspath(directory), ""))


def _installed() -> tuple[str, ...]:
    # A script run from "/" or from a virtualenv must not claim installed packages.
    paths = {sys.prefix, sys.base_prefix, *sysconfig.get_paths().values()}
    return tuple(os.path.join(os.path.abspath(p), "") for p in paths if p)


def loaded() -> list[str]:
    """Names of the loaded user modules, in a stable order (flowc's own, installed packages
    and the standard library never count)."""
    installed = _installed()
    names = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not path or name.split(".")[0] == "flowc" or name == "__main__":
            continue
        path = os.path.abspath(path)
        if any(path.startswith(root) for root in _roots) and not path.startswith(installed):
            names.append(name)
    return sorted(names)
