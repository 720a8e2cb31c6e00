"""Writes examples/data/clicks.csv and impressions.csv: small, deterministic test data.

Timestamps are ISO-8601 UTC strings with milliseconds (``2024-05-01T10:00:00.250Z``); the
.flow csv reader turns them into epoch milliseconds. Run: python examples/data/make_clicks.py
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import os
import random

START = dt.datetime(2024, 5, 1, 10, 0, 0, tzinfo=dt.timezone.utc)
USERS = [f"user_{i}" for i in range(12)]
ARTICLES = [f"article_{i}" for i in range(20)]
ACTIONS = ["appclick", "AppClick", "scroll", "share", "APPCLICK"]


def iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def main(directory: str | None = None) -> None:
    rng = random.Random(20240501)  # fixed seed: the same files on every run
    here = directory or os.path.dirname(os.path.abspath(__file__))
    clicks = []
    t = START
    for i in range(300):
        t += dt.timedelta(milliseconds=rng.randint(50, 900))
        # A few records arrive out of order (up to 3 s late) to exercise watermarks.
        ts = t - dt.timedelta(milliseconds=rng.randint(0, 3000)) if i % 17 == 0 else t
        user = "" if i % 41 == 0 else rng.choice(USERS)  # some rows lack a user
        clicks.append((user, rng.choice(ARTICLES), rng.choice(ACTIONS), iso(ts)))
    with open(os.path.join(here, "clicks.csv"), "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["user_id", "article_id", "action", "ts"])
        w.writerows(clicks)
    impressions = []
    t = START
    for _ in range(200):
        t += dt.timedelta(milliseconds=rng.randint(100, 1200))
        impressions.append((rng.choice(USERS), rng.choice(ARTICLES), rng.randint(1, 5), iso(t)))
    with open(os.path.join(here, "impressions.csv"), "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["user_id", "article_id", "position", "ts"])
        w.writerows(impressions)


def cli(argv: list[str] | None = None) -> None:
    # argparse: `--help` (or a typo) must not rewrite the data files
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", metavar="DIR", help="write clicks.csv and impressions.csv "
                        "into DIR (default: next to this script)")
    main(parser.parse_args(argv).out)


if __name__ == "__main__":
    cli()
