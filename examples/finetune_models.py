"""Two tiny models for the fine-tuning parameter-group examples (`optreg groups CONFIG --model MODULE:CALLABLE`).

- `tiny_vit`: ViT-style: patch_embed, cls_token, pos_embed, `blocks.{i}`, a final norm and a head, and timm's
  `no_weight_decay()` (pos_embed and cls_token). Config: examples/finetune_vit.yaml.
- `tiny_resnet`: ResNet-style: a stem, `layer1` / `layer2` of basic blocks with BatchNorm, an `fc` head; the stem
  is frozen (requires_grad=False), as when fine-tuning with early layers fixed. Config: examples/finetune_resnet.yaml.

    optreg groups examples/finetune_vit.yaml --model examples.finetune_models:tiny_vit
"""

from __future__ import annotations

import torch
from torch import nn


class Mlp(nn.Module):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


class Block(nn.Module):
    """A pre-norm transformer block (single-head attention)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, 2 * dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        attention = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1)
        x = x + self.proj(attention @ v)
        return x + self.mlp(self.norm2(x))


class TinyViT(nn.Module):
    """ViT-style: tokens from flattened patches, a cls token, learned positions, `depth` blocks, norm, head."""

    def __init__(self, patch_dim: int = 12, patches: int = 4, dim: int = 8, depth: int = 3, classes: int = 5) -> None:
        super().__init__()
        self.patch_embed = nn.Linear(patch_dim, dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, patches + 1, dim))
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def no_weight_decay(self) -> set[str]:
        """timm's convention: parameter names that take no weight decay whatever their shape."""
        return {"pos_embed", "cls_token"}

    def forward(self, patches: torch.Tensor) -> torch.Tensor:   # (batch, patches, patch_dim)
        x = self.patch_embed(patches)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x)[:, 0])


class BasicBlock(nn.Module):
    """ResNet's basic block: two 3x3 convolutions with BatchNorm, a 1x1 projection when the shape changes."""

    def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + (self.downsample(x) if self.downsample is not None else x))


class TinyResNet(nn.Module):
    """ResNet-style: a stem (conv1, bn1), layer1 and layer2 of basic blocks, global pooling, an fc head."""

    def __init__(self, width: int = 4, classes: int = 5) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.layer1 = nn.Sequential(BasicBlock(width, width))
        self.layer2 = nn.Sequential(BasicBlock(width, 2 * width, stride=2))
        self.fc = nn.Linear(2 * width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        return self.fc(x.mean(dim=(2, 3)))


def tiny_vit() -> TinyViT:
    """The ViT-style example model (seeded: the same weights every call)."""
    torch.manual_seed(0)
    return TinyViT()


def tiny_resnet(frozen_stem: bool = True) -> TinyResNet:
    """The ResNet-style example model; its stem (conv1, bn1) frozen unless frozen_stem=False."""
    torch.manual_seed(0)
    model = TinyResNet()
    for p in [*model.conv1.parameters(), *model.bn1.parameters()]:
        p.requires_grad_(not frozen_stem)
    return model
