"""The deepspeed dialect's optimizer rows: DeepSpeed's own kernels whose update no other dialect's row computes
(the others a ds_config names are torch's, read by the `deepspeed` config format). Targets are strings, so that
reading the registry imports no torch."""

from __future__ import annotations

from optreg.core.entry import optimizer

DEFAULTS = "Defaults lr = 1e-3, betas = (0.9, 0.999), weight_decay = 0, as DeepSpeedCPULion and FusedLion."

ROWS = [
    optimizer(
        "deepspeed", "Lion", "optreg.dialects.deepspeed.lion:Lion",
        "Lion: c = β1·m + (1-β1)·g; w = w·(1 - lr·wd) - copysign(lr, c); m = β2·m + (1-β2)·g (float32).",
        source="DeepSpeed 0.19.8 deepspeed.ops.lion.DeepSpeedCPULion (csrc/includes/cpu_lion.h)",
        class_path="deepspeed.ops.lion.DeepSpeedCPULion",
        notes=(
            "The update is -copysign(lr, c), not -lr·sign(c): where the interpolation c is exactly +0 (a gradient "
            "and a momentum both zero: an embedding row no batch has used, a weight whose gradient is zero) the "
            "weight moves by -lr at every step (and decays), at -0 by +lr; cerebras.Lion's sign(0) = 0 leaves it.",
            "Float32 as the kernel computes it: β, 1 - β and 1 - lr·wd formed in float32 arithmetic (1 - lr·wd in "
            "one rounding); c and the momentum as β·m, then the gradient's term added in one rounding; the weight "
            "as w·(1 - lr·wd) - copysign(lr, c) in one rounding. Each is an FMA in the kernel and in torch's eager "
            "and foreach adds on the CPU, so the weights are DeepSpeed's to the bit there (the recorded cases and "
            "2000 random steps); under `fused` (torch.compile) the adds round twice, a float32 rounding apart. "
            "DeepSpeed's own scalar loop over the elements past a tensor's last full SIMD block (size mod 16 with "
            "AVX-512) rounds the momentum's two terms apart: a momentum there can differ from optreg's in its last "
            "bit.",
            "DeepSpeed builds it for `Lion` under zero_optimization.offload_optimizer (cpu or nvme); without, "
            "FusedLion (deepspeed.FusedLion), which differs at c = ±0 only.",
            DEFAULTS,
        ),
    ),
    optimizer(
        "deepspeed", "FusedLion", "optreg.dialects.deepspeed.lion:FusedLion",
        "Lion: c = β1·m + (1-β1)·g; w = w·(1 - lr·wd) + (c > 0 ? -lr : lr); m = β2·m + (1-β2)·g (float32).",
        source="DeepSpeed 0.19.8 deepspeed.ops.lion.FusedLion (csrc/lion/multi_tensor_lion.cu)",
        class_path="deepspeed.ops.lion.FusedLion",
        notes=(
            "The update is `c > 0 ? -lr : lr`: where the interpolation c is exactly ±0 (a gradient and a momentum "
            "both zero) or NaN the weight moves by +lr at every step; DeepSpeedCPULion (deepspeed.Lion) moves it "
            "by -lr at +0, cerebras.Lion's sign(0) = 0 leaves it.",
            "DeepSpeed builds it for `Lion` without offload_optimizer. A CUDA kernel: read from its source (the "
            "same float32 scalars as deepspeed.Lion), not recorded.",
            DEFAULTS,
        ),
    ),
]
