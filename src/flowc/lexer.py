"""A Pygments lexer for .flow scripts (and the SQL typed next to them in the REPL).

Used by the REPL for syntax highlighting and usable by documentation tools
(``pygmentize -l flowc.lexer:FlowLexer -x``, or Sphinx/MkDocs with the class).
"""

from __future__ import annotations

from pygments.lexer import RegexLexer, words
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text

FLOW_KEYWORDS = (
    "set", "import", "udf", "source", "from", "let", "values", "datagen", "rows", "sequence",
    "to", "watermark", "dead", "letter", "options", "with", "map", "select", "filter",
    "where", "flat_map", "key", "by", "window", "tumbling", "sliding", "cumulating", "every",
    "offset", "session", "gap", "allowed", "lateness", "late", "into", "aggregate", "union", "join",
    "interval", "between", "on", "as", "rebalance", "rescale", "shuffle", "broadcast",
    "global", "forward", "print", "write", "blackhole", "csv", "json", "parquet", "and", "or",
    "not", "is", "in", "like", "case", "when", "then", "else", "end", "cast", "distinct",
    "order", "limit", "asc", "desc", "nulls", "over", "range", "unbounded", "preceding",
    "top", "first", "last", "inner", "left", "right", "full", "partitioned",
)
SQL_KEYWORDS = (
    "create", "table", "view", "insert", "explain", "plan", "for", "group", "having",
    "all", "descriptor", "tumble", "hop", "cumulate", "partition", "inner", "left", "right",
    "full", "outer", "order", "limit", "show", "tables", "streams", "describe", "reset",
    "help", "quit", "exit", "true", "false", "null",
)
TYPES = ("string", "int", "bigint", "integer", "double", "float", "bool", "boolean",
         "timestamp", "array", "varchar")


class FlowLexer(RegexLexer):
    name = "flowc"
    aliases = ["flow", "flowc"]
    filenames = ["*.flow"]
    flags = 2  # re.IGNORECASE: SQL keywords are written in any case

    tokens = {
        "root": [
            (r"\s+", Text),
            (r"--[^\n]*", Comment.Single),
            (r"'[^']*(?:''[^']*)*'", String.Single),
            (r"\d+(?:\.\d+)?(?:ms|s|m|h|d)\b", Number),
            (r"\d+\.\d+", Number.Float),
            (r"\d+", Number.Integer),
            (words(TYPES, suffix=r"\b"), Keyword.Type),
            (words(FLOW_KEYWORDS + SQL_KEYWORDS, suffix=r"\b"), Keyword),
            (r"[A-Za-z_][A-Za-z0-9_]*(?=\s*\()", Name.Function),
            (r"[A-Za-z_][A-Za-z0-9_]*", Name),
            (r"\|\||<>|!=|==|<=|>=|[-+*/%=<>|]", Operator),
            (r"[(),;.\[\]]", Punctuation),
            (r".", Text),
        ],
    }
