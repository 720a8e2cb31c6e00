"""``import udf``: loading the user's Python function (split out of parser/lower.py):
the module imported from the script's directory, failures said in plain words, the
declared arity checked against the function's signature."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable
from typing import Any

from flowc import user_modules
from flowc.errors import FlowNameError, FlowTypeError, did_you_mean
from flowc.parser import ast as A


def import_failure(module: str, e: Exception, directory: str) -> tuple[str, str | None]:
    """Why importing a UDF module failed, in plain words (the exception class last), and a
    hint."""
    if isinstance(e, ModuleNotFoundError) and e.name is not None:
        if module == e.name or module.startswith(e.name + "."):
            return (f"no module named '{e.name}'",
                    "modules are found next to the script and on Python's import path")
        return (f"it imports '{e.name}', which is not installed",
                "install the package that provides it into the Python that runs flowc")
    if isinstance(e, SyntaxError):
        where = f"{os.path.basename(e.filename or '')}:{e.lineno}" if e.lineno else "its file"
        return f"{where} is not valid Python ({e.msg})", None
    # The module's own code failed: name the line of the module where it did.
    tb = e.__traceback__
    where = ""
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.startswith(directory + os.sep):
            where = f" at {os.path.relpath(filename, directory)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return f"running it failed{where}: {e} ({type(e).__name__})", None


def load_udf(stmt: A.ImportUdf, base_dir: str | None) -> Callable[..., Any]:
    """The function an ``import udf`` names, its module imported with the script's
    directory on the import path; a clear error when that fails."""
    # The script's directory (the working directory for a bare file name or REPL
    # input) is on the import path while the module loads; its modules are the user's.
    directory = os.path.abspath(base_dir or ".")
    added = directory not in sys.path
    if added:
        sys.path.insert(0, directory)
    user_modules.add_directory(directory)
    try:
        module = importlib.import_module(stmt.module)
    except Exception as e:  # noqa: BLE001 - any failure of user code is a user error
        reason, hint = import_failure(stmt.module, e, directory)
        raise FlowNameError(f"cannot import module '{stmt.module}': {reason}",
                            stmt.path_span, hint=hint) from None
    finally:
        if added and directory in sys.path:
            sys.path.remove(directory)
    fn = getattr(module, stmt.function, None)
    if fn is None:
        public = [n for n in dir(module) if not n.startswith("_")]
        raise FlowNameError(f"module '{stmt.module}' has no function '{stmt.function}'",
                            stmt.path_span, hint=did_you_mean(stmt.function, public))
    if not callable(fn):
        raise FlowTypeError(f"'{stmt.module}.{stmt.function}' is not a function",
                            stmt.path_span)
    return fn  # type: ignore[no-any-return]


def check_arity(stmt: A.ImportUdf, fn: Callable[..., Any]) -> None:
    """The function must accept as many positional arguments as the import declares."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # no introspectable signature: checked when called
        return
    n = len(stmt.params)
    try:
        signature.bind(*([None] * n))
    except TypeError as e:
        raise FlowTypeError(f"the import declares {n} parameter{'s' if n != 1 else ''}, but "
                            f"{stmt.function}{signature} cannot be called with {n} "
                            f"argument{'s' if n != 1 else ''}: {e}", stmt.path_span,
                            hint="make the declared parameter types match the Python "
                                 "function's parameters") from None
