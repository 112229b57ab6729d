"""The editor schema (`optreg schema`): draft-07 as yaml-language-server reads it, and every shipped YAML passes it."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
import warnings
from pathlib import Path

import jsonschema
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from optreg import ConfigError
import optreg
from optreg.cli import main
from optreg.config.experiment import validate_experiment
from optreg.config.json_schema import OTHER_FORMS, parse_args_section
from optreg.config.yaml_loader import read_yaml
from optreg.core.names import NAME_KEYS
from optreg.integrations.hydra.support import strip_builders

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "optreg" / "configs"
SCHEMA = optreg.json_schema()
VALIDATOR = jsonschema.Draft7Validator(SCHEMA)


def members(kind: str) -> list[dict]:
    """The components' schemas (not the other forms beside them: a `$ref` each)."""
    if kind == "optimizer":
        return [m for m in SCHEMA["properties"]["optimizer"]["anyOf"] if "title" in m]
    return [m for m in SCHEMA["definitions"]["scheduler"]["anyOf"] if "title" in m]


def own(node: dict) -> dict:
    """A value's schema without its `${...}` and numeric-string alternatives (json_schema._or_interpolation); a
    schema that members share, its definition (json_schema._shared)."""
    branches = [b for b in node.get("anyOf", [node])
                if b.get("$ref", "/").split("/")[-1].split(":")[0] not in OTHER_FORMS]
    if len(branches) == 1 and "$ref" in branches[0]:
        return SCHEMA["definitions"][branches[0]["$ref"].split("/")[-1]]
    return branches[0] if len(branches) == 1 else {**node, "anyOf": branches}


def description(node: dict) -> str | None:
    """A value's description: beside its schema, or in the definition it shares with other members."""
    return node.get("description") or own(node).get("description")


def member(title: str) -> dict:
    return next(m for kind in ("optimizer", "scheduler") for m in members(kind) if m["title"] == title)


def walk(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def test_schema_is_valid_draft_07():
    assert SCHEMA["$schema"] == "http://json-schema.org/draft-07/schema#"
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    assert not any("prefixItems" in n or "$defs" in n for n in walk(SCHEMA))     # 2020-12 keywords


def test_a_schema_that_members_share_is_written_once():
    """A value's schema that many members declare alike (a scheduler's warmup, a param_groups rule's keys, an option
    such as state_dtype) is one definition that each uses by `$ref` (json_schema._shared): no subtree of 1,000
    characters of JSON or more is written twice (the warmup's was written 144 times: 3.9 MB as written)."""
    written = Counter(json.dumps(node, sort_keys=True) for node in walk(SCHEMA))
    assert not [text[:120] for text, count in written.items() if count > 1 and len(text) >= 1000]
    uses = {json.dumps(m["properties"]["warmup"]) for m in members("scheduler")}   # every row's, the combinators'
    assert uses == {json.dumps({"anyOf": [{"$ref": "#/definitions/shared:warmup"},
                                          {"$ref": "#/definitions/interpolation"}]})}
    bad = {"optimizer": {"name": "SGD", "lr": 0.1},
           "scheduler": {"name": "StepLR", "step_size": 2, "warmup": {"ratio": 1.5}}}
    with pytest.raises(ConfigError):
        validate_experiment(bad)
    assert {tuple(e.path) for e in VALIDATOR.iter_errors(bad)} == {("scheduler",)}   # refused as before


def test_tuples_are_items_plus_additional_items():
    betas = own(member("torch.AdamW")["properties"]["betas"])
    assert isinstance(betas["items"], list) and len(betas["items"]) == 2
    assert betas["additionalItems"] is False and betas["minItems"] == betas["maxItems"] == 2
    assert own(betas["items"][1]) == {"type": "number", "minimum": 0, "exclusiveMaximum": 1}


def test_every_component_requires_one_name_key_and_forbids_other_keys():
    registered = len(optreg.list_optimizers()) + len(optreg.list_schedulers()) + 2   # + sequential, chained
    all_members = members("optimizer") + members("scheduler")
    assert len(all_members) == registered
    for m in all_members:
        assert m["oneOf"] == [{"required": [k]} for k in NAME_KEYS], m["title"]
        assert m["additionalProperties"] is False, m["title"]
        assert m["description"], m["title"]


def test_descriptions_come_from_the_docs():
    adamw = member("torch.AdamW")["properties"]
    assert description(adamw["lr"]).startswith("learning rate")
    assert description(adamw["betas"]).startswith("coefficients used for computing running averages")
    step = member("torch.StepLR")["properties"]
    assert description(step["step_size"]) == "Period of learning rate decay."
    # an option undocumented in its own implementation borrows the same-named component's text
    assert description(member("oneflow.StepLR")["properties"]["step_size"]) == "Period of learning rate decay."
    options = [(m["title"], k, p) for kind in ("optimizer", "scheduler") for m in members(kind)
               for k, p in m["properties"].items() if k not in ("name", "dialect", "param_groups", "key")
               and not k.startswith("_")]
    described = sum(description(p) is not None for _, _, p in options)
    assert described / len(options) > 0.85, f"{described}/{len(options)} options have a description"


def test_args_section_parser():
    doc = """Frobnicates.

    Args:
        params (iterable): parameters
        lr (float, optional): learning rate
            used for :math:`w` updates. Default: 1e-3.
        betas (Tuple[float, float]): ``(b1, b2)``

    Example:
        >>> lr: not an argument
    """
    assert parse_args_section(doc) == {"params": "parameters",
                                       "lr": "learning rate used for w updates.",
                                       "betas": "(b1, b2)"}
    # a type whose default holds parentheses of its own (bitsandbytes' docstrings): still an item of its own
    doc = """Base 2-state update optimizer class.

    Arguments:
        lr (`float`, defaults to 1e-3):
            The learning rate.
        betas (`tuple`, defaults to (0.9, 0.999)):
            The beta values for the optimizer.
    """
    assert parse_args_section(doc) == {"lr": "The learning rate.", "betas": "The beta values for the optimizer."}


def _own_examples() -> list[Path]:
    """The example files in optreg's own form (not a foreign format's, not a Hydra primary config)."""
    from optreg.config.experiment import load_config

    return [path for path in sorted((REPO / "examples").rglob("*.yaml")) if "hydra_app" not in path.parts
            and load_config(str(path)).format == "optreg"]


def shipped_documents():
    """(name, experiment) for every YAML file optreg ships or shows, composed into a full experiment."""
    for path in (*_own_examples(), CONFIGS / "quickstart.yaml"):
        yield str(path.relative_to(REPO)), read_yaml(path)[0]
    for path in sorted(CONFIGS.glob("*/*.yaml")):
        section = {k: v for k, v in read_yaml(path)[0].items() if v != "???"}   # `???`: the user must set it
        if path.parent.name == "optimizer":
            yield f"optimizer/{path.name}", {"optimizer": section}
        else:
            yield f"scheduler/{path.name}", {"optimizer": {"name": "SGD"}, "scheduler": section}
    with initialize_config_dir(config_dir=str(REPO / "examples" / "hydra_app" / "conf"), version_base="1.3"):
        for overrides in ([], ["optimizer=sgd", "scheduler=step", "scheduler.step_size=10"]):
            cfg = compose("config", overrides)
            yield f"hydra_app {' '.join(overrides)}", OmegaConf.to_container(cfg, resolve=True)


def test_every_shipped_yaml_validates():
    documents = list(shipped_documents())
    assert len(documents) == len(list(CONFIGS.glob("*/*.yaml"))) + len(_own_examples()) + 3
    assert "examples/muon_adamw.yaml" in dict(documents)   # a composite: rules with an optimizer of their own
    failures = {name: [e.message[:160] for e in VALIDATOR.iter_errors(doc)][:2] for name, doc in documents
                if not VALIDATOR.is_valid(doc)}
    assert not failures, failures


@pytest.mark.parametrize("doc, bad_path", [
    ({"optimizer": {"name": "AdamW", "weigth_decay": 0.1}}, "optimizer.weigth_decay"),
    ({"optimizer": {"name": "AdamW", "betas": [0.9, 1.0]}}, "optimizer.betas[1]"),
    ({"optimizer": {"name": "AdamW", "lr": -0.001}}, "optimizer.lr"),
    ({"optimizer": {"name": "SGD"}, "scheduler": {"name": "StepLR", "step_size": 0}}, "scheduler.step_size"),
    ({"optimizer": {"name": "SGD"}, "trian": {"steps": 3}}, "trian"),
    ({"optimizer": {"name": "SGD", "_target_": "os.system"}}, "optimizer._target_"),
    # the layer pattern without its {i} (the pattern was left out of the schema by the validator before it)
    ({"optimizer": {"name": "AdamW", "layer_decay": {"rate": 0.7, "layer": "blocks.*"}}},
     "optimizer.layer_decay.layer"),
    ({"optimizer": {"name": "SGD"}, "clip_grad": {"max_norm": 1.0, "norm_type": "infinite"}}, "clip_grad.norm_type"),
])
def test_schema_rejects_what_validation_rejects(doc, bad_path):
    assert not VALIDATOR.is_valid(doc)
    with pytest.raises(ConfigError) as exc:
        validate_experiment(strip_builders(doc))
    assert bad_path in [e.path for e in exc.value.errors]


@pytest.mark.parametrize("doc", [
    {"optimizer": {"name": "AdamW", "weight_decay": 0.1, "betas": [0.9, 0.95], "lr": 0.001}},
    {"optimizer": {"name": "mindspore.Adam", "learning_rate": 0.01}, "scheduler": {"name": "StepLR", "step_size": 3}},
    {"optimizer": {"name": "SGD"}, "scheduler": {"name": "CosineAnnealingLR", "T_max": None}, "train": {"steps": 5}},
    {"optimizer": {"name": "SGD", "_target_": "optreg.integrations.hydra.support.optimizer_factory",
                   "_recursive_": False}},
    # a composite's rule: its part's group keys beside its optimizer (OneFlow's, MindSpore's)
    {"optimizer": {"name": "Muon", "param_groups": [
        {"max_ndim": 1, "clip_grad_max_norm": 1.0, "optimizer": {"name": "oneflow.AdamW"}},
        {"params": ["embed.*"], "grad_centralization": True, "optimizer": {"name": "mindspore.Adam"}}]}},
    # infinity as the norm orders read it (YAML's `Infinity` is a string; the schema took 'inf' and '-inf' only)
    *({"optimizer": {"name": "SGD"}, "clip_grad": {"max_norm": 1.0, "norm_type": spelt}}
      for spelt in ("Infinity", "+inf", " -INF ", "-infinity", ".inf")),
    {"optimizer": {"name": "oneflow.SGD", "param_groups": [{"params": "*.bias", "clip_grad_max_norm": 1.0,
                                                            "clip_grad_norm_type": "Infinity"}]}},
])
def test_schema_accepts_what_validation_accepts(doc):
    errors = [e.message for e in VALIDATOR.iter_errors(doc)]
    assert not errors
    validate_experiment(strip_builders(doc))


def test_schema_command_writes_the_same_schema(tmp_path):
    out = tmp_path / "optreg.schema.json"
    assert main(["schema", "-o", str(out)]) == 0
    assert json.loads(out.read_text()) == json.loads(json.dumps(SCHEMA))


def test_a_peer_dialect_s_schema_leaves_out_defaults_json_cannot_hold_without_warnings(tmp_path, capsys):
    """pytorch_optimizer's defaults include torch dtypes and functions: left out of the schema, silently (pydantic
    printed five warnings that named no component)."""
    out = tmp_path / "po.schema.json"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["schema", "--dialect", "pytorch_optimizer", "-o", str(out)]) == 0
    assert capsys.readouterr().err == ""
    text = out.read_text()
    assert "torch.bfloat16" not in text and "<function" not in text
    assert len(json.loads(text)["properties"]["optimizer"]["anyOf"]) > 128   # the built-in ones and its 128


def _respelt(name: str, kind: str, i: int) -> list[str]:
    """Spellings of a registered name that the registry takes (`names.normalise`), two or three of them (the i-th
    name gets snake case in lower case or kebab case in upper case; a scheduler also loses its `LR`)."""
    import re

    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    out = [words.lower() if i % 2 else f" {words.replace('_', '-').upper()} "]
    if kind == "scheduler" and name.lower().endswith("lr") and len(name) > 2:
        out.append(name[:-2])
    return out


def test_the_schema_takes_every_spelling_of_a_name_that_validation_takes():
    """Each shipped group file's component, its name respelt (any case, snake or kebab case, a scheduler's `LR`
    left out, its dialect's prefix in any case) and an option given by another spelling (MindSpore's
    `learning_rate` for `lr`, `beta1` for `betas[0]`): the schema accepts it where validation takes it, and still
    refuses a misspelt name or option."""
    from optreg.core.names import split_dialect

    checked = 0
    for i, (name, doc) in enumerate(shipped_documents()):
        if not name.startswith(("optimizer/", "scheduler/")):
            continue
        kind = name.split("/")[0]
        section = doc[kind]
        dialect, bare = split_dialect(section["name"])
        dialect = section.get("dialect", dialect)
        for spelt in _respelt(bare, kind, i) + [f"{dialect.title()}.{bare}"]:
            variant = {**doc, kind: {**section, "name": spelt}}
            assert VALIDATOR.is_valid(variant), (name, spelt, [e.message[:120] for e in VALIDATOR.iter_errors(variant)])
            checked += 1
        if i % 8 == 0:
            assert not VALIDATOR.is_valid({**doc, kind: {**section, "name": bare + "x"}}), name
    assert checked > 500
    for doc in [{"optimizer": {"name": "adam_w", "learning_rate": 0.01, "beta1": 0.8, "epsilon": 1e-6}},
                {"optimizer": {"name": "MindSpore.Adam", "betas": [0.9, 0.99], "lr": 0.01}},
                {"optimizer": {"name": "SGD"}, "scheduler": {"name": "one-cycle", "max_lr": 0.1, "total_steps": 3}}]:
        assert not [e.message for e in VALIDATOR.iter_errors(doc)], doc
        validate_experiment(doc)
    for doc, bad in [({"optimizer": {"name": "AdamW", "learning_rat": 0.1}}, "optimizer.learning_rat"),
                     ({"optimizer": {"name": "adam_ww"}}, "optimizer.name")]:
        assert not VALIDATOR.is_valid(doc)
        with pytest.raises(ConfigError) as exc:
            validate_experiment(doc)
        assert [e.path for e in exc.value.errors] == [bad]


@pytest.mark.parametrize("scheduler", [
    {"name": "nemo.WarmupAnnealing", "max_steps": 10, "last_epoch": -1},      # what optreg convert writes from NeMo
    {"name": "oneflow.CosineDecayLR", "decay_steps": 10, "last_step": -1},
    {"name": "hf.linear", "num_warmup_steps": 2, "num_training_steps": 10, "key": "lr", "last_epoch": -1},
    {"name": "cerebras.CosineDecayWD", "initial_val": 0.1, "end_val": 0.01, "total_iters": 10, "key": "weight_decay"},
    {"name": "sequential", "schedulers": [{"name": "LinearLR", "total_iters": 5}], "last_step": -1},
    {"name": "torch.StepLR", "step_size": 3, "key": "lr"},   # the one key a torch class drives (core.build.check_key)
])
def test_the_adapter_s_options_of_a_closed_form_are_in_the_schema(scheduler):
    """`key` and `last_epoch` (alias `last_step`) belong to the adapter of every closed-form schedule
    (core.build._pop_adapter_options): validation takes them on every dialect's schedules, so the schema does."""
    doc = {"optimizer": {"name": "SGD", "lr": 0.1, "weight_decay": 0.1}, "scheduler": scheduler}
    validate_experiment(doc)
    assert not [e.message[:120] for e in VALIDATOR.iter_errors(doc)]


@pytest.mark.parametrize("scheduler, bad_path", [
    ({"name": "torch.StepLR", "step_size": 3, "key": "momentum"}, "scheduler.key"),   # torch's classes drive the lr
    ({"name": "cerebras.CosineDecayWD", "initial_val": 0.1, "end_val": 0.01, "total_iters": 10, "key": "lr"},
     "scheduler.key"),
])
def test_a_key_validation_refuses_is_not_in_the_schema(scheduler, bad_path):
    doc = {"optimizer": {"name": "SGD", "lr": 0.1, "weight_decay": 0.1}, "scheduler": scheduler}
    with pytest.raises(ConfigError) as exc:
        validate_experiment(doc)
    assert bad_path in [e.path for e in exc.value.errors]
    assert not VALIDATOR.is_valid(doc)


def test_param_groups_null_is_no_rules_in_the_schema_as_in_validation():
    """`param_groups: null` validates (no rules, groups.not_rules) and was refused by the schema; '' stays refused
    by both."""
    for title in ("torch.AdamW", "mindspore.LARS", "cerebras.AdamW"):
        doc = {"optimizer": {"name": title, "param_groups": None}}
        if title == "mindspore.LARS":
            doc["optimizer"]["optimizer"] = {"name": "Momentum", "learning_rate": 0.1, "momentum": 0.9}
        validate_experiment(doc)
        assert not [e.message[:120] for e in VALIDATOR.iter_errors(doc)], title
    doc = {"optimizer": {"name": "AdamW", "param_groups": ""}}
    with pytest.raises(ConfigError):
        validate_experiment(doc)
    assert not VALIDATOR.is_valid(doc)


def test_a_wrapper_s_rules_take_the_wrapped_optimizer_s_options():
    """MindSpore LARS plans its param_groups with the optimizer it wraps: a rule's weight_decay (Momentum's) is
    taken by validation and build, and was refused by the schema, which offered LARS' own options there."""
    doc = {"optimizer": {"name": "mindspore.LARS", "optimizer": {"name": "Momentum", "learning_rate": 0.1,
                                                                 "momentum": 0.9},
                         "param_groups": [{"params": ["*.bias"], "weight_decay": 0.0}]}}
    validate_experiment(doc)
    assert not [e.message[:120] for e in VALIDATOR.iter_errors(doc)]
    rule = own(own(member("mindspore.LARS")["properties"]["param_groups"])["items"])
    assert "coefficient" not in rule["properties"]


@pytest.mark.parametrize("section", [
    {"optimizer": {"name": "oneflow.optim.AdamW"}},                  # a framework's class path
    {"optimizer": {"name": "mindspore.nn.Adam"}},
    {"optimizer": {"name": " oneflow.optim.SGD ", "dialect": "oneflow"}},   # spaces around, as validation strips
    {"optimizer": {"name": "oneflow.optim.adam_w"}},                 # the module's path, the name in any spelling
    {"optimizer": {"name": "oneflow_adamw"}},                        # a Hydra group option's name
    {"optimizer": {"name": "mindspore_experimental_adamw"}},
    {"optimizer": {"name": "SGD"}, "scheduler": {"name": "torch.optim.lr_scheduler.StepLR", "step_size": 3}},
    {"optimizer": {"name": "cerebras.SGD", "lr": 0.1, "weight_decay": 0.1},
     "scheduler": {"name": "cerebras.pytorch.optim.weight_decay_scheduler.CosineDecayWD", "initial_val": 0.1,
                   "end_val": 0.01, "total_iters": 10}},
])
def test_the_schema_takes_the_names_validation_takes_by_path_and_group_name(section):
    """README: a component answers to its framework's class path and `optreg show` takes `oneflow_adamw`; the
    schema refused both."""
    validate_experiment(section)
    assert not [e.message[:120] for e in VALIDATOR.iter_errors(section)]
    kind = "scheduler" if "scheduler" in section else "optimizer"
    misspelt = {**section, kind: {**section[kind], "name": section[kind]["name"] + "x"}}
    assert not VALIDATOR.is_valid(misspelt)


def test_a_rule_takes_the_group_keys_its_optimizer_reads_per_group():
    """OneFlow's per-group clip_grad_max_norm / clip_grad_norm_type (what optreg convert writes from every LiBai
    file) and Model Zoo's adjust_learning_rate are taken in a rule by validation and were refused by the schema;
    they stay out of the optimizer section itself, as validation keeps them."""
    rule = {"params": ["*.bias"], "clip_grad_max_norm": 1.0, "clip_grad_norm_type": "inf"}
    doc = {"optimizer": {"name": "oneflow.AdamW", "param_groups": [rule]}}
    validate_experiment(doc)
    assert not [e.message[:120] for e in VALIDATOR.iter_errors(doc)]
    doc = {"optimizer": {"name": "cerebras.AdamW",
                         "param_groups": [{"params": ["*.bias"], "adjust_learning_rate": 0.5}]}}
    validate_experiment(doc)
    assert not [e.message[:120] for e in VALIDATOR.iter_errors(doc)]
    assert not VALIDATOR.is_valid({"optimizer": {"name": "oneflow.AdamW", "clip_grad_max_norm": 1.0}})
    assert not VALIDATOR.is_valid({"optimizer": {"name": "oneflow.AdamW",
                                                 "param_groups": [{**rule, "clip_grad_norm_type": 0}]}})


def test_a_rule_of_a_dialect_s_optimizer_lists_the_keys_its_groups_take():
    """MindSpore's grad_centralization / order_params (its binder's, Dialect.group_keys) and OneFlow's clipping keys
    (its rows' group_keys) are in the rules of that dialect's optimizers, with their types and descriptions, and in
    no torch optimizer's; a config using them validates in an editor as in optreg (an order_params rule stands
    alone), and a wrong type is refused by both."""
    def rule(title: str) -> dict:
        return own(own(member(title)["properties"]["param_groups"])["items"]["anyOf"][0])["properties"]

    ours = {"grad_centralization": "boolean", "order_params": "array", "clip_grad_max_norm": "number"}
    kinds = {title: {k: own(rule(title)[k]).get("type") for k in [*ours, "clip_grad_norm_type"] if k in rule(title)}
             for title in ("mindspore.Adam", "oneflow.AdamW", "torch.AdamW")}
    assert kinds == {"mindspore.Adam": {"grad_centralization": "boolean", "order_params": "array"},
                     "oneflow.AdamW": {"clip_grad_max_norm": "number", "clip_grad_norm_type": None}, "torch.AdamW": {}}
    assert description(rule("mindspore.Adam")["grad_centralization"]).startswith("centralise this group's gradients")
    names = ["fc.weight", "fc.bias"]
    for doc in [{"optimizer": {"name": "mindspore.Adam", "param_groups": [
                    {"params": ["*.bias"], "grad_centralization": True}, {"order_params": names}]}},
                {"optimizer": {"name": "oneflow.AdamW", "param_groups": [
                    {"params": "*", "clip_grad_max_norm": 1.0, "clip_grad_norm_type": 2.0}]}}]:
        validate_experiment(doc)
        assert not [e.message[:120] for e in VALIDATOR.iter_errors(doc)]
    bad = {"optimizer": {"name": "mindspore.Adam", "param_groups": [{"params": "*", "grad_centralization": "yes"}]}}
    with pytest.raises(ConfigError, match="grad_centralization: expected true or false"):
        validate_experiment(bad)
    assert not VALIDATOR.is_valid(bad)


# ---------------------------------------------------------------------------------------------------
# the schema accepts what `optreg validate` accepts: every file of optreg's own form it accepts, and the forms
# validate reads before it validates (an application's keys, ${...}, Cerebras' scheduler forms, name keys)
# ---------------------------------------------------------------------------------------------------
def _config_files() -> list[Path]:
    """The YAML and JSON files shipped or used in the repository (examples, the quickstart, the tests' fixtures);
    the Hydra group files (a section each) are `shipped_documents`'."""
    roots = [REPO / "examples", REPO / "tests", CONFIGS / "quickstart.yaml"]
    return [p for root in roots for p in (sorted(root.rglob("*")) if root.is_dir() else [root])
            if p.suffix in (".yaml", ".yml", ".json")]


def _readme_blocks() -> list[tuple[str, str]]:
    """(where, text) of every ```yaml block of the README and the docs."""
    import re

    out = []
    for md in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        text = md.read_text()
        for m in re.finditer(r"```ya?ml\n(.*?)```", text, re.S):
            out.append((f"{md.name}:{text[:m.start()].count(chr(10)) + 2}", m.group(1)))
    return out


def _own_form(data) -> bool:
    """Whether a loaded document is read as optreg's own form (the schema's), not by a format reader."""
    from optreg.config import formats
    from optreg.config.experiment import OWN_FORMAT

    try:
        return isinstance(data, dict) and formats.detect(data) is OWN_FORMAT
    except ConfigError:   # two formats claim it
        return False


def accepted_corpus():
    """(where, document as written) of every file and README block of optreg's own form that `optreg validate`
    accepts (`load_config`: composed by Hydra where it has `defaults:` or `${...}`)."""
    from optreg.config.experiment import load_config

    for path in _config_files():
        try:   # a JSON recording is read as JSON: YAML's reader takes seconds over the fixtures' megabytes
            data = json.loads(path.read_text()) if path.suffix == ".json" else read_yaml(path)[0]
        except (ValueError, ConfigError):
            continue
        if _own_form(data):
            with contextlib.suppress(ConfigError), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                load_config(str(path))
                yield str(path.relative_to(REPO)), data
    for where, text in _readme_blocks():
        with contextlib.suppress(ConfigError), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = read_yaml(text)[0]
            if _own_form(data):
                load_config(text)
                yield where, data


def test_every_file_that_validate_accepts_the_schema_accepts():
    """The corpus: each file of the repository (and README block) in optreg's own form that validate accepts passes
    the schema as written, before Hydra composes it: the Hydra app's primary config (`defaults:`, an optimizer
    section without its name) among them."""
    corpus = dict(accepted_corpus())
    assert {"examples/hydra_app/conf/config.yaml", "examples/quickstart.yaml", "examples/muon_adamw.yaml",
            "optreg/configs/quickstart.yaml"} <= set(corpus)
    assert len(corpus) >= 10 and any(where.startswith("README.md:") for where in corpus)
    failures = {where: [e.message[:160] for e in VALIDATOR.iter_errors(doc)][:2] for where, doc in corpus.items()
                if not VALIDATOR.is_valid(doc)}
    assert not failures, failures


SGD = "optimizer: {name: SGD, lr: 0.1, momentum: 0.9}\n"


@pytest.mark.parametrize("text", [
    # an application's own top-level keys (a Hydra app's model: and data:)
    SGD + "model: resnet\ndata: {path: /data, batch_size: 32}\nseed: 0\ntrainer: {devices: 2}\n",
    # ${...} interpolations in a number, a boolean, a choice, a tuple's item, a list and a train: key
    "steps: 20\nflag: true\ngamma: 0.5\noptimizer: {name: AdamW, amsgrad: '${flag}', betas: [0.9, '${gamma}']}\n"
    "scheduler: {name: StepLR, step_size: '${steps}', gamma: '${gamma}'}\ntrain: {steps: '${steps}'}\n",
    SGD + "ms: [2, 4]\nscheduler: {name: MultiStepLR, milestones: '${ms}'}\n",
    SGD + "key: lr\nscheduler: {name: hf.linear, num_warmup_steps: 2, num_training_steps: 10, key: '${key}'}\n",
    # ... and in place of a section, a rule, a nested scheduler (an application's key holding it)
    "optim: {name: SGD, lr: 0.1}\nrule: {params: '*.bias', weight_decay: 0}\nwarm: {name: LinearLR, total_iters: 2}\n"
    "optimizer: '${optim}'\n",
    "rule: {params: '*.bias', weight_decay: 0}\nwarm: {name: LinearLR, total_iters: 2}\n"
    "optimizer: {name: SGD, lr: 0.1, param_groups: ['${rule}']}\n"
    "scheduler: {name: sequential, schedulers: ['${warm}', {name: ConstantLR}], milestones: [2]}\n",
    # Cerebras' {Name: {...}} forms: a list of them, one, a weight-decay twin, a SequentialLR of them, no options
    SGD + "scheduler:\n  - LinearLR: {initial_learning_rate: 0.0, end_learning_rate: 0.1, total_iters: 5}\n"
          "  - cosine_decay: {initial_learning_rate: 0.1, end_learning_rate: 0.01, total_iters: 15}\n",
    SGD + "scheduler: {CosineDecayLR: {initial_learning_rate: 0.1, end_learning_rate: 0.0, total_iters: 10}}\n",
    "optimizer: {name: SGD, lr: 0.1, weight_decay: 0.1}\n"
    "scheduler: {CosineDecayWD: {initial_val: 0.1, end_val: 0.01, total_iters: 10}}\n",
    SGD + "scheduler:\n  SequentialLR:\n    schedulers:\n      - LinearLR: {initial_learning_rate: 0.0, "
          "end_learning_rate: 0.1, total_iters: 5}\n      - ConstantLR: {learning_rate: 0.1}\n",
    SGD + "scheduler: {name: sequential, schedulers: [{name: LinearLR, total_iters: 2}, {ConstantLR: {learning_rate:"
          " 0.1}}], milestones: [2]}\n",
    # Cerebras' legacy items ({scheduler: Linear, ...}: Model Zoo 1.x-2.2), with their legacy option names, one or
    # a list; a null train: or clip_grad: (as if left out)
    SGD + "scheduler: {scheduler: Exponential, learning_rate: 0.1, decay_rate: 0.9, decay_steps: 10}\n",
    SGD + "scheduler: {scheduler: PiecewiseConstant, values: [0.1, 0.01], boundaries: [5]}\n",
    SGD + "scheduler:\n  - {scheduler: linear_lr, initial_learning_rate: 0.0, end_learning_rate: 0.1, steps: 5}\n"
          "  - {scheduler: CosineAnnealing, learning_rate: 0.1, t_max: 10, disable_lr_steps_reset: true}\n",
    SGD + "train: null\nclip_grad: null\ndialect: null\n",
    # numbers written as strings (core.types: as pydantic parses them)
    "optimizer: {name: AdamW, lr: '1e-3', betas: ['0.9', ' 0.95 '], weight_decay: '1_0e-3'}\n"
    "scheduler: {name: StepLR, step_size: '10', gamma: '.5e0'}\ntrain: {steps: '20.0'}\n",
    # the scheduler section as a name alone
    SGD + "scheduler: ConstantLR\n",
    SGD + "scheduler: constant_lr\n",
    # the other keys that name a component (NAME_KEYS)
    "optimizer: {type: AdamW, lr: 0.001}\nscheduler: {optimizer_type: StepLR, step_size: 3}\n",
    "optimizer: {name: Muon, param_groups: [{max_ndim: 1, optimizer: {type: AdamW}}]}\n",
])
def test_the_schema_takes_the_forms_validate_reads(text):
    """Each form `optreg validate` accepts (it reads it before validating: an application's keys are its own,
    OmegaConf resolves `${...}`, the cerebras dialect reads its scheduler forms, any NAME_KEYS key names a
    component) passes the schema as written."""
    from optreg.config.experiment import load_config

    load_config(text)
    doc = read_yaml(text)[0]
    assert not [e.message[:160] for e in VALIDATOR.iter_errors(doc)]


@pytest.mark.parametrize("text, bad_path", [
    (SGD + "Optimizer: {name: SGD}\n", "Optimizer"),                  # a near-miss of a section is no app's key
    (SGD + "schedular: {name: StepLR, step_size: 2}\n", "schedular"),
    ("optimizer: {name: SGD, lr: '0.1x'}\n", "optimizer.lr"),          # a string that is no interpolation
    ("optimizer: {name: SGD, lr: '-1e-3'}\n", "optimizer.lr"),         # nor a number in range
    (SGD + "scheduler: {name: StepLR, step_size: '1e1'}\n", "scheduler.step_size"),   # an integer's
    (SGD + "n: 3\nscheduler: {name: StepLR, step_size: '${n}', step_sise: 2}\n", "scheduler.step_sise"),
    (SGD + "scheduler: {LinearLR: {initial_learning_rate: 0.1, total_iter: 5}}\n", "scheduler.LinearLR.total_iter"),
    (SGD + "scheduler: [{LinearLR: {initial_learning_rate: 0.1, total_iters: 5}}, {LinearXX: {}}]\n",
     "scheduler.schedulers[1].LinearXX"),
    (SGD + "scheduler: {CosineDecayWD: {initial_val: 0.1, end_val: 0, total_iters: 3, base_lr: 1}}\n",
     "scheduler.CosineDecayWD.base_lr"),
    (SGD + "scheduler: {SequentialLR: {schedulers: []}}\n", "scheduler.SequentialLR.schedulers"),
    (SGD + "scheduler: {scheduler: Linearr, initial_learning_rate: 0.1, steps: 10}\n", "scheduler.scheduler"),
    (SGD + "scheduler: {scheduler: Constant, learning_rate: 0.1, gamma: 0.5}\n", "scheduler.gamma"),
    (SGD + "scheduler: StepLRR\n", "scheduler.name"),
    (SGD + "train: false\n", "train"),                                 # null is left out, false is no section
    (SGD + "scheduler: [ConstantLR]\n", "scheduler.schedulers[0]"),   # a name alone is no item of a list
    ("optimizer: {name: SGD, type: SGD, lr: 0.1}\n", "optimizer.type"),
    ("optimizer: {lr: 0.1}\n", "optimizer.name"),                     # no defaults: list completes it
    ("train: {steps: 3}\n", "optimizer"),
])
def test_what_validate_refuses_the_schema_refuses(text, bad_path):
    """Real errors beside the forms the schema now takes: both refuse them (validate at the path given)."""
    from optreg.config.experiment import load_config

    with pytest.raises(ConfigError) as exc:
        load_config(text)
    assert bad_path in [e.path for e in exc.value.errors]
    assert not VALIDATOR.is_valid(read_yaml(text)[0])


def test_the_schema_s_section_names_are_validate_s():
    """`near_miss_pattern` (the schema's propertyNames) takes exactly the keys `_near_miss` reads as a misspelt
    section, over every one- and two-letter edit of each section's name: the rest are an application's keys."""
    import re
    from optreg.config.experiment import TOP_KEYS, _near_miss, near_miss_pattern

    pattern = re.compile(near_miss_pattern())
    checked = 0
    for key in TOP_KEYS:
        once = {key[:i] + c + key[j:] for i in range(len(key) + 1) for j in (i, i + 1)
                for c in ("", "x", "S", key[0])}
        once |= {key[:i] + key[i + 1] + key[i] + key[i + 2:] for i in range(len(key) - 1)} | {key.upper()}
        for spelt in once | {a[:i] + "q" + a[i:] for a in once for i in (0, len(a) // 2, len(a))}:
            assert bool(pattern.search(spelt)) == (spelt in TOP_KEYS or _near_miss(spelt) is not None), spelt
            checked += 1
    assert checked > 1000


def test_cerebras_scheduler_keys_in_the_schema_are_the_ones_its_reader_takes():
    """The form's key patterns (cerebras.forms.schema) take exactly the class names `to_spec` reads, in the
    spellings `_norm` and `class_name` take (case, `_` and `-`, an `LR` dropped or doubled, the `WD` twin); a legacy
    item's `scheduler:` pattern the ones `class_name` alone takes (one `LR` dropped)."""
    import re
    from optreg.dialects.cerebras import forms

    form = SCHEMA["definitions"]["scheduler_form:cerebras:0"]["anyOf"][0]   # [1]: the legacy form
    patterns = [re.compile(p) for p in form["patternProperties"]]
    names = ["LinearLR", "Linear", "linear_lr", "LINEAR-LR", "LinearLRLR", "LinearLRLRLR", "LinearWD", "LinearLRWD",
             "linear_lr_wd_lr", "LinearWDWD", "LinearXLR", "CosineDecayLR", " cosine_decay ", "CosineDecayWD",
             "SequentialLR", "sequential", "ChainedScheduler", "chainedlr", "SequentialWD", "ScalePerParamLR", "LR"]
    for name in names:
        try:
            forms.to_spec({name: {"schedulers": [{"ConstantLR": {}}]} if forms._norm(name) in forms.COMBINATORS
                           else {}})
            read = True
        except ConfigError:
            read = False
        assert any(p.search(name) for p in patterns) == read, name
    legacy = [re.compile(own(item["properties"]["scheduler"])["pattern"])
              for item in SCHEMA["definitions"]["scheduler_form:cerebras:0"]["anyOf"][1]["anyOf"]]
    for name in ["Linear", "LinearLR", "linear_lr", "COSINE-DECAY", "LinearLRLR", "LinearWD", "Linearr", "LR"]:
        try:
            forms.to_spec({"scheduler": name})
            read = True
        except ConfigError:
            read = False
        assert any(p.search(name) for p in legacy) == read, name


@pytest.mark.parametrize("kind", ["number", "integer"])
def test_a_numeric_string_the_schema_takes_is_one_validation_reads_as_that_number(kind):
    """`json_schema._numeric_strings` against pydantic's parsing of the number types (core.types): every string
    the schema's pattern takes is read as a number, the usual spellings are taken."""
    import re
    from pydantic import TypeAdapter
    from optreg.core.types import Float, Int

    adapter = TypeAdapter(Float if kind == "number" else Int)
    pattern = re.compile(SCHEMA["definitions"][f"numeric_string:{kind}"]["pattern"])
    usual = ["1", "10", " 7 ", "+3", "-2", "1_000", "10.0"] + (["1e-3", ".5", "5.", "2.5E+3", "-0.1"]
                                                            if kind == "number" else [])
    unusual = ["", "x", "1x", "0x10", "1 0", "1__0", "_1", "e3", ".", "-", "nan", "inf", "1e", "1.5e", "${x}",
               "1e3", "10.5", "1.", "--1", "+-1"]
    for text in usual:
        assert pattern.search(text), text
        adapter.validate_python(text)
    for text in unusual:
        if pattern.search(text):
            adapter.validate_python(text)
