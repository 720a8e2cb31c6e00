"""sqlglot expressions -> .flow expression AST (:mod:`flowc.parser.ast`), with spans.

Only the *shape* is translated here; names, types and functions are checked by the .flow
expression compiler afterwards, so SQL gets exactly the .flow diagnostics ("unknown field
'x'", did-you-mean, type errors). SQL function names are mapped to .flow's library names.
Where a node stands in the text (``SpanMap``, re-exported here) is ``spans.py``.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Callable, Collection

from sqlglot import exp

from flowc import decimals
from flowc.dates import literal_date, text_date
from flowc.errors import (
    FlowNameError,
    FlowSyntaxError,
    FlowTypeError,
    Span,
    UnsupportedError,
    did_you_mean,
)
from flowc.parser import ast as A
from flowc.parser.build import (
    MAX_DURATION_DAYS,
    MAX_DURATION_MS,
    finite_float,
    parse_timestamp,
)
from flowc.parser.functions import AGGREGATES, PUBLIC_FUNCTIONS
from flowc.sql.spans import SpanMap
from flowc.types import (
    BOOL,
    DATE,
    DOUBLE,
    INT,
    NULL,
    STRING,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    Type,
    array_of,
    decimal_of,
    map_of,
)

# SQL spelling -> .flow library name (sqlglot class keys and Flink function names alike)
FUNCTION_NAMES = {
    "char_length": "length", "character_length": "length", "substring": "substr",
    "pow": "power", "ceiling": "ceil", "ifnull": "coalesce", "nvl": "coalesce",
    "cardinality": "size", "first_value": "first", "last_value": "last", "dayofmonth": "day",
    "startswith": "starts_with", "endswith": "ends_with", "array_contains": "array_contains",
    "timestamptrunc": "date_trunc", "datetrunc": "date_trunc", "strtotime": "to_timestamp",
    "unixtotime": "to_timestamp", "split": "split", "arraysize": "size", "concat": "concat",
    "day": "day", "year": "year", "month": "month", "hour": "hour", "minute": "minute",
    "second": "second", "timetostr": None, "strposition": "position", "nullif": "nullif",
    "firstvalue": "first", "lastvalue": "last", "arraycontains": "array_contains",
    "locate": "position", "regexpextract": "regexp_extract", "regexpreplace": "regexp_replace",
    "concatws": "concat_ws", "strtomap": "str_to_map",
}
UNSUPPORTED_FUNCTIONS = {
    "currenttimestamp": "CURRENT_TIMESTAMP (processing time) is not supported: flowc "
                        "results depend only on the data",
    "currentdate": "CURRENT_DATE is not supported: flowc results depend only on the data",
    "now": "NOW() is not supported: flowc results depend only on the data",
    "localtimestamp": "LOCALTIMESTAMP is not supported: flowc results depend only on the data",
}
# SQL names of library functions, offered by did-you-mean (FUNCTION_NAMES also holds
# sqlglot's internal names, which users never write)
SQL_SPELLINGS = ("char_length", "character_length", "substring", "pow", "ceiling", "ifnull",
                 "nvl", "cardinality", "first_value", "last_value", "dayofmonth", "locate",
                 "position", "mod")
# handled by the translator before the library is consulted
SPECIAL_FUNCTIONS = frozenset({"timestampdiff", "timestampadd", "descriptor", "proctime"} | {
    f"{w}{p}" for w in ("tumble", "hop", "session", "cumulate")
    for p in ("", "_start", "_end", "_rowtime", "_proctime")})
SQL_AGGREGATES = ("count", "sum", "avg", "min", "max", "first_value", "last_value")
INTERVAL_UNITS = {"millisecond": 1, "second": 1000, "minute": 60_000, "hour": 3_600_000,
                  "day": 86_400_000}
_COMPARE = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=",
            exp.NullSafeEQ: "="}
_ARITH = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*",
          exp.DPipe: "||", exp.And: "and", exp.Or: "or"}
_BINARY = {*_COMPARE, *_ARITH, exp.Div, exp.Mod}
_TYPES = {
    "TEXT": STRING, "VARCHAR": STRING, "CHAR": STRING, "NCHAR": STRING, "NVARCHAR": STRING,
    "STRING": STRING, "BIGINT": INT, "INT": INT, "SMALLINT": INT, "TINYINT": INT,
    "DOUBLE": DOUBLE, "FLOAT": DOUBLE, "BOOLEAN": BOOL,
    "TIMESTAMP": TIMESTAMP, "TIMESTAMPLTZ": TIMESTAMP_LTZ, "TIMESTAMPTZ": TIMESTAMP_LTZ,
    "DATE": DATE,
    "DATETIME": TIMESTAMP, "TIMESTAMP_S": TIMESTAMP, "TIMESTAMP_MS": TIMESTAMP,
}


def sql_type(node: exp.DataType, span: Span) -> Type:
    name = node.this.name if hasattr(node.this, "name") else str(node.this)
    if name == "ARRAY":
        inner = node.expressions[0] if node.expressions else None
        if not isinstance(inner, exp.DataType):
            raise FlowSyntaxError("ARRAY needs an element type, as in ARRAY<STRING>", span)
        return array_of(sql_type(inner, span))
    if name == "DECIMAL":
        return decimal_type(node, span)
    if name == "MAP":
        kv = [x for x in node.expressions if isinstance(x, exp.DataType)]
        if len(kv) != 2:
            raise FlowSyntaxError("MAP needs a key and a value type, as in MAP<STRING, INT>",
                                  span)
        return map_of(sql_type(kv[0], span), sql_type(kv[1], span))
    t = _TYPES.get(name)
    if t is None:
        raise UnsupportedError(f"the SQL type {node.sql()} is not supported", span,
                               hint="flowc types are STRING, BIGINT/INT, DOUBLE, "
                                    "DECIMAL(p, s), BOOLEAN, TIMESTAMP(3), TIMESTAMP_LTZ(3), "
                                    "DATE, ARRAY<T> and MAP<K, V>")
    return t


def decimal_type(node: exp.DataType, span: Span) -> Type:
    """DECIMAL(p, s); DECIMAL(p) is DECIMAL(p, 0) and DECIMAL DECIMAL(10, 0), as Flink."""
    params = [x.sql() for x in node.expressions]
    if len(params) > 2 or not all(p.isdigit() for p in params):
        raise FlowSyntaxError(f"{node.sql()} is not a DECIMAL type", span,
                              hint="write DECIMAL(precision, scale), as DECIMAL(10, 2)")
    p, s = (int(params[0]) if params else 10), (int(params[1]) if len(params) > 1 else 0)
    why = decimals.check(p, s)
    if why is not None:
        raise FlowTypeError(why, span)
    return decimal_of(p, s)


def interval_millis(node: exp.Interval, span: Span) -> int:
    unit_node = node.args.get("unit")
    unit = (unit_node.name if unit_node is not None else "").lower().rstrip("s") or "second"
    if unit not in INTERVAL_UNITS:
        raise UnsupportedError(f"INTERVAL unit {unit.upper()} is not supported", span,
                               hint="use MILLISECOND, SECOND, MINUTE, HOUR or DAY")
    value = node.this
    text = value.name.strip() if isinstance(value, exp.Literal) else ""
    # Decimal, not float: exact for long literals; 'Infinity'/'NaN' are refused, as Flink
    # refuses them ("Illegal interval literal format").
    if not _INTERVAL_NUMBER.match(text):
        raise UnsupportedError("only INTERVAL '<number>' <unit> is supported", span,
                               hint="for example INTERVAL '5' SECOND")
    millis = decimal.Decimal(text) * INTERVAL_UNITS[unit]
    if abs(millis) > MAX_DURATION_MS:
        raise FlowTypeError(f"this interval is too long: at most {MAX_DURATION_DAYS} DAY "
                            "(10000 years)", span)
    if millis != millis.to_integral_value():
        raise FlowTypeError("this interval is not a whole number of milliseconds", span)
    return int(millis)


_INTERVAL_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$")


class ExprTranslator:
    """One statement's expression translator. ``column`` lets the caller rewrite column
    references (join sides, window columns); by default ``t.x`` is ``FieldRef(x, t)``."""

    def __init__(self, spans: SpanMap,
                 column: Callable[[exp.Column, Span], A.Expr] | None = None) -> None:
        self.spans = spans
        self.column = column or (lambda c, s: A.FieldRef(c.name, c.table or None, s))
        # id(sqlglot node) -> the expression to use instead (aggregates after GROUP BY)
        self.overrides: dict[int, A.Expr] = {}
        self.udfs: Collection[str] = ()  # Python functions imported into the session

    def __call__(self, node: exp.Expression) -> A.Expr:
        return self.expr(node)

    def expr(self, node: exp.Expression) -> A.Expr:
        override = self.overrides.get(id(node))
        if override is not None:
            return override
        span = self.spans(node)
        t = type(node)
        if isinstance(node, exp.Paren):
            return self.expr(node.this)
        if isinstance(node, exp.Column):
            if isinstance(node.this, exp.Star):
                raise FlowSyntaxError("'*' is only allowed as a whole select item", span)
            return self.column(node, span)
        if isinstance(node, exp.Literal):
            return _literal(node, span)
        if isinstance(node, exp.Boolean):
            return A.Literal(bool(node.this), BOOL, span)
        if isinstance(node, exp.Null):
            return A.Literal(None, NULL, span)
        if isinstance(node, exp.Interval):
            return A.DurationLit(interval_millis(node, span), span)
        if t in _BINARY:
            return self._binary_chain(node)
        if isinstance(node, exp.Neg):
            return A.Unary("neg", self.expr(node.this), span)
        if isinstance(node, exp.Not):
            inner = node.this
            if isinstance(inner, exp.Paren):
                inner = inner.this
            if isinstance(inner, exp.Is):
                return A.IsNull(self.expr(inner.this), True, span)
            if isinstance(inner, exp.In):
                return self._in(inner, span, negated=True)
            if isinstance(inner, exp.Between):
                return self._between(inner, span, negated=True)
            return A.Unary("not", self.expr(node.this), span)
        if isinstance(node, exp.Is):
            if not isinstance(node.expression, exp.Null):
                raise UnsupportedError("only IS [NOT] NULL is supported", span,
                                       hint="compare with '=' instead")
            return A.IsNull(self.expr(node.this), False, span)
        if isinstance(node, exp.In):
            return self._in(node, span, negated=False)
        if isinstance(node, exp.Between):
            return self._between(node, span, negated=False)
        if isinstance(node, (exp.Like, exp.ILike)):
            if isinstance(node, exp.ILike):
                raise UnsupportedError("ILIKE is not supported", span,
                                       hint="compare lower(x) LIKE 'pattern'")
            return A.Like(self.expr(node.this), self.expr(node.expression),
                          bool(node.args.get("negate")), span)
        if isinstance(node, exp.Case):
            return self._case(node, span)
        if isinstance(node, (exp.Cast, exp.TryCast)):
            return self._cast(node, span)
        if isinstance(node, exp.Array):
            return A.ArrayLit(tuple(self.expr(e) for e in node.expressions), span)
        if isinstance(node, exp.Bracket):
            head = node.this  # Flink's MAP[k, v, ...] (an unquoted MAP is the keyword)
            if isinstance(head, exp.Column) and not head.table and head.name.upper() == "MAP" \
                    and not head.this.args.get("quoted"):
                raise UnsupportedError("the MAP[...] value constructor is not supported", span,
                                       hint="STR_TO_MAP('k1=v1,k2=v2') builds a MAP<STRING, "
                                            "STRING>")
            args = (self.expr(node.this), *(self.expr(e) for e in node.expressions))
            return A.Call("element_at", args, span, span)
        if isinstance(node, exp.Extract):
            unit = node.this.name.lower()
            return A.Call(unit, (self.expr(node.expression),), span, self.spans(node.this))
        if isinstance(node, exp.Filter):
            return self._filtered(node, span)
        if isinstance(node, (exp.Floor, exp.Ceil)) and node.args.get("to") is not None:
            return self._floor_ceil(node, span)
        if isinstance(node, exp.Window):
            raise UnsupportedError("OVER windows are not supported", span,
                                   hint="aggregate per key with GROUP BY, or per window with "
                                        "a TUMBLE/HOP/SESSION table function")
        if isinstance(node, exp.Exists):
            raise UnsupportedError("EXISTS subqueries are not supported", span,
                                   hint="join the tables (an interval or window join) instead")
        if isinstance(node, (exp.Subquery, exp.Select)):
            raise UnsupportedError("scalar subqueries (a SELECT inside an expression) are not "
                                   "supported", span)
        if isinstance(node, exp.Func):
            return self._call(node, span)
        if isinstance(node, exp.Star):
            raise FlowSyntaxError("'*' is only allowed as a whole select item or in COUNT(*)",
                                  span)
        raise UnsupportedError(f"this SQL expression ({node.key}) is not supported", span)

    # ------------------------------------------------------------------ pieces

    def _binary_chain(self, node: exp.Expression) -> A.Expr:
        """``a + b - c ...``: sqlglot nests a chain to the left, one level per operator, so
        walk its left spine in a loop (a chain of 100,000 terms is not deep nesting)."""
        spine: list[exp.Expression] = []
        while type(node) in _BINARY and id(node) not in self.overrides:
            spine.append(node)
            node = node.this
        acc = self.expr(node)
        for op_node in reversed(spine):
            acc = self._binary(op_node, acc, self.expr(op_node.expression))
        return acc

    def _binary(self, node: exp.Expression, left: A.Expr, right: A.Expr) -> A.Expr:
        span = self.spans(node)
        if isinstance(node, (exp.Div, exp.Mod)):
            # Flink: INT / INT is integer division and a zero divisor fails the job (.flow's
            # '/' is always double, and x / 0 is null there), so SQL has its own operators
            fn = "_sql_div" if isinstance(node, exp.Div) else "_sql_mod"
            return A.Call(fn, (left, right), span, span, internal=True)
        op = _COMPARE.get(type(node)) or _ARITH[type(node)]
        return A.Binary(op, left, right, span)

    def _filtered(self, node: exp.Filter, span: Span) -> A.Expr:
        """``agg(x) FILTER (WHERE c)`` is ``agg(CASE WHEN c THEN x END)``: every aggregate
        ignores nulls (``COUNT(*)`` counts ``CASE WHEN c THEN 1 END``)."""
        call = self.expr(node.this)
        where = node.expression
        if not isinstance(call, A.Call) or not isinstance(where, exp.Where):
            raise UnsupportedError("FILTER (WHERE ...) applies to an aggregate call", span)
        cond = self.expr(where.this)

        def only_if(e: A.Expr) -> A.Expr:
            return A.Case(None, (A.When(cond, e, span),), None, span)

        args = (only_if(A.Literal(1, INT, span)),) if call.star else tuple(
            only_if(a) for a in call.args)
        return A.Call(call.name, args, span, call.name_span, star=False,
                      distinct=call.distinct)

    def _floor_ceil(self, node: exp.Floor | exp.Ceil, span: Span) -> A.Expr:
        """``FLOOR(ts TO unit)`` / ``CEIL(ts TO unit)``."""
        unit_node = node.args["to"]
        unit = unit_node.name.lower()
        what = "FLOOR" if isinstance(node, exp.Floor) else "CEIL"
        ts = self.expr(node.this)
        unit_span = self.spans.keyword(node, unit_node.name)
        trunc_units = ("year", "month", "day", "hour", "minute", "second")
        if unit not in trunc_units or (what == "CEIL" and unit not in INTERVAL_UNITS):
            ok = trunc_units if what == "FLOOR" else ("day", "hour", "minute", "second")
            raise UnsupportedError(f"{what}(... TO {unit.upper()}) is not supported", unit_span,
                                   hint=f"units: {', '.join(u.upper() for u in ok)}")
        trunc = A.Call("date_trunc", (A.Literal(unit, STRING, unit_span), ts), span, span)
        if what == "FLOOR":
            return trunc
        step = A.Call("if", (A.Binary("=", trunc, ts, span), A.DurationLit(0, span),
                             A.DurationLit(INTERVAL_UNITS[unit], span)), span, span)
        return A.Binary("+", trunc, step, span)

    def _timestamp_unit(self, node: exp.Expression, fn: str) -> int:
        unit = node.name.lower().rstrip("s") if isinstance(node, (exp.Column, exp.Var)) else ""
        millis = {**INTERVAL_UNITS, "week": 7 * INTERVAL_UNITS["day"]}.get(unit)
        if millis is None:
            raise UnsupportedError(f"{fn} by {node.sql().upper()} is not supported",
                                   self.spans(node),
                                   hint="units: SECOND, MINUTE, HOUR, DAY, WEEK (months and "
                                        "years have no fixed length)")
        return millis

    def _timestampdiff(self, args: list[exp.Expression], span: Span) -> A.Expr:
        """``TIMESTAMPDIFF(unit, a, b)``: whole units from a to b, truncated toward zero."""
        if len(args) != 3:
            raise FlowSyntaxError("write TIMESTAMPDIFF(unit, start, end)", span)
        unit = A.Literal(self._timestamp_unit(args[0], "TIMESTAMPDIFF"), INT, span)
        a, b = (A.Call("epoch_millis", (self.expr(x),), span, span) for x in args[1:])
        diff = A.Binary("-", b, a, span)
        whole = A.Binary("-", diff, A.Binary("%", diff, unit, span), span)
        return A.Cast(A.Binary("/", whole, unit, span), INT, span)

    def _timestampadd(self, args: list[exp.Expression], span: Span) -> A.Expr:
        """``TIMESTAMPADD(unit, n, ts)``: ts plus n units."""
        if len(args) != 3:
            raise FlowSyntaxError("write TIMESTAMPADD(unit, count, timestamp)", span)
        unit = A.DurationLit(self._timestamp_unit(args[0], "TIMESTAMPADD"), span)
        return A.Binary("+", self.expr(args[2]),
                        A.Binary("*", self.expr(args[1]), unit, span), span)

    def _in(self, node: exp.In, span: Span, negated: bool) -> A.Expr:
        if node.args.get("query") is not None:
            raise UnsupportedError("IN (SELECT ...) is not supported", span)
        return A.InList(self.expr(node.this), tuple(self.expr(e) for e in node.expressions),
                        negated, span)

    def _between(self, node: exp.Between, span: Span, negated: bool) -> A.Expr:
        return A.Between(self.expr(node.this), self.expr(node.args["low"]),
                         self.expr(node.args["high"]), negated, span)

    def _case(self, node: exp.Case, span: Span) -> A.Expr:
        whens = []
        for w in node.args.get("ifs") or []:
            whens.append(A.When(self.expr(w.this), self.expr(w.args["true"]), self.spans(w)))
        default = node.args.get("default")
        operand = node.this
        return A.Case(self.expr(operand) if operand is not None else None, tuple(whens),
                      self.expr(default) if default is not None else None, span)

    def _cast(self, node: exp.Cast, span: Span) -> A.Expr:
        target = sql_type(node.to, span)
        inner = node.this
        if target == TIMESTAMP and isinstance(inner, exp.Literal) and inner.is_string:
            # TIMESTAMP '2024-05-01 10:00:00' / DATE '2024-05-01' arrive as casts; .flow has
            # them as literals
            return self._time_literal(node, inner, target, span)
        return A.Cast(self.expr(inner), target, span)

    def _time_literal(self, node: exp.Cast, inner: exp.Literal, target: Type,
                      span: Span) -> A.Expr:
        """A TIMESTAMP / DATE literal, or a CAST / TRY_CAST of a string literal: sqlglot
        gives them one tree, the text before the string tells them apart. A DATE literal
        is ``yyyy-MM-dd`` (Flink's parser); a cast to DATE reads the text as Flink's CAST
        does (flowc.dates.text_date); a TRY_CAST of text that is no value is NULL."""
        date = target.flavor == "date"
        r = self.spans.range(inner)
        before = self.spans.chunk.text[:r[0]] if r is not None else ""
        if date and re.search(r"\bDATE\s*'?$", before, re.I):
            millis = literal_date(inner.name)
            if millis is None:
                raise FlowTypeError(f"Illegal DATE literal '{inner.name}': not in format "
                                    "'yyyy-MM-dd'", span, hint="write DATE '2024-05-01'")
            return A.Literal(millis, target, span)
        millis = text_date(inner.name) if date else parse_timestamp(inner.name)
        if millis is None and isinstance(node, exp.TryCast):
            return A.Literal(None, target, span)
        if millis is None:  # Flink fails the job on this row; the literal fails at once
            what = "date" if date else "timestamp"
            raise FlowTypeError(f"'{inner.name}' is not a {what}", span,
                                hint=f"write DATE '2024-05-01', or TRY_CAST(... AS {target}) "
                                "for NULL" if date else "write TIMESTAMP '2024-05-01 10:00:00'")
        return A.Literal(millis, target, span)

    def _call(self, node: exp.Func, span: Span) -> A.Expr:
        if isinstance(node, exp.Anonymous):
            raw = str(node.this).lower()
            args_nodes: list[exp.Expression] = list(node.expressions)
        else:
            raw = node.key.lower()
            args_nodes = _args_of(node)
        if raw in UNSUPPORTED_FUNCTIONS:
            raise UnsupportedError(UNSUPPORTED_FUNCTIONS[raw], span)
        if raw == "proctime":  # Flink's PROCTIME_MATERIALIZE(PROCTIME()) in a Calc
            if args_nodes:
                raise FlowSyntaxError("Invalid number of arguments to function 'PROCTIME'. "
                                      "Was expecting 0 arguments", span)
            return A.Call("_proctime", (), span, span, internal=True)
        if raw == "timestampdiff":
            return self._timestampdiff(args_nodes, span)
        if raw == "timestampadd":
            return self._timestampadd(args_nodes, span)
        if raw.endswith(("_rowtime", "_proctime")) and raw.split("_")[0] in (
                "tumble", "hop", "session"):  # Flink's code generation refuses it
            fn = raw.split("_")[0].upper()
            raise FlowSyntaxError(f"Unsupported call: {raw.upper()}", span,
                                  hint=f"an auxiliary group function needs GROUP BY "
                                       f"{fn}(...) with the same arguments")
        if raw in ("tumble", "hop", "session", "cumulate", "tumble_start", "tumble_end",
                   "hop_start", "hop_end", "session_start", "session_end"):
            raise FlowSyntaxError(f"{raw.upper()} is only allowed in GROUP BY (or as a window "
                                  "table function in FROM) with its _START/_END in SELECT",
                                  span)
        if isinstance(node, exp.Trim):
            pos = str(node.args.get("position") or "").upper()
            raw = {"LEADING": "ltrim", "TRAILING": "rtrim"}.get(pos, "trim")
            if node.args.get("expression") is not None:
                raise UnsupportedError("TRIM of characters other than spaces is not "
                                       "supported", span)
            args_nodes = [node.this]
        if isinstance(node, exp.StrPosition):
            # POSITION(a IN b), LOCATE(a, b[, from]), INSTR(b, a): where a is in b
            args_nodes = [node.args["substr"], node.this] + (
                [node.args["position"]] if node.args.get("position") is not None else [])
        name = FUNCTION_NAMES.get(raw, raw) or raw
        star = False
        distinct = False
        if isinstance(node, exp.Count):
            name = "count"
            inner = node.this
            if isinstance(inner, exp.Star) or inner is None:
                star = True
                args_nodes = []
            elif isinstance(inner, exp.Distinct):
                distinct = True
                args_nodes = list(inner.expressions)
            else:
                args_nodes = [inner]
        elif args_nodes and isinstance(args_nodes[0], exp.Distinct):
            raise UnsupportedError(f"{name.upper()}(DISTINCT ...) is not supported", span,
                                   hint="only COUNT(DISTINCT x) is")
        written = self.spans.call_name(node)
        name_span = written[1] if written is not None else span
        self.check_function(node, name, written)
        args = tuple(self.expr(a) for a in args_nodes)
        return A.Call(name, args, span, name_span, star=star, distinct=distinct)

    def check_function(self, node: exp.Func, name: str | None = None,
                       written: tuple[str, Span] | None = None) -> None:
        """An unknown function is reported here, as the user spelt it (not sqlglot's
        internal name), before its arguments are looked at."""
        if name is None:
            raw = str(node.this).lower() if isinstance(node, exp.Anonymous) else \
                node.key.lower()
            name = FUNCTION_NAMES.get(raw, raw) or raw
        if name in PUBLIC_FUNCTIONS and not PUBLIC_FUNCTIONS[name].datagen_only or \
                name in AGGREGATES or \
                name in self.udfs or name in SPECIAL_FUNCTIONS or name in UNSUPPORTED_FUNCTIONS:
            return
        if written is None:
            written = self.spans.call_name(node)
        spelt, at = written if written is not None else (name, self.spans(node))
        pool = sorted({n for n, f in PUBLIC_FUNCTIONS.items() if not f.datagen_only} |
                      set(SQL_AGGREGATES) | set(SQL_SPELLINGS) | {"timestampdiff",
                                                                  "timestampadd"})
        hint = did_you_mean(spelt.lower(), pool)
        if hint is not None and spelt.isupper():
            hint = hint.upper().replace("DID YOU MEAN", "did you mean")
        udfs = did_you_mean(spelt, self.udfs) if self.udfs else None
        # `import udf` is a .flow statement: the REPL takes it, a .sql file does not
        repl = self.spans.chunk.filename.startswith("<repl")
        raise FlowNameError(f"unknown function '{spelt}'", at, hint=udfs or hint or
                            "docs/sql.md lists the functions" + (
                                "; Python functions are imported with 'import udf'" if repl
                                else ""))


def _args_of(node: exp.Func) -> list[exp.Expression]:
    """A typed sqlglot function's arguments in declaration order (``this``, ``expression``,
    ``expressions``, ...), skipping flags sqlglot adds (``big_int``, ``safe``, ...)."""
    out: list[exp.Expression] = []
    for key in node.arg_types:
        value = node.args.get(key)
        if value is None or isinstance(value, (bool, str)):
            continue
        if isinstance(value, list):
            out.extend(v for v in value if isinstance(v, exp.Expression))
        elif isinstance(value, exp.Expression) and not isinstance(value, (exp.DataType,)):
            out.append(value)
    return out


def _literal(node: exp.Literal, span: Span) -> A.Expr:
    if node.is_string:
        return A.Literal(node.this, STRING, span)
    text = node.this
    try:
        if any(c in text for c in ".eE"):
            return A.Literal(finite_float(text, span), DOUBLE, span)
        value = int(text)
    except ValueError:
        raise FlowSyntaxError(f"'{text}' is not a number", span) from None
    if value >= 2**63:
        raise FlowTypeError(f"{text} does not fit in a 64-bit int", span)
    return A.Literal(value, INT, span)
