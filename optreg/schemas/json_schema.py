"""JSON Schema (draft-07, what yaml-language-server reads) of the experiment config, from the registry."""

from __future__ import annotations

from typing import Any

from pydantic.json_schema import GenerateJsonSchema

from optreg.registry.entry import DIALECTS, OPTIMIZER, SCHEDULER, Entry
from optreg.registry.registry import REGISTRY
from optreg.schemas import models

DRAFT_07 = "http://json-schema.org/draft-07/schema#"


class Draft07(GenerateJsonSchema):
    """Pydantic's generator with draft-07 tuples: `items` + `additionalItems` instead of `prefixItems`."""

    def tuple_schema(self, schema: Any) -> dict[str, Any]:
        out = super().tuple_schema(schema)
        if "prefixItems" in out:
            out["items"] = out.pop("prefixItems")
            out["additionalItems"] = False
            out.pop("maxItems", None)
            out.pop("minItems", None)
            out["minItems"] = out["maxItems"] = len(out["items"])
        return out


def _names(entry: Entry) -> list[str]:
    names = []
    for n in (entry.name, *entry.aliases):
        names += [n, n.lower(), f"{entry.dialect}.{n}", f"{entry.dialect}.{n}".lower()]
    return sorted(set(names))


def _component(entry: Entry, definitions: dict[str, Any]) -> dict[str, Any]:
    schema = models.model(entry).model_json_schema(schema_generator=Draft07, ref_template="#/definitions/{model}")
    definitions.update(schema.pop("$defs", {}))
    props = schema.setdefault("properties", {})
    props["name"] = {"enum": _names(entry), "description": entry.doc or entry.name}
    props["dialect"] = {"enum": [entry.dialect]}
    schema["required"] = ["name"]
    schema["additionalProperties"] = False
    schema["description"] = " ".join(filter(None, [entry.doc, f"Reproduces {entry.source}." if entry.source else ""]))
    schema["title"] = entry.qualname
    return schema


def _optimizer(entry: Entry, definitions: dict[str, Any]) -> dict[str, Any]:
    schema = _component(entry, definitions)
    options = {k: v for k, v in schema["properties"].items() if k not in ("name", "dialect")}
    rule = {"type": "object", "additionalProperties": entry.bind is not None,
            "properties": {"params": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
                                      "description": "glob pattern(s) over parameter names; first match wins"},
                           **options},
            "required": ["params"]}
    schema["properties"]["param_groups"] = {"type": "array", "items": rule}
    return schema


def _scheduler(entry: Entry, definitions: dict[str, Any]) -> dict[str, Any]:
    schema = _component(entry, definitions)
    props = schema["properties"]
    if "schedulers" in props:
        props["schedulers"] = {"type": "array", "items": {"$ref": "#/definitions/scheduler"}, "minItems": 1}
    props["key"] = {"enum": ["lr", "momentum", "betas[0]", "betas[1]", "weight_decay"]}
    return schema


def _combinators() -> list[dict[str, Any]]:
    """optreg's own `sequential` and `chained` (not registry rows: they compose rows of any dialect)."""
    nested = {"type": "array", "items": {"$ref": "#/definitions/scheduler"}, "minItems": 1}
    restart = {"enum": ["local", "global"]}
    common = {"schedulers": nested, "key": {"enum": ["lr", "momentum", "betas[0]", "betas[1]", "weight_decay"]},
              "last_epoch": {"type": "integer", "minimum": -1}}
    return [
        {"title": "sequential", "type": "object", "additionalProperties": False, "required": ["name", "schedulers"],
         "description": "Stages one after another (local steps; restart: global on request); milestones derived "
                        "from the stages' lengths when omitted.",
         "properties": {"name": {"enum": ["sequential", "Sequential"]}, **common,
                        "milestones": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                        "restart": {"anyOf": [restart, {"type": "array", "items": restart}]}}},
        {"title": "chained", "type": "object", "additionalProperties": False, "required": ["name", "schedulers"],
         "description": "Every stage at the same step; factors multiply.",
         "properties": {"name": {"enum": ["chained", "Chained"]}, **common}},
    ]


def experiment_schema() -> dict[str, Any]:
    """The whole experiment config; every registered component of every dialect is a member."""
    from optreg.schemas.experiment import TrainSpec

    definitions: dict[str, Any] = {}
    optimizers = [_optimizer(e, definitions) for e in REGISTRY.entries(OPTIMIZER)]
    schedulers = [_scheduler(e, definitions) for e in REGISTRY.entries(SCHEDULER)]
    definitions["scheduler"] = {"anyOf": schedulers + _combinators()}
    train = TrainSpec.model_json_schema(schema_generator=Draft07)
    return {
        "$schema": DRAFT_07,
        "title": "optreg experiment config",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "dialect": {"enum": list(DIALECTS), "description": "default dialect of the names below"},
            "optimizer": {"anyOf": optimizers},
            "scheduler": {"anyOf": [{"$ref": "#/definitions/scheduler"},
                                    {"type": "array", "items": {"$ref": "#/definitions/scheduler"}},
                                    {"type": "null"}]},
            "train": train,
        },
        "required": ["optimizer"],
        "definitions": definitions,
    }
