# A LiBai LazyConfig (what optreg reads of it: optim and train). optreg parses it; it never runs it.
import oneflow as flow
from libai.config import LazyCall
from libai.optim import get_default_optimizer_params
from libai.scheduler import WarmupCosineLR

optim = LazyCall(flow.optim.AdamW)(
    params=LazyCall(get_default_optimizer_params)(
        clip_grad_max_norm=1.0,
        clip_grad_norm_type=2.0,
        weight_decay_norm=0.0,
        weight_decay_bias=0.0,
    ),
    lr=5e-4,
    weight_decay=0.05,
    betas=(0.9, 0.999),
    eps=1e-8,
)

train = dict(
    train_iter=2000,
    warmup_ratio=0.05,
    train_micro_batch_size=64,
    scheduler=LazyCall(WarmupCosineLR)(warmup_factor=0.001, alpha=0.01, warmup_method="linear"),
)
train["train_iter"] = 3000
