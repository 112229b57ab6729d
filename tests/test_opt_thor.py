"""MindSpore THOR against the numpy reference (float64, several refresh periods), its constraints, its hooks and
its checkpoints. The reference computes A and G from activations and output gradients that this test records with
its own hooks."""

from __future__ import annotations

import copy
import io

import numpy as np
import pytest
import torch
from torch import nn

import optreg
from optreg.dialects.mindspore.thor import THOR, Conv, allreduce_groups, damped_inverse
from optreg.reference import thor as ref

BATCH = 4
STEPS = 7
FREQUENCY = 3          # refreshes at steps 0, 3 and 6; steps 1, 2, 4, 5 use stale inverses


class Net(nn.Module):
    """Every kind THOR knows: Embedding, Conv2d (one with a 144-row A: two diagonal blocks), LayerNorm, Linear."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(7, 3)
        self.conv1 = nn.Conv2d(16, 3, 3, padding=1)
        self.conv2 = nn.Conv2d(3, 2, 2, stride=2, dilation=1, bias=False)
        self.norm = nn.LayerNorm(3)
        self.fc = nn.Linear(5, 2)

    def forward(self, img, ids):
        h = self.conv2(torch.tanh(self.conv1(img))).mean((2, 3))
        z = self.norm(self.emb(ids).sum(1))
        return self.fc(torch.cat([h, z], 1))


LAYERS = [ref.Layer("embedding", "emb.weight", vocab=7),
          ref.Layer("conv", "conv1.weight", conv=dict(kernel=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1))),
          ref.Layer("conv", "conv2.weight", conv=dict(kernel=(2, 2), stride=(2, 2), padding=(0, 0), dilation=(1, 1))),
          ref.Layer("dense", "fc.weight")]
MODULES = {"emb.weight": "emb", "conv1.weight": "conv1", "conv2.weight": "conv2", "fc.weight": "fc"}


def make_net(dtype=torch.float64, seed=0):
    torch.manual_seed(seed)
    return Net().to(dtype)


def batch(step, dtype=torch.float64):
    g = torch.Generator().manual_seed(100 + step)
    return (torch.randn(BATCH, 16, 4, 4, generator=g).to(dtype), torch.randint(0, 7, (BATCH, 2), generator=g),
            torch.randn(BATCH, 2, generator=g).to(dtype))


class Records:
    """This test's own hooks: each layer's inputs and output gradients, per step."""

    def __init__(self, net):
        self.data = {}
        for weight, name in MODULES.items():
            getattr(net, name).register_forward_hook(self._hook(weight))

    def _hook(self, weight):
        def hook(module, inputs, output):
            self.data[weight][0].append(inputs[0].detach().numpy().copy())
            output.register_hook(lambda g: self.data[weight][1].append(g.detach().numpy().copy()))
        return hook

    def clear(self):
        self.data = {w: ([], []) for w in MODULES}


def train(net, opt, steps, start=0, loss_scale=1.0, records=None):
    """Steps with a closure; returns the parameters after each step and what each step recorded."""
    out, seen = [], []
    for k in range(start, start + steps):
        img, ids, y = batch(k, next(net.parameters()).dtype)
        if records is not None:
            records.clear()

        def closure():
            opt.zero_grad()
            loss = loss_scale * ((net(img, ids) - y) ** 2).mean()
            loss.backward()
            return loss

        opt.step(closure)
        if records is not None:
            seen.append(({n: p.grad.numpy().copy() for n, p in net.named_parameters()}, copy.deepcopy(records.data)))
        out.append({n: p.detach().clone() for n, p in net.named_parameters()})
    return out, seen


LRS = [0.1 * 0.9 ** k for k in range(STEPS)]


def damping_schedule(k):
    return 0.3 * 0.8 ** k


@pytest.mark.parametrize("nesterov, clip", [(False, False), (True, False), (True, True)])
def test_thor_matches_the_numpy_reference(nesterov, clip):
    net = make_net()
    init = {n: p.detach().numpy().copy() for n, p in net.named_parameters()}
    records = Records(net)
    opt = optreg.configure_optimizer("mindspore.thor", net, learning_rate=LRS, damping=damping_schedule,
                                     momentum=0.9, weight_decay=0.01, decay_filter=["*bias", "norm.*"],
                                     loss_scale=8.0, batch_size=BATCH, use_nesterov=nesterov, enable_clip_grad=clip,
                                     frequency=FREQUENCY)
    got, seen = train(net, opt, STEPS, loss_scale=8.0, records=records)

    w, state = init, {}
    for k, (grads, recorded) in enumerate(seen):
        w = ref.thor_step(w, grads, recorded, state, k, layers=LAYERS, layernorm={"norm.weight", "norm.bias"},
                          lr=LRS[k], damping=damping_schedule, momentum=0.9, weight_decay=0.01,
                          decays=lambda n: not (n.endswith("bias") or n.startswith("norm.")), loss_scale=8.0,
                          batch_size=BATCH, nesterov=nesterov, clip=clip, frequency=FREQUENCY)
        for name, value in got[k].items():
            np.testing.assert_allclose(value.numpy(), w[name], rtol=1e-10, atol=1e-12,
                                       err_msg=f"step {k} {name}")


def test_inverses_are_stale_between_refreshes():
    net = make_net()
    opt = optreg.configure_optimizer("mindspore.thor", net, learning_rate=0.05, damping=0.1, momentum=0.9,
                                     frequency=FREQUENCY, batch_size=BATCH)
    factors = []
    for k in range(STEPS):
        train(net, opt, 1, start=k)
        st = opt.state[net.fc.weight]
        factors.append((st["a_inv"].clone(), st["g_inv"].clone()))
    same = [all(torch.equal(a, b) for a, b in zip(factors[k], factors[k - 1])) for k in range(1, STEPS)]
    assert same == [k % FREQUENCY != 0 for k in range(1, STEPS)]   # new only at the refresh steps 3 and 6


def test_the_hooks_record_only_in_refresh_steps_with_gradients_enabled():
    net = make_net()
    opt = optreg.configure_optimizer("mindspore.thor", net, learning_rate=0.05, damping=0.1, momentum=0.9,
                                     frequency=2, batch_size=BATCH)
    img, ids, _ = batch(0)
    with torch.no_grad():
        net(img, ids)                                   # an evaluation pass records nothing
    assert all(layer.a_sum is None for layer in opt.layers)
    net(img, ids).sum().backward()
    assert all(layer.complete for layer in opt.layers)
    opt.step()                                          # step 1 does not refresh: nothing recorded
    net(img, ids).sum().backward()
    assert all(layer.a_sum is None and layer.g_sum is None for layer in opt.layers)
    opt.step()
    opt.remove_hooks()
    net(img, ids).sum().backward()
    assert all(layer.a_sum is None for layer in opt.layers)


def test_a_refresh_step_without_records_is_an_error():
    net = make_net()
    opt = optreg.configure_optimizer("mindspore.thor", net, learning_rate=0.05, damping=0.1, momentum=0.9)
    opt.remove_hooks()
    img, ids, _ = batch(0)
    net(img, ids).sum().backward()
    with pytest.raises(RuntimeError, match="layer 'emb' has a gradient but recorded no A/G statistics in step 0"):
        opt.step()


@pytest.mark.parametrize("options", [dict(padding=1), dict(padding="same", dilation=2), dict(stride=2, padding=(1, 0)),
                                     dict(padding=1, padding_mode="reflect"), dict(padding=2, padding_mode="circular")])
def test_conv_rows_are_the_patches_the_layer_convolves(options):
    torch.manual_seed(0)
    conv = nn.Conv2d(3, 4, 3, bias=False, **options).double()
    x = torch.randn(2, 3, 7, 6, dtype=torch.float64)
    rows = Conv().input_rows(conv, x)
    out = conv(x)
    want = out.permute(0, 2, 3, 1).reshape(-1, 4)
    torch.testing.assert_close(rows @ conv.weight.reshape(4, -1).T, want, rtol=1e-12, atol=1e-12)


def test_factors_above_128_rows_are_inverted_by_diagonal_blocks():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(300, 144, generator=g, dtype=torch.float64)
    m = x.T @ x / 300
    inv = damped_inverse(m, 0.1, 128)
    np.testing.assert_allclose(inv.numpy(), ref.block_inverse(m.numpy() + 0.1 * np.eye(144)), rtol=1e-10)
    assert torch.count_nonzero(inv[:128, 128:]) == 0
    torch.testing.assert_close(inv[128:, 128:] @ (m[128:, 128:] + 0.1 * torch.eye(16, dtype=torch.float64)),
                               torch.eye(16, dtype=torch.float64))


def test_zero_damping_of_a_singular_factor_falls_back_to_the_pseudo_inverse():
    m = torch.ones(3, 3, dtype=torch.float64)           # rank 1: the Moore-Penrose inverse is m / 9
    torch.testing.assert_close(damped_inverse(m, 0.0), m / 9.0)
    assert torch.isnan(damped_inverse(torch.full((2, 2), float("inf")), 0.1)).all()


# -------------------------------------------------------------------------------------------------
# checkpoints
# -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_resume_between_refreshes_is_exact(dtype):
    options = dict(learning_rate=LRS, damping=[0.3] * STEPS, momentum=0.9, weight_decay=0.01, loss_scale=4.0,
                   batch_size=BATCH, use_nesterov=True, frequency=FREQUENCY)
    straight_net = make_net(dtype)
    resumed_net = copy.deepcopy(straight_net)
    straight, _ = train(straight_net, optreg.configure_optimizer("mindspore.thor", straight_net, **options), STEPS,
                        loss_scale=4.0)

    first = optreg.configure_optimizer("mindspore.thor", resumed_net, **options)
    train(resumed_net, first, 4, loss_scale=4.0)                 # resumes at step 4: stale inverses of step 3
    buffer = io.BytesIO()
    torch.save({"model": resumed_net.state_dict(), "opt": first.state_dict()}, buffer)
    buffer.seek(0)
    saved = torch.load(buffer, weights_only=True)
    net = make_net(dtype, seed=1)
    net.load_state_dict(saved["model"])
    second = optreg.configure_optimizer("mindspore.thor", net, **options)
    second.load_state_dict(saved["opt"])
    layout = {k: v.dtype for st in first.state.values() for k, v in st.items()}
    assert {k: v.dtype for st in second.state.values() for k, v in st.items()} == layout
    assert layout["a_inv"] == torch.promote_types(dtype, torch.float32)
    resumed, _ = train(net, second, STEPS - 4, start=4, loss_scale=4.0)
    assert all(torch.equal(straight[-1][n], resumed[-1][n]) for n in straight[-1])


# -------------------------------------------------------------------------------------------------
# building
# -------------------------------------------------------------------------------------------------
def test_builds_from_yaml_with_a_damping_schedule():
    net = make_net(torch.float32)
    built = optreg.build("""
optimizer:
  name: mindspore.thor
  learning_rate: [0.1, 0.1, 0.05]
  damping: {name: ExponentialDecayLR, learning_rate: 0.5, decay_rate: 0.5, decay_steps: 1}
  momentum: 0.9
  frequency: 2
  batch_size: 4
  decay_filter: ["*bias"]
  weight_decay: 0.001
""", net)
    opt = built.optimizer
    assert isinstance(opt, THOR) and opt.frequency == 2
    assert [opt.damping(k) for k in range(3)] == pytest.approx([0.5, 0.25, 0.125])
    assert [row["params"] for row in built.group_table() if row["group"] != "frozen"] == [len(list(net.parameters()))]
    train(net, opt, 3)


def test_configure_optimizer_and_class_agree():
    a, b = make_net(), make_net()
    options = dict(learning_rate=0.05, damping=0.2, momentum=0.9, frequency=2, batch_size=BATCH)
    x, _ = train(a, optreg.configure_optimizer("mindspore.THOR", a, **options), 3)
    y, _ = train(b, THOR(b, **options), 3)
    assert all(torch.equal(x[-1][n], y[-1][n]) for n in x[-1])


def test_split_indices_name_the_allreduce_groups():
    net = make_net()
    opt = optreg.configure_optimizer("mindspore.thor", net, learning_rate=0.05, damping=0.2, momentum=0.9,
                                     split_indices=[1, 3])
    assert opt.allreduce_groups() == [["emb", "conv1"], ["conv2", "fc"]]
    assert allreduce_groups(54, [26, 53]) == [list(range(27)), list(range(27, 54))]
    assert allreduce_groups(3, None) == [[0, 1, 2]]


def test_show_prints_the_decisions(capsys):
    from optreg.cli import main

    assert main(["show", "thor", "--dialect", "mindspore"]) == 0
    out = capsys.readouterr().out
    assert "batch_size²/loss_scale²" in out and "128×128 diagonal blocks" in out and "Takes the model" in out


# -------------------------------------------------------------------------------------------------
# bad input: every constraint, with its path and message
# -------------------------------------------------------------------------------------------------
REQUIRED = dict(learning_rate=0.1, damping=0.1, momentum=0.9)


@pytest.mark.parametrize("option, value, path, message", [
    ("frequency", 1, "frequency", "must be >= 2, got 1"),
    ("frequency", 4.0, "frequency", "must be an int, got float 4.0"),
    ("momentum", -0.5, "momentum", "must be >= 0, got -0.5"),
    ("momentum", 1, "momentum", "must be a float, got int 1"),
    ("loss_scale", 0.0, "loss_scale", "must be >= 1.1754943508222875e-38, got 0.0"),   # the smallest normal float32
    ("weight_decay", -0.1, "weight_decay", "must be >= 0, got -0.1"),
    ("batch_size", 0, "batch_size", "must be >= 1, got 0"),
    ("batch_size", 2.5, "batch_size", "must be an integer, got 2.5"),
    ("damping", -1.0, "damping", "must be >= 0, got -1.0"),
    ("damping", [0.1, -0.2], "damping", "entry 1 must be >= 0, got -0.2"),
    ("damping", [], "damping", "a per-step damping list must not be empty"),
    ("damping", True, "damping", "must be a number, a list of per-step numbers or a schedule, got bool True"),
    ("damping", {"name": "torch.ExponentialLR", "gamma": 0.5}, "damping",
     "ExponentialLR gives factors of a base value; damping needs an absolute schedule"),
    ("learning_rate", -0.1, "learning_rate", "must be >= 0, got -0.1"),
    ("use_nesterov", "yes", "use_nesterov", "expected true or false, got str 'yes'"),
    ("enable_clip_grad", 1, "enable_clip_grad", "expected true or false, got int 1"),
    ("split_indices", [3, 1], "split_indices", "must be strictly increasing, got [3, 1]"),
    ("split_indices", [-1], "split_indices[0]", "must be >= 0, got -1"),
    ("split_indices", [1, 4], "split_indices[1]", "layer index 4 is past the model's 4 A/G layers (0-3)"),
    ("decay_filter", 5, "decay_filter", "expected a list of glob patterns of the parameter names not to decay"),
])
def test_a_violated_constraint_is_a_config_error_at_its_path(option, value, path, message):
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer("mindspore.thor", make_net(), **{**REQUIRED, option: value})
    assert [e.path for e in info.value.errors] == [path]
    assert info.value.errors[0].message.startswith(message), info.value.errors[0].message


@pytest.mark.parametrize("option, value, message", [
    ("frequency", 1, "must be >= 2, got 1"), ("frequency", 4.0, "must be an int, got float 4.0"),
    ("frequency", "x", "expected an integer, got str 'x'"), ("batch_size", 0, "must be >= 1, got 0"),
    ("batch_size", 2.5, "must be an integer, got 2.5")])
def test_a_direct_call_says_what_the_option_says(option, value, message):
    """THOR called directly words a bad frequency or batch_size as configure_optimizer's options do (it said
    `must be an int >= 2, got 1`, `must be an int >= 1, got 0`)."""
    for make in (lambda: THOR(make_net(), **{**REQUIRED, option: value}),
                 lambda: optreg.configure_optimizer("mindspore.thor", make_net(), **{**REQUIRED, option: value})):
        with pytest.raises(optreg.ConfigError) as info:
            make()
        assert str(info.value) == f"{option}: {message}"


def test_every_problem_is_reported_at_once_and_nothing_is_built():
    net = make_net()
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer("mindspore.thor", net, learning_rate=0.1, momentum=-1.0, frequency=1,
                                   batch_size=0, dampin=0.1)
    errors = {e.path: e for e in info.value.errors}
    assert set(errors) == {"momentum", "frequency", "batch_size", "dampin"}   # the missing damping it explains
    assert errors["dampin"].suggestion == "damping"
    assert not net.emb._forward_hooks                   # a refused config hooks nothing


def test_it_takes_the_model_and_no_groups():
    net = make_net()
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer("mindspore.thor", list(net.parameters()), **REQUIRED)
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("params", "mindspore.thor takes the model (a torch.nn.Module), whose layers it hooks, not parameters; "
                   "got list")]
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer("mindspore.thor", net, param_groups=[{"params": "*.bias", "lr": 0.1}], **REQUIRED)
    assert [e.path for e in info.value.errors] == ["param_groups"]
    with pytest.raises(optreg.ConfigError) as info:
        THOR(list(net.parameters()), **REQUIRED)
    assert [e.path for e in info.value.errors] == ["net"]


def test_yaml_errors_carry_the_section_path_and_location():
    with pytest.raises(optreg.ConfigError) as info:
        optreg.build("optimizer:\n  name: mindspore.thor\n  learning_rate: 0.1\n  damping: 0.1\n  momentum: 0.9\n"
                     "  frequency: 1\n", make_net())
    (error,) = info.value.errors
    assert error.path == "optimizer.frequency" and error.location is not None and error.location.line == 6


def test_sparse_gradients_and_a_damping_list_past_its_end_are_refused():
    net = make_net()
    net.emb.sparse = True
    opt = optreg.configure_optimizer("mindspore.thor", net, **REQUIRED)
    img, ids, _ = batch(0)
    net(img, ids).sum().backward()
    with pytest.raises(RuntimeError, match="THOR does not support sparse gradients"):
        opt.step()
    net = make_net()
    opt = optreg.configure_optimizer("mindspore.thor", net, learning_rate=0.1, damping=[0.1, 0.1], momentum=0.9,
                                     frequency=2)
    train(net, opt, 2)
    img, ids, _ = batch(2)
    net(img, ids).sum().backward()
    with pytest.raises(IndexError, match="step 2 is past the end of the per-step damping list"):
        opt.step()
