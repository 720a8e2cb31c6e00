"""Writes examples/data/sessions.csv: reading sessions with late data, for sessions.flow.

Users click in bursts (a few seconds apart) separated by more than the 30 s session gap, and
records are at most 3 s out of order. Some phones were offline: their clicks reach the file
minutes after they happened (``OFFLINE`` below). By then the watermark has long passed the
end of their session plus the 2 s allowed lateness, so sessions.flow sends them to the
``late_clicks`` side stream. The offline batches sit in both halves of the file, so they are
late however the file is split between source subtasks. Deterministic (fixed seed).

Run: python examples/data/make_sessions.py
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import os
import random

START = dt.datetime(2024, 5, 1, 10, 0, 0, tzinfo=dt.timezone.utc)
USERS = [f"user_{i}" for i in range(8)]
ARTICLES = [f"article_{i}" for i in range(12)]
ACTIONS = ["appclick", "appclick", "scroll", "share"]
# (user, offset of the first click from START in seconds, clicks, rows later in the file)
OFFLINE = [("user_3", 20, 3, 100), ("user_6", 200, 2, 160), ("user_1", 90, 4, 330)]


def iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def clicks(rng: random.Random) -> list[tuple[dt.datetime, str, str, str]]:
    rows = []
    for user in USERS:
        t = START + dt.timedelta(seconds=rng.uniform(0, 20))
        while t < START + dt.timedelta(minutes=12):
            for _ in range(rng.randint(3, 9)):  # one session: clicks a few seconds apart
                rows.append((t, user, rng.choice(ARTICLES), rng.choice(ACTIONS)))
                t += dt.timedelta(milliseconds=rng.randint(800, 8000))
            t += dt.timedelta(seconds=rng.uniform(40, 120))  # idle: the session ends
    rows.sort()
    return rows


def main(directory: str | None = None) -> None:
    rng = random.Random(20240502)  # fixed seed: the same file on every run
    rows = clicks(rng)
    # Jitter: a few records arrive up to 3 s late (within a still-open session).
    arrival = [(t + dt.timedelta(milliseconds=rng.randint(0, 3000)) if i % 11 == 0 else t, i)
               for i, (t, *_rest) in enumerate(rows)]
    order = [i for _, i in sorted(arrival)]
    out = [(rows[i][1], rows[i][2], rows[i][3], iso(rows[i][0])) for i in order]
    for i in range(0, len(out), 97):  # some rows lack a user (sessions.flow drops them)
        out[i] = ("",) + out[i][1:]
    # Offline phones: clicks that happened early but are uploaded much later.
    for user, offset, n, position in OFFLINE:
        t = START + dt.timedelta(seconds=offset)
        batch = []
        for _ in range(n):
            batch.append((user, rng.choice(ARTICLES), "appclick", iso(t)))
            t += dt.timedelta(milliseconds=rng.randint(500, 3000))
        out[position:position] = batch
    here = directory or os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "sessions.csv"), "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["user_id", "article_id", "action", "ts"])
        w.writerows(out)


def cli(argv: list[str] | None = None) -> None:
    # argparse: `--help` (or a typo) must not rewrite the data files
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", metavar="DIR", help="write sessions.csv into DIR "
                        "(default: next to this script)")
    main(parser.parse_args(argv).out)


if __name__ == "__main__":
    cli()
