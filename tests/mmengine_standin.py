"""The stand-in model of the MMEngine corpus: an mmpretrain-style classifier (backbone / head) small enough to record,
with the parameter names the corpus' custom_keys select (cls_token, pos_embed, absolute_pos_embed,
relative_position_bias_table, attention_biases) and every module type MMEngine's per-parameter rules tell apart
(BatchNorm, LayerNorm, GroupNorm, a depthwise Conv2d, Linear and Conv2d biases, 1-d parameters). Shared by
scripts/record_mmengine_configs.py and tests/test_mmengine_format.py: the gradients of each step are drawn here too."""

from __future__ import annotations

import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.relative_position_bias_table = nn.Parameter(torch.zeros(5, 2))
        self.attention_biases = nn.Parameter(torch.zeros(2, 3))


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim)
        self.norm2 = nn.GroupNorm(2, dim)
        self.ffn = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.gamma = nn.Parameter(torch.ones(dim))


class Backbone(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.conv1 = nn.Conv2d(3, dim, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(dim)
        self.dwconv = nn.Conv2d(dim, dim, 3, groups=dim)
        self.patch_embed = nn.Sequential(nn.Conv2d(3, dim, 2, stride=2))
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, 3, dim))
        self.absolute_pos_embed = nn.Parameter(torch.zeros(1, 2, dim))
        self.layers = nn.ModuleList([Block(dim), Block(dim)])
        self.norm = nn.LayerNorm(dim)


class Head(nn.Module):
    def __init__(self, dim: int, classes: int):
        super().__init__()
        self.fc = nn.Linear(dim, classes)


class StandIn(nn.Module):
    """backbone.{conv1, bn1, dwconv, patch_embed, cls_token, pos_embed, absolute_pos_embed, layers, norm}, head.fc."""

    def __init__(self, dim: int = 4, classes: int = 3):
        super().__init__()
        self.backbone = Backbone(dim)
        self.head = Head(dim, classes)


def model(seed: int = 0) -> StandIn:
    """The stand-in with weights drawn from `seed` (every parameter random, so that decay shows)."""
    torch.manual_seed(seed)
    m = StandIn()
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn_like(p))
    return m


def set_grads(m: nn.Module, step: int) -> None:
    """The gradients of optimizer step `step`: one normal draw per parameter, in named_parameters order."""
    g = torch.Generator().manual_seed(1000 + step)
    for _, p in m.named_parameters():
        p.grad = torch.randn(p.shape, generator=g)
