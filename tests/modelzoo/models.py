"""Tiny stand-in models for the Model Zoo corpus (plain torch only).

A Model Zoo config groups parameters by their names and by the modules that hold them: bias
parameters and the parameters of normalisation modules get weight decay 0, muP configs scale the
learning rate of the parameters whose names match a model's lr-adjustment globs, and tagged
`params` rules match name globs. A replay therefore needs a model with the names the real model
would have, not its size. `build(config)` makes that model from the config's `model:` section:

- the family comes from `model.name` (or the legacy `model_name`), else from the provenance line
  (`.../<family>/configs/...`); `FAMILY_OF` maps Model Zoo model names onto the layouts below;
- the layout copies Model Zoo's parameter names (`model.embedding_layer.word_embeddings.weight`,
  `model.transformer_decoder.layers.0.self_attn.proj_q_dense_layer.weight`, `...norm1.weight`,
  `...ffn.ffn.0.linear_layer.weight`, `model.ln_f.weight`, `model.lm_head.weight`, ...) with two
  layers (DINO: 24, as its tagged rules name layers 0-23), hidden size 4 and filter size 8;
- the config's switches that change the set of names are honoured: `norm_type` (layernorm or
  rmsnorm), `position_embedding_type` (a learned table only for `learned`), `share_embedding_weights`
  (the lm head shares the word embedding), `use_projection_bias_in_attention`,
  `use_ffn_bias_in_attention`, `use_ffn_bias`, `use_bias_in_output` (defaults as in Model Zoo's
  GPT-2 config), and `freeze` (regexes searched in leaf module names, then in parameter names;
  matches get requires_grad False, as Model Zoo's `freeze_modules` does);
- fine-tuning and other heads (bert/classifier, bert/extractive_summarization, bert/token_classifier,
  dpr, dit, multimodal_simple, the DINOv2 linear evaluation of vision_transformer) copy the names of
  Model Zoo 2.10's own modules, including parameters the model itself keeps frozen (DiT's fixed
  position and timestep tables, its diffusion constants) and norm modules without parameters (DiT's
  adaptive norms); where a config's `freeze` regexes name the model's inner tree (`^vit_model`,
  `^image_model.image_model_list`), the names are those of that inner model, as the regexes see them;
- `RMSNorm` here is a plain module; `build(..., rmsnorm_cls=...)` lets a caller substitute another
  class with the same (hidden_size, eps) signature and a `weight` parameter;
- the stand-in carries no muP `lr_adjustment_groups`: a replay takes them from the config's `model:`
  section, as a plain torch model with Model Zoo's names must; the recorder gives the stand-in those
  of Model Zoo's own model (scripts/record_modelzoo.py).

Weights and gradients come from numpy (`init_weights`, `gradient`), so two implementations that
replay a fixture start from the same float32 weights and see the same gradients.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

import numpy as np
import torch
from torch import nn

HIDDEN = 4
FILTER = 8
VOCAB = 8
POSITIONS = 4
SEED = 1234

FAMILY_OF = {
    "gpt2": "gpt", "gpt3": "gpt", "gptj": "gpt", "gpt_neox": "gpt", "llama": "gpt", "mistral": "gpt",
    "falcon": "gpt", "bloom": "gpt", "btlm": "gpt", "dpo": "gpt", "jais": "gpt", "mixtral": "moe",
    "bert": "bert", "esm2": "esm2", "t5": "t5", "vision_transformer": "vit", "vit": "vit",
    "dino": "dino", "llava": "llava", "fc_mnist": "fc_mnist", "gemma2": "gpt", "transformer": "t5",
    "santacoder": "gpt", "starcoder": "gpt", "bert/classifier": "bert_classifier",
    "bert/extractive_summarization": "bert_summarization", "bert/token_classifier": "bert_summarization",
    "dpr": "dpr", "dit": "dit", "multimodal_simple": "mm_simple",
}

GPT_DEFAULTS = {"norm_type": "layernorm", "position_embedding_type": "learned", "share_embedding_weights": True,
                "use_projection_bias_in_attention": True, "use_ffn_bias_in_attention": True, "use_ffn_bias": True,
                "use_bias_in_output": False}


class RMSNorm(nn.Module):
    """A normalisation module with a single `weight` (the shape of Model Zoo's RMSNorm)."""

    def __init__(self, hidden_size: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps


class Container(nn.Module):
    """A named node of the stand-in tree."""


def _node(root: nn.Module, path: str) -> nn.Module:
    node = root
    for part in path.split("."):
        if not hasattr(node, part):
            setattr(node, part, Container())
        node = getattr(node, part)
    return node


def _put(root: nn.Module, path: str, module: nn.Module) -> None:
    parent, _, leaf = path.rpartition(".")
    setattr(_node(root, parent) if parent else root, leaf, module)


def _param(root: nn.Module, path: str, shape: tuple[int, ...], trainable: bool = True) -> None:
    parent, _, leaf = path.rpartition(".")
    setattr(_node(root, parent), leaf, nn.Parameter(torch.zeros(shape), requires_grad=trainable))


class Builder:
    def __init__(self, opts: Mapping[str, Any], rmsnorm_cls: type):
        self.opts = {**GPT_DEFAULTS, **{k: v for k, v in opts.items() if v is not None}}
        self.rmsnorm_cls = rmsnorm_cls
        self.root = Container()

    def norm(self, path: str) -> None:
        rms = str(self.opts.get("norm_type", "layernorm")).lower() == "rmsnorm"
        _put(self.root, path, self.rmsnorm_cls(HIDDEN, 1e-6) if rms else nn.LayerNorm(HIDDEN))

    def linear(self, path: str, n_in: int, n_out: int, bias: bool) -> None:
        _put(self.root, path, nn.Linear(n_in, n_out, bias=bool(bias)))

    def embedding(self, path: str, n: int) -> None:
        _put(self.root, path, nn.Embedding(n, HIDDEN))

    def attention(self, path: str) -> None:
        o = self.opts
        for p in ("q", "k", "v"):
            self.linear(f"{path}.proj_{p}_dense_layer", HIDDEN, HIDDEN, o["use_projection_bias_in_attention"])
        self.linear(f"{path}.proj_output_dense_layer", HIDDEN, HIDDEN, o["use_ffn_bias_in_attention"])

    def ffn(self, path: str) -> None:
        self.linear(f"{path}.ffn.0.linear_layer", HIDDEN, FILTER, self.opts["use_ffn_bias"])
        self.linear(f"{path}.ffn.1.linear_layer", FILTER, HIDDEN, self.opts["use_ffn_bias"])

    def lm_head(self, path: str, embedding: str) -> None:
        self.linear(path, HIDDEN, VOCAB, self.opts["use_bias_in_output"])
        if self.opts["share_embedding_weights"]:
            _node(self.root, path).weight = _node(self.root, embedding).weight

    def decoder(self, prefix: str, layers: int = 2, moe: bool = False, cross: bool = False) -> None:
        for i in range(layers):
            layer = f"{prefix}.layers.{i}"
            self.attention(f"{layer}.self_attn")
            self.norm(f"{layer}.norm1")
            if cross:
                self.attention(f"{layer}.multihead_attn")
                self.norm(f"{layer}.norm2")
            self.norm(f"{layer}.norm3")
            if moe:
                self.linear(f"{layer}.ffn.gate.gate", HIDDEN, 2, False)
                for e in range(2):
                    self.ffn(f"{layer}.ffn.experts.experts.{e}")
            else:
                self.ffn(f"{layer}.ffn")

    def encoder(self, prefix: str, layers: int = 2) -> None:
        for i in range(layers):
            layer = f"{prefix}.layers.{i}"
            self.attention(f"{layer}.self_attn")
            self.norm(f"{layer}.norm1")
            self.norm(f"{layer}.norm2")
            self.ffn(f"{layer}.ffn")


def _gpt(b: Builder, moe: bool = False, prefix: str = "model") -> None:
    b.embedding(f"{prefix}.embedding_layer.word_embeddings", VOCAB)
    if str(b.opts["position_embedding_type"]).lower() == "learned":
        b.embedding(f"{prefix}.embedding_layer.position_embeddings.embed", POSITIONS)
    b.decoder(f"{prefix}.transformer_decoder", moe=moe)
    b.norm(f"{prefix}.ln_f")
    b.lm_head(f"{prefix}.lm_head", f"{prefix}.embedding_layer.word_embeddings")


def _bert(b: Builder, prefix: str = "bert") -> None:
    b.embedding(f"{prefix}.embedding_layer.word_embeddings", VOCAB)
    if str(b.opts["position_embedding_type"]).lower() == "learned":
        b.embedding(f"{prefix}.embedding_layer.position_embeddings.embed", POSITIONS)
    if prefix == "bert":
        b.embedding(f"{prefix}.embedding_layer.segment_embeddings", 2)
        b.norm(f"{prefix}.embedding_layer.embed_ln")
    b.encoder(f"{prefix}.transformer_encoder")
    if prefix == "bert":
        b.linear(f"{prefix}.pooler.pooler.ffn.0.linear_layer", HIDDEN, HIDDEN, True)
    else:
        b.norm(f"{prefix}.transformer_encoder.norm")
    b.linear("cls.predictions.transform.ffn.ffn.0.linear_layer", HIDDEN, HIDDEN, True)
    b.norm("cls.predictions.transform.layer_norm")
    b.lm_head("cls.predictions.decoder", f"{prefix}.embedding_layer.word_embeddings")


def _t5(b: Builder) -> None:
    b.opts.setdefault("use_ffn_bias", False)
    b.embedding("model.encoder_embeddings.word_embeddings", VOCAB)
    b.embedding("model.decoder_embeddings.word_embeddings", VOCAB)
    _node(b.root, "model.decoder_embeddings.word_embeddings").weight = \
        _node(b.root, "model.encoder_embeddings.word_embeddings").weight
    b.embedding("model.relative_position_encoder.relative_attention_bias", 4)
    b.encoder("model.encoder.transformer_encoder")
    b.norm("model.encoder.final_layer_norm")
    b.decoder("model.decoder.transformer_decoder", cross=True)
    b.norm("model.decoder.final_layer_norm")
    b.lm_head("model.lm_head", "model.encoder_embeddings.word_embeddings")


def _vit_trunk(b: Builder, prefix: str, layers: int, dino: bool, post_embed_ln: bool = False,
               layer_scale: bool = False) -> None:
    b.linear(f"{prefix}.embedding_layer.linear_proj", 3, HIDDEN, True)
    _param(b.root, f"{prefix}.embedding_layer.cls_embedding", (HIDDEN,))
    b.embedding(f"{prefix}.embedding_layer.position_embeddings", POSITIONS)
    if dino:
        _param(b.root, f"{prefix}.embedding_layer.mask_token", (HIDDEN,))
    if post_embed_ln:
        b.norm(f"{prefix}.embedding_layer.post_embed_ln")
    b.encoder(f"{prefix}.encoder.transformer_encoder", layers=layers)
    if layer_scale:   # DINOv2's LayerScale: bare 1-d parameters of each layer (weight decay applies)
        for i in range(layers):
            for k in (1, 2):
                _param(b.root, f"{prefix}.encoder.transformer_encoder.layers.{i}.layer_scale{k}", (HIDDEN,))
    b.norm(f"{prefix}.encoder.transformer_encoder.norm")


def _vit(b: Builder) -> None:
    if "freeze" in b.opts:   # DINOv2 linear evaluation: ViTClassificationModel's own names, which its regexes name
        _vit_trunk(b, "vit_model", 2, dino=False, layer_scale=True)
        b.linear("classifier.classifier.ffn.0.linear_layer", 2 * HIDDEN, 3, True)
        return
    _vit_trunk(b, "model.ViTModel", 2, dino=False)
    b.norm("model.ViTModel.pooler.norm")
    b.linear("model.classifier.classifier.ffn.0.linear_layer", HIDDEN, 3, True)


def _dino(b: Builder) -> None:
    for t in range(2):
        _vit_trunk(b, f"image_model_trunks.model.{t}.image_model", 24, dino=True)
    for h in range(3):
        b.linear(f"heads.model.{h}.mlp.ffn.0.linear_layer", HIDDEN, FILTER, True)
        b.linear(f"heads.model.{h}.mlp.ffn.1.linear_layer", FILTER, HIDDEN, True)
        b.linear(f"heads.model.{h}.last_layer", HIDDEN, 3, False)


def _llava(b: Builder) -> None:
    b.opts.update(norm_type="layernorm", position_embedding_type="learned", use_ffn_bias=True)
    _vit_trunk(b, "image_model.image_model_list.0", 2, dino=False)
    b.linear("projector_image_model.ffn.0.linear_layer", HIDDEN, FILTER, True)
    b.linear("projector_image_model.ffn.1.linear_layer", FILTER, HIDDEN, True)
    b.opts.update(norm_type="rmsnorm", position_embedding_type="rotary", share_embedding_weights=False,
                  use_projection_bias_in_attention=False, use_ffn_bias_in_attention=False, use_ffn_bias=False)
    _gpt(b, prefix="text_model")


def _bert_encoder(b: Builder, prefix: str, pooler: bool) -> None:
    """BertModel as the fine-tuning heads and DPR hold it (`embed_ln_f`, no MLM head)."""
    b.embedding(f"{prefix}.embedding_layer.word_embeddings", VOCAB)
    b.embedding(f"{prefix}.embedding_layer.position_embeddings.embed", POSITIONS)
    b.embedding(f"{prefix}.embedding_layer.segment_embeddings", 2)
    b.norm(f"{prefix}.embed_ln_f")
    b.encoder(f"{prefix}.transformer_encoder")
    if pooler:
        b.linear(f"{prefix}.pooler.pooler.ffn.0.linear_layer", HIDDEN, HIDDEN, True)


def _bert_head(b: Builder, pooler: bool) -> None:
    """BertForSequenceClassification (pooler) and BertForSummarization / BertForTokenClassification."""
    _bert_encoder(b, "model.bert", pooler)
    b.linear("model.classifier", HIDDEN, 3, True)


def _dpr(b: Builder) -> None:
    for encoder in ("question_encoder", "ctx_encoder"):
        _bert_encoder(b, f"model.{encoder}", pooler=False)


def _ada_norm(b: Builder, path: str) -> None:
    """DiT's adaptive layer norm: an affine-free LayerNorm beside SiLU + Linear scale and shift."""
    _put(b.root, f"{path}.layernorm", nn.LayerNorm(HIDDEN, elementwise_affine=False))
    for part in ("scale_linear", "shift_linear"):
        _put(b.root, f"{path}.{part}", nn.Sequential(nn.SiLU(), nn.Linear(HIDDEN, HIDDEN)))


def _dit(b: Builder) -> None:
    """DiT: frozen fixed position / timestep tables and diffusion constants; adaptive norms, gated residuals."""
    _param(b.root, "model.patch_embedding_layer.position_embeddings", (POSITIONS, HIDDEN), trainable=False)
    _put(b.root, "model.patch_embedding_layer.linear_proj", nn.Conv2d(2, HIDDEN, 2, 2))
    _param(b.root, "model.timestep_embedding_layer.timestep_embedding", (VOCAB, FILTER), trainable=False)
    b.linear("model.timestep_embedding_layer.ffn.ffn.0.linear_layer", FILTER, HIDDEN, True)
    b.linear("model.timestep_embedding_layer.ffn.ffn.1.linear_layer", HIDDEN, HIDDEN, True)
    b.embedding("model.label_embedding_layer", VOCAB)
    for i in range(2):
        layer = f"model.transformer_decoder.layers.{i}"
        b.attention(f"{layer}.self_attn")
        _ada_norm(b, f"{layer}.norm1")
        _ada_norm(b, f"{layer}.norm3")
        b.ffn(f"{layer}.ffn")
        for gate in ("gate_msa", "gate_mlp"):
            _put(b.root, f"{layer}.{gate}", nn.Sequential(nn.SiLU(), nn.Linear(HIDDEN, HIDDEN)))
    _put(b.root, "model.noise_head.conv_transpose", nn.ConvTranspose2d(HIDDEN, 2, 2, 2))
    _ada_norm(b, "model.final_norm")
    for table in ("sqrt_alphas_cum_prod", "sqrt_one_minus_alphas_cum_prod"):
        _param(b.root, f"model.gaussian_diffusion.{table}", (VOCAB,), trainable=False)


def _mm_simple(b: Builder) -> None:
    """MMSimple (LLaVA on Model Zoo's multimodal_simple): MMSimpleModel's own names, which its freeze regexes name."""
    b.opts.update(norm_type="layernorm", position_embedding_type="learned", use_ffn_bias=True)
    _vit_trunk(b, "image_model.image_model_list.0.0", 2, dino=False, post_embed_ln=True)
    b.linear("image_model.projection.ffn.0.linear_layer", HIDDEN, FILTER, True)
    b.linear("image_model.projection.ffn.1.linear_layer", FILTER, HIDDEN, True)
    b.opts.update(norm_type="rmsnorm", position_embedding_type="rotary", share_embedding_weights=False,
                  use_projection_bias_in_attention=False, use_ffn_bias_in_attention=False, use_ffn_bias=False)
    _gpt(b, prefix="text_model")
    for i in range(2):   # the gated (GLU) input projection of Llama's ffn
        b.linear(f"text_model.transformer_decoder.layers.{i}.ffn.ffn.0.linear_layer_for_glu", HIDDEN, FILTER, False)


def _fc_mnist(b: Builder) -> None:
    sizes = b.opts.get("hidden_sizes") or [b.opts.get("hidden_size", 10)] * int(b.opts.get("depth", 2))
    use_bias = b.opts.get("use_bias", True)
    n_in = 6
    for i, _ in enumerate(sizes):
        b.linear(f"model.fc_layers.{i}", n_in, HIDDEN, use_bias)
        n_in = HIDDEN
    b.linear("model.last_layer", n_in, 3, use_bias)


LAYOUTS = {"gpt": _gpt, "moe": lambda b: _gpt(b, moe=True), "bert": _bert, "esm2": lambda b: _bert(b, "esm2"),
           "t5": _t5, "vit": _vit, "dino": _dino, "llava": _llava, "fc_mnist": _fc_mnist,
           "bert_classifier": lambda b: _bert_head(b, pooler=True),
           "bert_summarization": lambda b: _bert_head(b, pooler=False), "dpr": _dpr, "dit": _dit,
           "mm_simple": _mm_simple}


def model_section(config: Mapping[str, Any]) -> dict:
    """The `model:` mapping of a legacy or trainer-form config (first phase of a multi-phase one)."""
    if "trainer" in config:
        trainer = config["trainer"]
        if isinstance(trainer, list):
            trainer = trainer[0]["trainer"]
        return dict(trainer["init"]["model"])
    return dict(config.get("model") or {})


def family_dir(provenance: str) -> str:
    """The model directory of a config's provenance (`.../<model>/configs/...`): Model Zoo's name of its model."""
    match = re.search(r"/([a-z0-9_]+)/(?:pytorch/)?configs/", provenance)
    return match.group(1) if match else ""


def family(config: Mapping[str, Any], provenance: str = "") -> str:
    model = model_section(config)
    name = model.get("name") or model.get("model_name") or family_dir(provenance)
    if name not in FAMILY_OF:
        raise KeyError(f"no stand-in layout for model {name!r}")
    return FAMILY_OF[name]


def build(config: Mapping[str, Any], provenance: str = "", rmsnorm_cls: type = RMSNorm) -> nn.Module:
    """The stand-in for a config (its whole mapping, as loaded from YAML) with numpy-seeded weights."""
    opts = model_section(config)
    fam = family(config, provenance)
    b = Builder(opts, rmsnorm_cls)
    LAYOUTS[fam](b)
    model = b.root
    freeze(model, opts.get("freeze") or [])
    init_weights(model)
    return model


def freeze(model: nn.Module, patterns: list[str]) -> None:
    """Model Zoo's `freeze_modules`: each regex freezes the leaf modules whose names it searches, then the
    parameters whose names it searches (those held by non-leaf modules: class tokens, layer scales)."""
    leaves = [(n, m) for n, m in model.named_modules() if not next(m.children(), False)]
    for pattern in map(re.compile, patterns):
        hits = [m for n, m in leaves if pattern.search(n)]
        if not hits:
            raise ValueError(f"{pattern} did not match any module names!")
        for m in hits:
            m.requires_grad_(False)
        for n, p in model.named_parameters():
            if pattern.search(n):
                p.requires_grad_(False)


def init_weights(model: nn.Module, seed: int = SEED) -> None:
    """float32 weights drawn in `named_parameters()` order from one numpy generator."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in model.named_parameters():
            p.data = torch.from_numpy(rng.uniform(-1.0, 1.0, tuple(p.shape)).astype(np.float32))


def gradient(name: str, shape: tuple[int, ...], step: int, seed: int = SEED) -> np.ndarray:
    """The float32 gradient of parameter `name` at optimizer step `step` (1-based)."""
    key = [seed, step, *name.encode()]
    return np.random.default_rng(key).standard_normal(shape).astype(np.float32)
