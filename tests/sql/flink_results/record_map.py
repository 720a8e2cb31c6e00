"""Records tests/sql/flink_results/map.json from a real Flink (not run by the tests):

    /work/flink-sql-venv/bin/python tests/sql/flink_results/record_map.py

STR_TO_MAP, map access and CARDINALITY over MAP_TEXTS (BATCH mode, parallelism 1). A
collected map is recorded as Flink prints it, ``{k=v, ...}`` in the order the Java map
iterates (PyFlink's dict keeps it); other values as str()."""

import json
import tempfile
from pathlib import Path

from pyflink.table import EnvironmentSettings, TableEnvironment

here = Path(__file__).resolve().parent
MAP_TEXTS = ["a=1,b=2", "b=x,a=y,zz", "", "k=v=w,k=last", "x;y:1;z:2",
             ",".join(f"key{i}={i}" for i in range(20)), "Aa=1,BB=2,c=3", "one"]
# A map with a null value fails PyFlink's collect (EOFError in its pickle converter): maps
# are recorded as Flink's CAST(... AS STRING) writes them, and as collected where no value
# is null.
QUERIES = [
    "SELECT id, CAST(STR_TO_MAP(s) AS STRING) FROM texts",
    "SELECT id, STR_TO_MAP(s) FROM texts WHERE id IN (0, 3, 5, 6)",
    "SELECT id, CAST(STR_TO_MAP(s, ';', ':') AS STRING) FROM texts",
    "SELECT id, STR_TO_MAP(s)['a'], STR_TO_MAP(s)['key7'], CARDINALITY(STR_TO_MAP(s)) "
    "FROM texts",
    "SELECT id, CAST(STR_TO_MAP(s, '[,;]', '[=:]') AS STRING) FROM texts",
]


def text(v):
    if v is None:
        return None
    if isinstance(v, dict):  # Java's AbstractMap.toString
        return "{" + ", ".join(f"{text(k)}={'null' if x is None else text(x)}"
                               for k, x in v.items()) + "}"
    return str(v)


csv = Path(tempfile.mkdtemp()) / "texts.csv"
csv.write_text("".join(f'{i},"{s}"\n' for i, s in enumerate(MAP_TEXTS)) + f"{len(MAP_TEXTS)},<null>\n",
               encoding="utf-8")
t = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
t.get_config().set("parallelism.default", "1")
t.execute_sql(f"""CREATE TABLE texts (id BIGINT, s STRING) WITH ('connector' = 'filesystem',
  'path' = '{csv}', 'format' = 'csv', 'csv.null-literal' = '<null>')""")
out = []
for q in QUERIES:
    rows = sorted([[text(v) for v in r] for r in t.execute_sql(q).collect()],
                  key=lambda r: int(r[0]))
    out.append({"query": q, "rows": rows})
    print(json.dumps(out[-1]), flush=True)
json.dump({"flink": "2.3.0 (PyFlink TableEnvironment, batch mode, parallelism 1); rows by id",
           "texts": MAP_TEXTS, "cases": out}, open(here / "map.json", "w"), indent=1)
