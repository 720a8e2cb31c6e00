"""``CREATE [TEMPORARY] FUNCTION [IF NOT EXISTS] name AS 'module.function' LANGUAGE PYTHON``
(Flink's DDL) as a .flow ``import udf``: a scalar Python function usable in expressions,
typed by its annotations (:mod:`flowc.parser.udf_types`)."""

from __future__ import annotations

import re

from sqlglot import exp

from flowc.errors import FlowSyntaxError, Span, UnsupportedError
from flowc.parser import ast as A
from flowc.sql.exprs import SpanMap
from flowc.types import STRING

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")


def create_function(tree: exp.Create, spans: SpanMap, span: Span) -> A.ImportUdf:
    target = tree.this
    name_span = spans(target)
    language = next((p for p in (tree.args.get("properties") or exp.Properties()).expressions
                     if isinstance(p, exp.LanguageProperty)), None)
    if language is None:
        raise UnsupportedError("a function without LANGUAGE is a Java class in Flink; flowc "
                               "runs Python functions only", span,
                               hint="add LANGUAGE PYTHON")
    lang = language.name.upper()
    if lang != "PYTHON":
        raise UnsupportedError(f"LANGUAGE {lang} functions are not supported; flowc runs "
                               "Python functions only", spans(language),
                               hint="LANGUAGE PYTHON, with AS 'module.function'")
    body = tree.expression
    if not (isinstance(body, exp.Literal) and body.is_string):
        raise FlowSyntaxError("expected AS 'module.function'", span)
    path_span = spans(body)
    if not _IDENTIFIER.fullmatch(body.name):
        raise FlowSyntaxError(f"'{body.name}' is not a Python function's full name",
                              path_span, hint="write AS 'module.function' (a module next to "
                                              "the SQL file, or an installed one)")
    module, function = body.name.rsplit(".", 1)
    name = target.name if isinstance(target, exp.Table) else str(target)
    if isinstance(target, exp.Table) and (target.args.get("db") or target.args.get("catalog")):
        raise UnsupportedError("catalogs and databases are not supported", name_span,
                               hint=f"CREATE FUNCTION {name} ...")
    return A.ImportUdf(module, function, (), STRING, name, span, path_span, annotated=True)
