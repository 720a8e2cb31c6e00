"""The REPL's terminal side: the prompt loop (Enter, completion, history), tables that fold
rather than cut, the pager, Ctrl-C while a job runs, and starting Spark in the background.
``session`` is a :class:`flowc.repl.Session`."""

from __future__ import annotations

import contextlib
import os
import pydoc
import shlex
import shutil
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

from rich.table import Table

# one-line commands: Enter runs them without a ';'
META = ("help", "quit", "exit", "show", "describe", "desc", "reset", r"\q")

NATURAL_WIDTH = 100_000  # wide enough for any row: the pager scrolls sideways


def make_table(columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> Table:
    # fold, not ellipsis: a value wider than its column wraps instead of being cut
    table = Table(show_lines=False)
    for c in columns:
        table.add_column(c, overflow="fold")
    for row in rows:
        table.add_row(*(str(v) for v in row))
    return table


def terminal_pager() -> Callable[[str], None]:
    """$PAGER, else ``less -SRFX`` (sideways scrolling, quits at once when the text fits,
    leaves it on the screen), else plain output."""
    cmd = os.environ.get("PAGER") or "less -SRFX"
    if not shutil.which(shlex.split(cmd)[0]):
        return pydoc.plainpager
    return lambda text: pydoc.pipepager(text, cmd)


@contextlib.contextmanager
def cancel_on_interrupt() -> Iterator[threading.Event]:
    """Ctrl-C while a job runs cancels its Spark jobs from another thread. (PySpark's own
    handler calls into py4j from inside the interrupted py4j call, which fails and logs
    about 45 lines of traceback before the job is cancelled.) A second Ctrl-C stops
    waiting for the cancellation."""
    hit = threading.Event()
    done = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield hit  # signal handlers belong to the main thread
        return

    def cancel() -> None:
        from flowc.executor.spark.session import get_spark, spark_running

        # until the job ends: a job still being submitted is cancelled once it exists
        while not done.wait(0.2):
            if spark_running():
                with contextlib.suppress(Exception):
                    get_spark().sparkContext.cancelAllJobs()

    def handler(signum: int, frame: Any) -> None:
        if hit.is_set():
            raise KeyboardInterrupt
        hit.set()
        threading.Thread(target=cancel, name="flowc-cancel", daemon=True).start()

    old = signal.signal(signal.SIGINT, handler)
    try:
        yield hit
    finally:
        done.set()
        signal.signal(signal.SIGINT, old)


def start_spark(master: str | None) -> threading.Thread:
    """Start Spark in a background thread, so the session is warm by the first query. A
    failure (no Java, a bad master) is reported by the first query, which starts again."""
    from flowc.executor import get_spark

    def start() -> None:
        with contextlib.suppress(Exception):
            get_spark(master)

    thread = threading.Thread(target=start, name="flowc-spark-start", daemon=True)
    thread.start()
    return thread


def _code_end(text: str) -> str | None:
    """The last character of ``text`` that is code (not in a ``--`` or ``/* */`` comment),
    or None when the text ends inside a string or a block comment (so it goes on)."""
    last = ""
    i, n = 0, len(text)
    while i < n:
        if text.startswith("--", i):
            nl = text.find("\n", i)
            i = n if nl < 0 else nl
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                return None
            i = end + 2
        elif text[i] in "'`":
            end = text.find(text[i], i + 1)
            while end >= 0 and text.startswith(text[i], end + 1):  # '' inside a string
                end = text.find(text[i], end + 2)
            if end < 0:
                return None
            last = text[end]
            i = end + 1
        else:
            if not text[i].isspace():
                last = text[i]
            i += 1
    return last


def complete_input(text: str) -> bool:
    """Whether Enter submits ``text``: its code ends with ';' (not one in a comment or a
    string), or it is a one-line command."""
    body = text.strip()
    if not body:
        return True
    end = _code_end(body)
    if end == ";":
        return True
    first = body.split(maxsplit=1)[0].lower()
    return end is not None and "\n" not in body and first in META


def completer(session: Any) -> Any:
    """prompt_toolkit's Tab completion: the session's names, fields, keywords and functions
    that start with the word before the cursor (any case)."""
    from prompt_toolkit.completion import Completer, Completion

    class Words(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Any:
            word = document.get_word_before_cursor(WORD=False)
            if not word or not (word[0].isalnum() or word[0] == "_"):
                return
            low = word.lower()
            for w in session.words():
                if w.lower().startswith(low) and w != word:
                    yield Completion(w, start_position=-len(word))

    return Words()


def prompt_loop(session: Any, *, history: str | None = None, input: Any = None,
                output: Any = None) -> int:
    """Read-eval-print until quit or Ctrl-D. ``input``/``output`` are prompt_toolkit's
    (tests pass a pipe input and a DummyOutput)."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.lexers import PygmentsLexer

    from flowc.lexer import FlowLexer

    kb = KeyBindings()

    @kb.add("enter")
    def _(event: Any) -> None:
        buf = event.current_buffer
        if complete_input(buf.text):
            buf.validate_and_handle()
        else:
            buf.insert_text("\n")

    path = history if history is not None else os.path.expanduser("~/.flowc_history")
    hist: Any
    try:
        hist = FileHistory(path) if path else InMemoryHistory()
    except OSError:
        hist = InMemoryHistory()
    prompt: Any = PromptSession(history=hist, completer=completer(session),
                                lexer=PygmentsLexer(FlowLexer),
                                multiline=True, key_bindings=kb, input=input, output=output,
                                complete_while_typing=False)
    while True:
        try:
            text = prompt.prompt("flowc> ", prompt_continuation="  ...> ")
        except KeyboardInterrupt:
            continue
        except EOFError:
            return 0
        try:
            if not session.execute(text):
                return 0
        except KeyboardInterrupt:
            session.console.print("interrupted: the query was cancelled", markup=False)
        except Exception as e:  # noqa: BLE001 - the session survives our bugs too
            session.console.print(f"internal error: {type(e).__name__}: {e}", markup=False)
