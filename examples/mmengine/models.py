"""A small convolutional model for `optreg groups examples/mmengine/swin_adamw.yaml --model
examples.mmengine.models:convnet`: a convolution, a BatchNorm, a depthwise convolution and a classifier, the module
types MMEngine's per-parameter settings tell apart."""

from torch import nn


def convnet() -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.Conv2d(8, 8, 3, groups=8), nn.Flatten(),
                         nn.Linear(8, 10))
