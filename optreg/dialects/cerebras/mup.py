"""The muP lr-adjustment groups of a Model Zoo model, from the config's `model:` section, as Model Zoo 2.10 sets them.

Model Zoo's optimizer grouping (`configure_param_groups`) scales the lr of the parameters in the model's
`lr_adjustment_groups` (name -> glob patterns and a scale). From release 2.4 on, muP configs no longer write the
scales into the optimizer's `adjust_learning_rate`; the model computes them from its `model:` keys when it is built.
A plain torch model with Model Zoo's parameter names carries no such groups, so the reader computes them here, as
the model classes of Model Zoo 2.10 (Release_2.10.0) do:

- GPT-2 family (`GPT2LMHeadModel`: gpt2, gpt3, btlm, jais, llama, mistral, mixtral, bloom, gemma2, santacoder,
  starcoder), with w = hidden_size / mup_base_hidden_size and f = filter_size / mup_base_filter_size:
  decoder_attention = decoder_input_ffn = 1/w, decoder_output_ffn = 1/f (groups: embedding, decoder_kernel,
  decoder_attention, decoder_input_ffn, decoder_output_ffn; `model.lr_adjustment_groups` replaces them);
- GPT-J family (gptj, gpt-neox, falcon): the same rule on embedding, decoder_attention, decoder_input_ffn,
  decoder_output_ffn;
- BERT (bert, esm2): encoder_attention = encoder_input_ffn = pooler = 1/w, encoder_output_ffn = 1/f (groups:
  `model.lr_adjustment_groups`, by default embedding, encoder_attention, encoder_input_ffn, encoder_output_ffn,
  pooler);
- T5 (t5, transformer), unless use_transformer_initialization, with m = d_model / mup_base_d_model:
  embedding = lm_head = 1/sqrt(m); encoder/decoder_input_ffn = 1/m; with mup_base_d_kv the qkv projections 1/m and
  the output projections mup_base_d_kv / d_kv, else all four projection groups 1/sqrt(m); and with mup_base_d_ff
  (even without mup_base_d_model) encoder/decoder_output_ffn = mup_base_d_ff / d_ff.

A scale is computed with Python floats in Model Zoo's order of operations (1 / (h / b), not b / h), so it is the
same double. Keys that muP uses elsewhere (embeddings_scale, output_logits_alpha, scale_output_logits_by_d,
scale_qk_dot_by_d, attention_logits_alpha, initializers) change the forward pass or the initial weights, not the
optimizer, and are not read here. Other models (vision, multimodal, dpo, fc_mnist) carry no groups: Model Zoo then
uses its default groups (optimizer grouping's `DEFAULT_LR_GROUPS`).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from optreg.core.models import number_message
from optreg.core.types import MAX_INT
from optreg.errors import Collector, ConfigError, join_path, key_text, show

Groups = dict[str, tuple[list[str], float]]   # name -> (glob patterns, scale), in the model's order

_EXPERTS = "*expert_weights"
GPT2_GROUPS: dict[str, list[str]] = {
    "embedding": ["*embedding*weight"],
    "decoder_kernel": ["*decoder*dense*weight", "*decoder*linear*weight", "*decoder*linear" + _EXPERTS],
    "decoder_attention": ["*decoder*attn*dense*weight"],
    "decoder_input_ffn": ["*decoder*ffn.ffn.[!1]*weight", "*decoder*ffn.ffn.[!1]" + _EXPERTS],
    "decoder_output_ffn": ["*decoder*ffn.ffn.[1]*weight", "*decoder*ffn.ffn.[1]" + _EXPERTS],
}
GPTJ_GROUPS = {k: v for k, v in GPT2_GROUPS.items() if k != "decoder_kernel"}
BERT_GROUPS: dict[str, list[str]] = {
    "embedding": ["*embedding*weight"],
    "encoder_attention": ["*transformer_encoder*attn*dense*weight"],
    "encoder_input_ffn": ["*transformer_encoder*ffn.ffn.[!1]*weight"],
    "encoder_output_ffn": ["*transformer_encoder*ffn.ffn.[1]*weight"],
    "pooler": ["*pooler*weight"],
}


def _t5_groups() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"embedding": ["*embedding*weight"]}
    for side in ("decoder", "encoder"):
        out[f"{side}_qkv_projection"] = [f"*{side}*attn.proj_{p}*dense*weight" for p in "qkv"]
        out[f"{side}_output_projection"] = [f"*{side}*attn.proj_output*dense*weight"]
        out[f"{side}_input_ffn"] = [f"*{side}*ffn.ffn.[!1]*weight"]
        out[f"{side}_output_ffn"] = [f"*{side}*ffn.ffn.[1]*weight"]
    out["lm_head"] = ["*lm_head*weight"]
    return out


T5_GROUPS = _t5_groups()


def scale_message(value: Any) -> str | None:
    """What is wrong with `value` as an lr adjustment group's scale (`adjust_learning_rate`, the group key's type:
    a finite number >= 0 within MAX_FLOAT), in the own form's words; None when nothing is."""
    from optreg.core.build import group_key
    from optreg.core.options import CEREBRAS_GROUP_KEYS

    try:
        group_key(CEREBRAS_GROUP_KEYS["adjust_learning_rate"], value, "")
    except ConfigError as exc:
        return exc.errors[0].message
    return None


def _number(model: Mapping[str, Any], key: str, default: float | None, path: str, errors: Collector) -> float | None:
    """A width of the model (a count of units, >= 1; a muP base may be fractional): the ratios of two stay within
    float range."""
    value = model.get(key, default)
    if value is None:
        return None
    wrong = number_message(value, 1, finite=True, high=MAX_INT)
    if wrong is not None:
        errors.add(join_path(path, key), wrong)
        return None
    return value


def _width_scales(attention: tuple[str, ...], output_ffn: str) -> Callable[..., dict[str, float]]:
    """The GPT-2 / GPT-J / BERT rule: the attention and input-ffn groups 1/w, the output ffn 1/f."""

    def scales(model: Mapping[str, Any], path: str, errors: Collector) -> dict[str, float]:
        out: dict[str, float] = {}
        base_h = _number(model, "mup_base_hidden_size", None, path, errors)
        base_f = _number(model, "mup_base_filter_size", None, path, errors)
        if base_h:
            hidden = _number(model, "hidden_size", 768, path, errors)
            if hidden:
                out.update(dict.fromkeys(attention, 1 / (hidden / base_h)))
        if base_f:
            filt = _number(model, "filter_size", 3072, path, errors)
            if filt:
                out[output_ffn] = 1 / (filt / base_f)
        return out

    return scales


def _t5_scales(model: Mapping[str, Any], path: str, errors: Collector) -> dict[str, float]:
    out: dict[str, float] = {}
    if model.get("use_transformer_initialization", False):
        return out
    base_m = _number(model, "mup_base_d_model", None, path, errors)
    base_kv = _number(model, "mup_base_d_kv", None, path, errors)
    base_ff = _number(model, "mup_base_d_ff", None, path, errors)
    if base_m:
        d_model = _number(model, "d_model", 512, path, errors)
        if d_model:
            m = d_model / base_m
            out.update(dict.fromkeys(("embedding", "lm_head"), 1 / m ** 0.5))
            out.update(dict.fromkeys(("decoder_input_ffn", "encoder_input_ffn"), 1 / m))
            projections = ("decoder_qkv_projection", "encoder_qkv_projection")
            outputs = ("decoder_output_projection", "encoder_output_projection")
            if base_kv:
                d_kv = _number(model, "d_kv", 64, path, errors)
                out.update(dict.fromkeys(projections, 1 / m))
                if d_kv:
                    out.update(dict.fromkeys(outputs, base_kv / d_kv))
            else:
                out.update(dict.fromkeys(projections + outputs, 1 / m ** 0.5))
    if base_ff:
        d_ff = _number(model, "d_ff", 2048, path, errors)
        if d_ff:
            out.update(dict.fromkeys(("encoder_output_ffn", "decoder_output_ffn"), base_ff / d_ff))
    return out


#: architecture -> (its default groups, whether `model.lr_adjustment_groups` replaces them, the scale rule)
ARCHITECTURES: dict[str, tuple[dict[str, list[str]], bool, Callable[..., dict[str, float]]]] = {
    "gpt2": (GPT2_GROUPS, True, _width_scales(("decoder_attention", "decoder_input_ffn"), "decoder_output_ffn")),
    "gptj": (GPTJ_GROUPS, False, _width_scales(("decoder_attention", "decoder_input_ffn"), "decoder_output_ffn")),
    "bert": (BERT_GROUPS, True, _width_scales(("encoder_attention", "encoder_input_ffn", "pooler"),
                                              "encoder_output_ffn")),
    "t5": (T5_GROUPS, False, _t5_scales),
}
#: Model Zoo 2.10's registered model names (`model.name`) -> architecture
MODELS = {
    **dict.fromkeys(("gpt2", "GPT2LMHeadModel", "gpt3", "btlm", "jais", "llama", "LlamaModel", "mistral", "mixtral",
                     "bloom", "gemma2", "santacoder", "starcoder"), "gpt2"),
    **dict.fromkeys(("gptj", "gpt-neox", "falcon"), "gptj"),
    **dict.fromkeys(("bert", "esm2"), "bert"),
    **dict.fromkeys(("t5", "T5ForConditionalGeneration", "transformer"), "t5"),
}
MUP_KEYS = ("mup_base_hidden_size", "mup_base_filter_size", "mup_base_d_model", "mup_base_d_kv", "mup_base_d_ff")
_WIDTH_READS = {"mup_base_hidden_size": None, "hidden_size": "mup_base_hidden_size", "mup_base_filter_size": None,
                "filter_size": "mup_base_filter_size"}
#: architecture -> {the `model:` key its scale rule and groups read: the key that must be set for it to be read}
READS: dict[str, dict[str, str | None]] = {
    "gpt2": {**_WIDTH_READS, "lr_adjustment_groups": None},
    "gptj": _WIDTH_READS,
    "bert": {**_WIDTH_READS, "lr_adjustment_groups": None},
    "t5": {"mup_base_d_model": None, "d_model": "mup_base_d_model", "mup_base_d_kv": "mup_base_d_model",
           "d_kv": "mup_base_d_kv", "mup_base_d_ff": None, "d_ff": "mup_base_d_ff",
           "use_transformer_initialization": None},
}


def _given_groups(raw: Any, path: str, errors: Collector) -> Groups:
    """`model.lr_adjustment_groups`: name -> a glob, a list of globs, or {param_filter_patterns, scale} (the
    fields of Model Zoo's LRAdjustmentGroup; scale 1 by default)."""
    if not isinstance(raw, Mapping):
        errors.add(path, f"expected a mapping of group names to glob patterns, got {show(raw)}")
        return {}
    out: Groups = {}
    for name, value in raw.items():
        here = join_path(path, key_text(name))
        patterns = value.get("param_filter_patterns") if isinstance(value, Mapping) else value
        patterns = [patterns] if isinstance(patterns, str) else patterns
        scale = value.get("scale", 1.0) if isinstance(value, Mapping) else 1.0
        if not isinstance(patterns, (list, tuple)) or not all(isinstance(p, str) for p in patterns):
            errors.add(here, f"expected a glob pattern or a list of them, got {show(value)}")
        elif scale is not None and (wrong := scale_message(scale)) is not None:
            errors.add(join_path(here, "scale"), wrong)
        else:
            out[str(name)] = (list(patterns), float(1.0 if scale is None else scale))
    return out


def model_key_uses(model: Mapping[str, Any] | None, path: str) -> list:
    """What the reader does with each key of the `model:` section (KeyUse, for Experiment.report): the model's name
    and the keys its muP rule reads are used (when the section sets a muP base or its own lr_adjustment_groups);
    every other key (and every key of a model without muP) builds the model, the trainer's business."""
    from optreg.config.formats import KeyUse

    if not isinstance(model, Mapping):
        return []
    name = model.get("name", model.get("model_name"))
    arch = MODELS.get(name) if isinstance(name, str) else None
    given = lambda key: model.get(key) is not None
    reads = {k for k, needs in READS.get(arch, {}).items() if given(k) and (needs is None or given(needs))}
    if not any(k in reads for k in (*MUP_KEYS, "lr_adjustment_groups")):
        reads = set()
    uses = []
    for key in model:
        here = join_path(path, key_text(key))
        if reads and key in ("name", "model_name"):
            uses.append(KeyUse(here, "exact", f"the {arch} family's muP lr adjustment groups"))
        elif key in reads:
            uses.append(KeyUse(here, "exact", "the muP lr adjustment of the parameter groups"))
        else:
            uses.append(KeyUse(here, "trainer", "the model's construction (Model Zoo's model class)"))
    return uses


def lr_adjustment_groups(model: Mapping[str, Any] | None, path: str, errors: Collector) -> Groups | None:
    """The lr-adjustment groups Model Zoo 2.10's model of this `model:` section carries (see the module docstring);
    None for a model that carries none (and for no section). Problems go to `errors` with their paths."""
    if not isinstance(model, Mapping):
        return None
    name = model.get("name", model.get("model_name"))
    if name is None:
        muped = [k for k in MUP_KEYS if model.get(k) is not None]
        if muped:
            errors.add(join_path(path, "name"), f"required with {', '.join(muped)}: the model's name, which decides "
                                                f"the muP lr adjustment groups (Model Zoo 2.10: one of "
                                                f"{', '.join(sorted(MODELS))}; other models carry none)")
        return None
    arch = MODELS.get(name) if isinstance(name, str) else None
    if arch is None:
        return None
    defaults, replaceable, rule = ARCHITECTURES[arch]
    groups: Groups = {g: (list(p), 1.0) for g, p in defaults.items()}
    if replaceable and model.get("lr_adjustment_groups") is not None:
        groups = _given_groups(model["lr_adjustment_groups"], join_path(path, "lr_adjustment_groups"), errors)
    for group, scale in rule(model, path, errors).items():
        if group not in groups:
            errors.add(join_path(path, "lr_adjustment_groups"), f"muP scales the group {group!r}, which "
                                                                f"lr_adjustment_groups does not define")
        else:
            groups[group] = (groups[group][0], float(scale))
    return groups
