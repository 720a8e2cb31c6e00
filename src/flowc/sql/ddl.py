"""``CREATE TABLE ... WITH (...)`` -> a table definition and, for readable connectors, the
.flow ``source`` statement that reads it.

Connectors: ``filesystem`` (read and write; ``format`` csv/json/parquet), ``datagen`` (read;
unbounded without ``number-of-rows``), ``socket`` (read, unbounded), ``kafka`` (read, unbounded; and
write), ``print`` and ``blackhole`` (write). ``WATERMARK FOR ts AS ts - INTERVAL '2' SECOND`` becomes
``watermark ts - 2s`` with Flink SQL's exact generator (no -1 ms; ``A.Watermark.exact``): the
column is the table's event-time attribute.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from sqlglot import exp

from flowc.errors import FlowNameError, FlowSyntaxError, FlowTypeError, Span, UnsupportedError
from flowc.errors import did_you_mean as _dym
from flowc.parser import ast as A
from flowc.sql import partitions
from flowc.sql.computed import Computed, call_type, computed_expr, declared_type, projection
from flowc.sql.exprs import ExprTranslator, SpanMap, sql_type
from flowc.sql.proctime import is_proctime
from flowc.sql.source import Rewrites, SqlChunk, parse_statement
from flowc.types import INT, Field, Schema

CONNECTORS = ("filesystem", "datagen", "socket", "kafka", "print", "blackhole")
READABLE = ("filesystem", "datagen", "socket", "kafka")
FORMATS = ("csv", "json", "parquet")
# Flink option -> .flow csv option
_CSV_OPTIONS = {"csv.field-delimiter": "delimiter", "csv.quote-character": "quote",
                "csv.null-literal": "null_value", "csv.header": "header"}
_COMMON = {"connector", "path", "format", "scan.parallelism", "sink.parallelism",
           "dead-letter", "number-of-rows", "rows-per-second", "print-identifier",
           "source.monitor-interval", "scan.watermark.idle-timeout"}
# Per connector: its own options (Flink's names).
_CONNECTOR_OPTIONS = {
    "socket": {"hostname", "port", "byte-delimiter"},
    "kafka": {"topic", "topic-pattern", "value.format", "scan.startup.mode",
              "scan.startup.timestamp-millis", "scan.startup.specific-offsets",
              "key.format", "key.fields", "value.fields-include", "sink.delivery-guarantee",
              "sink.transactional-id-prefix", "sink.partitioner"},
}
KAFKA_GUARANTEES = ("at-least-once", "none", "exactly-once")
KAFKA_STARTUP = ("earliest-offset", "latest-offset", "group-offsets", "timestamp",
                 "specific-offsets")


@dataclass
class TableDef:
    """A SQL table: where it lives and, when it can be read, the source statement."""

    name: str
    schema: Schema
    connector: str
    options: dict[str, str]
    span: Span
    name_span: Span
    rowtime: str | None = None
    # ``pt AS PROCTIME()``: the column's name and its position among the columns (the
    # source reads the others; a query adds it, as Flink's Calc does)
    proctime: tuple[str, int] | None = None
    source: A.SourceStmt | None = None
    option_spans: dict[str, Span] = field(default_factory=dict)
    partition_by: tuple[str, ...] = ()  # PARTITIONED BY (filesystem sinks)

    @property
    def readable(self) -> bool:
        return self.source is not None


def create_table(node: exp.Create, rw: Rewrites, chunk: SqlChunk, spans: SpanMap) -> TableDef:
    schema_node = node.this
    if not isinstance(schema_node, exp.Schema):
        raise FlowSyntaxError("CREATE TABLE needs a column list: CREATE TABLE t (col TYPE, "
                              "...) WITH (...)", spans(node))
    table = schema_node.this
    name = table.name
    name_span = spans(table)
    if node.args.get("expression") is not None:
        raise UnsupportedError("CREATE TABLE ... AS SELECT is not supported", spans(node),
                               hint="create the table, then INSERT INTO it")
    fields: list[A.FieldDecl] = []
    declared: dict[str, exp.DataType] = {}  # each column's SQL type, as written
    proctime: tuple[str, int] | None = None
    columns: list[str | Computed] = []  # every column but PROCTIME(), in declared order
    for col in schema_node.expressions:
        if isinstance(col, exp.PrimaryKey):
            continue  # metadata only in Flink (NOT ENFORCED); nothing to do for a stream
        if not isinstance(col, exp.ColumnDef):
            raise UnsupportedError(f"this column definition is not supported: {col.sql()}",
                                   spans(col))
        cspan = spans(col)
        kind = col.args.get("kind")
        if kind is None and is_proctime(col):
            if proctime is not None:
                raise FlowSyntaxError("a table has at most one PROCTIME() column", cspan)
            proctime = (col.name, len(columns))
            continue
        if kind is None:
            expr = computed_expr(col)
            if expr is None:
                raise UnsupportedError(f"column '{col.name}' needs a type", cspan,
                                       hint=f"for example: {col.name} STRING")
            columns.append(Computed(col.name, expr, cspan))
            continue
        for constraint in col.args.get("constraints") or []:
            if not isinstance(constraint.args.get("kind"), (exp.NotNullColumnConstraint,
                                                            exp.PrimaryKeyColumnConstraint)):
                raise UnsupportedError(f"column option '{constraint.sql()}' is not supported",
                                       spans(constraint, cspan))
        fields.append(A.FieldDecl(col.name, sql_type(kind, cspan), cspan))
        declared[col.name] = kind
        columns.append(col.name)
    options, option_spans, partitioned = _with_options(node, spans)
    span = chunk.span(0, len(chunk.text.rstrip()) - 1)
    connector = options.get("connector")
    if connector is None:
        raise FlowSyntaxError(f"table '{name}' needs a connector: WITH ('connector' = "
                              "'filesystem', 'path' = '...', 'format' = 'csv')", name_span)
    cspan = option_spans.get("connector", span)
    if connector not in CONNECTORS:
        raise UnsupportedError(f"connector '{connector}' is not supported", cspan,
                               hint=_dym(connector, CONNECTORS) or
                               "flowc supports the filesystem, datagen, socket, kafka, print and "
                               "blackhole connectors")
    for key in options:
        if key in partitions.OPTIONS and connector == "filesystem":
            continue
        own = _CONNECTOR_OPTIONS.get(connector, set())
        if key in own or (connector == "kafka" and key.startswith("properties.")):
            continue
        if key not in _COMMON and key not in _CSV_OPTIONS and not key.startswith("fields."):
            raise UnsupportedError(f"table option '{key}' is not supported",
                                   option_spans.get(key, span),
                                   hint=_dym(key, sorted(_COMMON | set(_CSV_OPTIONS) | own)))
    schema = Schema(tuple(Field(f.name, f.type) for f in fields))
    tdef = TableDef(name, schema, connector, options, span, name_span,
                    option_spans=option_spans, proctime=proctime)
    if partitioned is not None:
        if connector != "filesystem":
            raise UnsupportedError(f"PARTITIONED BY applies to filesystem tables, not "
                                   f"'{connector}'", spans(partitioned))
        tdef.partition_by = partitions.partition_columns(partitioned, schema.names, spans)
    if connector == "filesystem":  # checked now, as Flink checks them at CREATE TABLE
        partitions.sink_options(options, option_spans, bool(tdef.partition_by), span)
    computed = [c for c in columns if isinstance(c, Computed)]
    names = [c if isinstance(c, str) else c.name for c in columns]
    watermark = _watermark(rw, chunk, names, tdef, declared, computed)
    watermark = _idle_timeout(tdef, watermark)
    # a table only written to keeps its computed columns unused: INSERT writes the physical
    # ones (tdef.schema), as Flink's
    if connector in READABLE and not tdef.partition_by:
        tdef.source = _source(tdef, tuple(fields), watermark)
        if computed:  # Flink's Calc after the scan, before the WatermarkAssigner
            tdef.source = replace(tdef.source, projection=projection(
                columns, [f.name for f in fields], spans, ExprTranslator(spans), span))
    elif watermark is not None:
        raise FlowTypeError(f"a '{connector}' table is only written to; it has no watermark",
                            watermark.span)
    return tdef


def _with_options(node: exp.Create, spans: SpanMap
                  ) -> tuple[dict[str, str], dict[str, Span], exp.PartitionedByProperty | None]:
    options: dict[str, str] = {}
    where: dict[str, Span] = {}
    partitioned: exp.PartitionedByProperty | None = None
    props = node.args.get("properties")
    for prop in props.expressions if props is not None else []:
        if isinstance(prop, exp.TemporaryProperty):
            continue  # CREATE TEMPORARY TABLE: flowc has no catalog to persist tables in
        if isinstance(prop, exp.PartitionedByProperty):
            partitioned = prop
            continue
        if not isinstance(prop, exp.Property):
            raise UnsupportedError(f"table property '{prop.sql()}' is not supported",
                                   spans(prop))
        key_node = prop.this
        key = key_node.name if isinstance(key_node, (exp.Literal, exp.Identifier,
                                                      exp.Var)) else str(key_node)
        value = prop.args.get("value")
        if not isinstance(value, exp.Literal):
            raise FlowSyntaxError(f"the value of '{key}' must be a quoted string",
                                  spans(prop))
        if key in options:
            raise FlowNameError(f"option '{key}' is given twice", spans(prop))
        options[key] = value.name
        where[key] = spans(prop)
    return options, where, partitioned


def _watermark(rw: Rewrites, chunk: SqlChunk, names: list[str], tdef: TableDef,
               declared: dict[str, exp.DataType], computed: list[Computed]
               ) -> A.Watermark | None:
    """The table's WATERMARK as .flow's, ``exact``: Flink SQL's watermark is the expression's
    value (``ts - INTERVAL '2' SECOND``: max ts - 2000 ms), not the DataStream generator's
    max ts - 2000 - 1 ms (WatermarkStrategy.for_sql_watermark)."""
    if not rw.watermarks:
        return None
    wm = rw.watermarks[0]
    col_span = chunk.span(*wm.column_range)
    if len(rw.watermarks) > 1:
        raise FlowSyntaxError("a table has at most one WATERMARK", col_span)
    if wm.column not in names:
        raise FlowNameError(f"unknown column '{wm.column}' in WATERMARK", col_span,
                            hint=_dym(wm.column, names))
    # Parse the expression on its own, at its own offset, so its spans are right.
    lo, hi = wm.expr_range
    sub = SqlChunk("SELECT " + chunk.text[lo:hi + 1], chunk.offset + lo - 7, chunk.filename,
                   chunk.full)
    tree = parse_statement(sub)
    spans = SpanMap(tree, sub)
    wspan = chunk.span(wm.column_range[0], hi)
    # 'AS WHERE x' parses as SELECT WHERE x: no expression, or clauses after it
    extra = [k for k, v in tree.args.items() if v and k != "expressions"]
    if not isinstance(tree, exp.Select) or len(tree.expressions) != 1 or extra:
        raise FlowSyntaxError("expected an expression after WATERMARK FOR ... AS",
                              chunk.span(lo, hi),
                              hint=f"for example: WATERMARK FOR {wm.column} AS {wm.column} - "
                                   "INTERVAL '2' SECOND")
    expr_node = tree.expressions[0]
    own = next((c for c in computed if c.name == wm.column), None)
    if own is None:
        _time_field_type(wm.column, declared.get(wm.column), col_span)
    elif call_type(own) is None:  # else TIMESTAMP(3) / TIMESTAMP_LTZ(3); others: lowering
        _time_field_type(wm.column, declared_type(own), col_span,
                         f"compute it as a TIMESTAMP(3): {wm.column} AS CAST(... AS TIMESTAMP(3))")
    delay = _offset(expr_node, wm.column, ExprTranslator(spans))
    if delay is None:
        raise UnsupportedError("WATERMARK supports '<column>' or '<column> - INTERVAL ...' of "
                               "its own column", spans(expr_node),
                               hint=f"for example: WATERMARK FOR {wm.column} AS {wm.column} - "
                                    "INTERVAL '2' SECOND")
    tdef.rowtime = wm.column
    return A.Watermark(A.FieldRef(wm.column, None, col_span), delay, wspan, exact=True)


def _offset(node: exp.Expression, column: str, translate: ExprTranslator) -> int | None:
    """How far ``column`` [+|- INTERVAL ...]... (parenthesised or not) stays behind
    ``column`` in ms (negative: ahead); None for any other expression."""
    offset = 0
    while True:
        if isinstance(node, exp.Paren):
            node = node.this
        elif isinstance(node, (exp.Sub, exp.Add)) and isinstance(node.expression, exp.Interval):
            ms = translate(node.expression).millis  # type: ignore[union-attr]
            offset += ms if isinstance(node, exp.Sub) else -ms
            node = node.this
        else:
            break
    return offset if isinstance(node, exp.Column) and node.name == column else None


def _time_field_type(column: str, kind: exp.DataType | None, span: Span,
                     hint: str | None = None) -> None:
    """Flink's rule for a WATERMARK's column: TIMESTAMP(p) or TIMESTAMP_LTZ(p), p <= 3
    (``TIMESTAMP`` alone is TIMESTAMP(6))."""
    if kind is None:
        return
    params = [e.sql() for e in kind.expressions]
    name = {exp.DataType.Type.TEXT: "STRING",
            exp.DataType.Type.TIMESTAMPLTZ: "TIMESTAMP_LTZ"}.get(kind.this, kind.this.name)
    if kind.this in (exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPLTZ):
        precision = params[0] if params else "6"
        if precision.isdigit() and int(precision) <= 3:
            return
        text = f"{name}({precision})"
    else:
        text = f"{name}({', '.join(params)})" if params else name
    raise FlowTypeError("Invalid data type of time field for watermark definition. The field "
                        "must be of type TIMESTAMP(p) or TIMESTAMP_LTZ(p), the supported "
                        f"precision 'p' is from 0 to 3, but the time field type is {text}",
                        span, hint=hint or f"declare it: {column} TIMESTAMP(3)")


def _idle_timeout(t: TableDef, wm: A.Watermark | None) -> A.Watermark | None:
    """``'scan.watermark.idle-timeout'``: the table's watermark strategy gets Flink's
    idleness (honoured by the streaming executor; bounded runs end every source)."""
    ispan = t.option_spans.get("scan.watermark.idle-timeout")
    if ispan is None:
        return wm
    if wm is None:
        raise FlowTypeError("'scan.watermark.idle-timeout' needs a WATERMARK on the table",
                            ispan, hint="add: WATERMARK FOR <column> AS <column> - "
                                        "INTERVAL '2' SECOND")
    millis = flink_duration(t.options["scan.watermark.idle-timeout"], ispan)
    if millis <= 0:
        raise FlowTypeError("'scan.watermark.idle-timeout' must be positive", ispan,
                            hint="for example: 'scan.watermark.idle-timeout' = '5s'")
    return replace(wm, idle_timeout=millis)


def _source(t: TableDef, fields: tuple[A.FieldDecl, ...],
            watermark: A.Watermark | None) -> A.SourceStmt:
    opts = t.options
    hints: list[A.Setting] = []
    if "scan.parallelism" in opts:
        hints.append(int_setting("parallelism", opts["scan.parallelism"],
                                 t.option_spans["scan.parallelism"]))
    body: A.SourceBody
    if t.connector == "filesystem":
        body = file_body(t)
    elif t.connector == "socket":
        body = socket_body(t)
    elif t.connector == "kafka":
        body = kafka_body(t)
    else:
        body = datagen_body(t)
    dead = opts.get("dead-letter")
    return A.SourceStmt(t.name, fields, body, watermark, dead, tuple(hints), t.span,
                        t.name_span, t.option_spans.get("dead-letter"))


def file_body(t: TableDef) -> A.FileBody:
    opts = t.options
    path = opts.get("path")
    if path is None:
        raise FlowSyntaxError(f"filesystem table '{t.name}' needs a 'path'", t.name_span)
    fmt = opts.get("format")
    if fmt is None:
        raise FlowSyntaxError(f"filesystem table '{t.name}' needs a 'format' (csv, json or "
                              "parquet)", t.name_span)
    fspan = t.option_spans["format"]
    if fmt not in FORMATS:
        raise UnsupportedError(f"format '{fmt}' is not supported", fspan,
                               hint=_dym(fmt, FORMATS) or "use csv, json or parquet")
    settings = csv_settings(t, fmt)
    monitor = None
    mspan = t.option_spans.get("source.monitor-interval")
    if mspan is not None:
        monitor = flink_duration(opts["source.monitor-interval"], mspan)
        if monitor <= 0:
            raise FlowTypeError("'source.monitor-interval' must be positive", mspan,
                                hint="for example: 'source.monitor-interval' = '1s'")
    return A.FileBody(fmt, path, tuple(settings), t.span, fspan, monitor, mspan)


def csv_settings(t: TableDef, fmt: str | None) -> tuple[A.Setting, ...]:
    """The ``csv.*`` options as .flow csv settings."""
    settings: list[A.Setting] = []
    for key, flow_key in _CSV_OPTIONS.items():
        if key in t.options:
            s = t.option_spans[key]
            if fmt != "csv":
                raise FlowTypeError(f"'{key}' only applies to csv", s)
            value: object = t.options[key]
            if flow_key == "header":
                value = A.Word(t.options[key].lower())
            settings.append(A.Setting(flow_key, value, s, s, s))
    return tuple(settings)


def datagen_body(t: TableDef) -> A.DatagenBody:
    """Flink's rule: bounded with 'number-of-rows', else unbounded at 'rows-per-second'
    (default 10000)."""
    rows = t.options.get("number-of-rows")
    generators = tuple(_generators(t))
    if rows is not None:
        return A.DatagenBody(int_setting("rows", rows, t.option_spans["number-of-rows"])
                             .value, generators, t.span)  # type: ignore[arg-type]
    rate = t.options.get("rows-per-second", "10000")
    rspan = t.option_spans.get("rows-per-second", t.span)
    per_second = int_setting("rows-per-second", rate, rspan).value
    if per_second <= 0:  # type: ignore[operator]
        raise FlowTypeError("'rows-per-second' must be positive", rspan)
    return A.DatagenBody(None, generators, t.span, per_second)  # type: ignore[arg-type]


def _format(t: TableDef, key: str = "format") -> tuple[str | None, Span | None]:
    fmt = t.options.get(key)
    fspan = t.option_spans.get(key)
    if fmt is not None and fmt not in ("csv", "json"):
        raise UnsupportedError(f"format '{fmt}' is not supported for '{t.connector}'",
                               fspan, hint=_dym(fmt, ("csv", "json")) or "use csv or json")
    return fmt, fspan


def socket_body(t: TableDef) -> A.SocketBody:
    """Flink's socket table options: 'hostname', 'port', 'byte-delimiter' (only 10, a line
    break: Spark's socket source reads lines), 'format' csv / json."""
    for key in ("hostname", "port", "format"):
        if key not in t.options:
            raise FlowSyntaxError(f"socket table '{t.name}' needs '{key}'", t.name_span,
                                  hint="for example: 'hostname' = 'localhost', 'port' = "
                                       "'9999', 'format' = 'csv'")
    port = int_setting("port", t.options["port"], t.option_spans["port"]).value
    if not 0 <= port <= 65535:  # type: ignore[operator]
        raise FlowTypeError(f"port {port} is out of range", t.option_spans["port"])
    delimiter = t.options.get("byte-delimiter", "10")
    if delimiter != "10":
        raise UnsupportedError("only 'byte-delimiter' = '10' (a line break) is supported",
                               t.option_spans["byte-delimiter"])
    fmt, fspan = _format(t)
    return A.SocketBody(t.options["hostname"], port, fmt, csv_settings(t, fmt),  # type: ignore[arg-type]
                        t.span, fspan)


def kafka_body(t: TableDef) -> A.KafkaBody:
    """Flink SQL's Kafka options (checked as Flink's KafkaDynamicTableFactory checks them);
    the executor maps them onto Spark's Kafka source (streaming/sources.py)."""
    o, where = t.options, t.option_spans
    servers = o.get("properties.bootstrap.servers")
    if servers is None:
        raise FlowSyntaxError(f"kafka table '{t.name}' needs 'properties.bootstrap.servers'",
                              t.name_span)
    topic, pattern = o.get("topic"), o.get("topic-pattern")
    if (topic is None) == (pattern is None):
        raise FlowSyntaxError("Option 'topic' and 'topic-pattern' shouldn't be set together."
                              if topic is not None else
                              f"kafka table '{t.name}' needs 'topic' or 'topic-pattern'",
                              where.get("topic-pattern", t.name_span))
    if "format" in o and "value.format" in o:
        raise FlowSyntaxError("give 'format' or 'value.format', not both",
                              where["value.format"])
    fmt, _ = _format(t, "value.format" if "value.format" in o else "format")
    if fmt is None:
        raise FlowSyntaxError(f"kafka table '{t.name}' needs a 'format' (csv or json)",
                              t.name_span)
    mode = o.get("scan.startup.mode", "group-offsets")
    mspan = where.get("scan.startup.mode", t.span)
    if mode not in KAFKA_STARTUP:
        raise UnsupportedError(f"'scan.startup.mode' '{mode}' is not one of "
                               f"{', '.join(KAFKA_STARTUP)}", mspan,
                               hint=_dym(mode, KAFKA_STARTUP))
    millis = None
    if mode == "timestamp":
        if "scan.startup.timestamp-millis" not in o:
            raise FlowSyntaxError("'scan.startup.mode' = 'timestamp' needs "
                                  "'scan.startup.timestamp-millis'", mspan)
        millis = int_setting("timestamp", o["scan.startup.timestamp-millis"],
                             where["scan.startup.timestamp-millis"]).value
    offsets = _specific_offsets(t, topic) if mode == "specific-offsets" else ()
    topics = tuple(x for x in (topic or "").split(";") if x)
    properties = tuple(sorted((k[len("properties."):], v) for k, v in o.items()
                              if k.startswith("properties.")))
    return A.KafkaBody(servers, topics, pattern, o.get("properties.group.id"), mode,
                       millis, offsets, fmt, csv_settings(t, fmt), properties,  # type: ignore[arg-type]
                       t.span)


def kafka_sink_step(t: TableDef, span: Span) -> A.KafkaSinkStep:
    """INSERT INTO a Kafka table: Flink's sink options (KafkaDynamicTableFactory's checks
    and texts); Spark's Kafka writer is at least once, so 'exactly-once' is refused."""
    o, where = t.options, t.option_spans
    kafka_body(t)  # the options a Kafka table always needs, checked as for reading
    topic = o.get("topic")
    if topic is None or ";" in topic:
        raise UnsupportedError(f"writing to kafka table '{t.name}' needs one 'topic'",
                               where.get("topic", where.get("topic-pattern", t.name_span)),
                               hint="a sink writes one topic; 'topic-pattern' and topic "
                                    "lists are for reading")
    fmt, _ = _format(t, "value.format" if "value.format" in o else "format")
    key_format, kspan = _format(t, "key.format")
    fields_text = o.get("key.fields")
    if key_format is not None and not fields_text:
        raise FlowSyntaxError("A key format 'key.format' requires the declaration of one or "
                              "more of key fields using 'key.fields'.", kspan)
    if fields_text is not None and key_format is None:
        raise FlowSyntaxError("The option 'key.fields' can only be declared if a key format "
                              "is defined using 'key.format'.", where["key.fields"])
    keys = tuple(k.strip() for k in (fields_text or "").split(";") if k.strip())
    for k in keys:
        if k not in t.schema.names:
            raise FlowNameError(f"Could not find the field '{k}' in the table schema for usage "
                                "in the key format", where["key.fields"],
                                hint=_dym(k, t.schema.names) or
                                f"the columns are {', '.join(t.schema.names)}")
    include = o.get("value.fields-include", "ALL").upper()
    if include not in ("ALL", "EXCEPT_KEY"):
        raise UnsupportedError(f"'value.fields-include' '{o['value.fields-include']}' is not "
                               "ALL or EXCEPT_KEY", where["value.fields-include"])
    guarantee = o.get("sink.delivery-guarantee", "at-least-once").lower()
    gspan = where.get("sink.delivery-guarantee", t.span)
    if guarantee not in KAFKA_GUARANTEES:
        raise UnsupportedError(f"'sink.delivery-guarantee' '{guarantee}' is not one of "
                               f"{', '.join(KAFKA_GUARANTEES)}", gspan,
                               hint=_dym(guarantee, KAFKA_GUARANTEES))
    if guarantee == "exactly-once":
        raise UnsupportedError("'sink.delivery-guarantee' = 'exactly-once' is not supported: "
                               "Spark's Kafka writer is at least once", gspan,
                               hint="use 'at-least-once' (docs/flink-differences.md, Kafka)")
    partitioner = o.get("sink.partitioner", "default")
    if partitioner != "default":
        raise UnsupportedError(f"'sink.partitioner' '{partitioner}' is not supported (Kafka's "
                               "own partitioner is used, Flink's 'default')",
                               where["sink.partitioner"])
    properties = tuple(sorted((k[len("properties."):], v) for k, v in o.items()
                              if k.startswith("properties.")))
    return A.KafkaSinkStep(o["properties.bootstrap.servers"], topic, fmt or "csv", keys,
                           key_format, include == "ALL", guarantee, properties, span)


def _specific_offsets(t: TableDef, topic: str | None) -> tuple[tuple[str, int, int], ...]:
    """'partition:0,offset:42;partition:1,offset:300' (Flink's format) for one topic."""
    text = t.options.get("scan.startup.specific-offsets")
    span = t.option_spans.get("scan.startup.specific-offsets", t.span)
    if text is None or topic is None or ";" in topic:
        raise FlowSyntaxError("'scan.startup.mode' = 'specific-offsets' needs one 'topic' and "
                              "'scan.startup.specific-offsets'", span)
    out = []
    for part in text.split(";"):
        m = re.fullmatch(r"\s*partition:(\d+)\s*,\s*offset:(\d+)\s*", part)
        if m is None:
            raise FlowSyntaxError(f"Invalid properties '{text}' for "
                                  "'scan.startup.specific-offsets'", span,
                                  hint="for example: 'partition:0,offset:42;"
                                       "partition:1,offset:300'")
        out.append((topic, int(m.group(1)), int(m.group(2))))
    return tuple(out)


# Flink's TimeUtils.parseDuration units (a number without a unit is milliseconds).
_DURATION_UNITS = {
    **dict.fromkeys(("ms", "milli", "millis", "millisecond", "milliseconds"), 1),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1000),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60_000),
    **dict.fromkeys(("h", "hour", "hours"), 3_600_000),
    **dict.fromkeys(("d", "day", "days"), 86_400_000),
}
_DURATION = re.compile(r"\s*(\d+)\s*([a-z]*)\s*")


def flink_duration(text: str, span: Span) -> int:
    """Milliseconds of a Flink duration option value (``'1s'``, ``'500 ms'``, ``'2 min'``;
    TimeUtils.parseDuration's units; sub-millisecond units are not supported)."""
    m = _DURATION.fullmatch(text.lower())
    if m is None or (m.group(2) and m.group(2) not in _DURATION_UNITS):
        unit = m.group(2) if m is not None else ""
        raise FlowTypeError(f"'{text}' is not a duration", span,
                            hint=(_dym(unit, list(_DURATION_UNITS)) if unit else None)
                            or "for example '1s', '500 ms' or '2 min'")
    return int(m.group(1)) * _DURATION_UNITS.get(m.group(2) or "ms", 1)


def int_setting(key: str, text: str, span: Span) -> A.Setting:
    try:
        value = int(text)
    except ValueError:
        raise FlowTypeError(f"'{text}' is not a whole number", span) from None
    return A.Setting(key, value, span, span, span)


def _generators(t: TableDef) -> list[tuple[str, A.Expr, Span]]:
    """Flink's ``fields.<f>.min/max`` (random ints) and ``fields.<f>.kind = 'sequence'`` with
    ``start``; other fields get .flow's defaults (a function of the row index)."""
    out: list[tuple[str, A.Expr, Span]] = []
    for f in t.schema.fields:
        prefix = f"fields.{f.name}."
        given = {k[len(prefix):]: v for k, v in t.options.items() if k.startswith(prefix)}
        if not given:
            continue
        span = t.option_spans[next(k for k in t.options if k.startswith(prefix))]
        kind = given.get("kind", "random")
        if f.type != INT:
            raise UnsupportedError(f"datagen options for the {f.type} column '{f.name}' are "
                                   "not supported (only for BIGINT/INT)", span)
        if kind == "sequence":
            start = int_setting("start", given.get("start", "0"), span).value
            expr: A.Expr = A.Binary("+", A.Literal(start, INT, span),
                                    A.FieldRef("index", None, span), span)
        elif kind == "random":
            lo = int_setting("min", given.get("min", "0"), span).value
            hi = int_setting("max", given.get("max", "2147483647"), span).value
            expr = A.Call("random_int", (A.Literal(lo, INT, span), A.Literal(hi, INT, span)),
                          span, span)
        else:
            raise UnsupportedError(f"datagen kind '{kind}' is not supported", span,
                                   hint="use 'random' (with min/max) or 'sequence'")
        out.append((f.name, expr, span))
    for k in t.options:
        if k.startswith("fields.") and k.split(".")[1] not in t.schema.names:
            raise FlowNameError(f"'{k}' names no column of '{t.name}'", t.option_spans[k],
                                hint=_dym(k.split(".")[1], t.schema.names))
    return out
