"""Renderings of the StreamGraph, JobGraph and ExecutionGraph."""

from flowc.explain.plan_json import execution_plan_json
from flowc.explain.render import FORMATS, LEVELS, render

__all__ = ["FORMATS", "LEVELS", "execution_plan_json", "render"]
