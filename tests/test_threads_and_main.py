"""The registry loads once under a lock, and `python -m optreg` is the `optreg` command."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import optreg

SCRIPT = textwrap.dedent('''
    import json, sys, threading
    import torch, optreg
    names = ["oneflow.Adam", "cerebras.AdamW", "mindspore.Momentum", "mindspore.Adam", "cerebras.Lamb",
             "oneflow.RMSprop", "cerebras.CosineDecay", "hf.cosine"]
    barrier = threading.Barrier(len(names))
    results = {}

    def build(name):
        barrier.wait()  # all threads ask a registry that nobody has loaded yet
        try:
            if name.startswith(("hf.", "cerebras.Cos")):
                opt = torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1)
                kw = {"num_warmup_steps": 2, "num_training_steps": 10} if name.startswith("hf.") else \\
                     {"initial_learning_rate": 0.1, "end_learning_rate": 0.0, "total_iters": 10}
                sched = optreg.configure_lr_scheduler(opt, {"name": name, **kw})
                results[name] = type(sched).__name__
            else:
                kw = {"learning_rate": 0.1} if name.startswith("mindspore.") else {"lr": 0.1}
                if name == "mindspore.Momentum":
                    kw["momentum"] = 0.9
                opt = optreg.configure_optimizer(name, [torch.zeros(2, requires_grad=True)], **kw)
                results[name] = type(opt).__module__ + "." + type(opt).__name__
        except Exception as exc:  # noqa: BLE001 - the test reports whatever escaped
            results[name] = "error: " + repr(exc)

    threads = [threading.Thread(target=build, args=(n,)) for n in names]
    [t.start() for t in threads]
    [t.join() for t in threads]
    print(json.dumps(results))
''')


def test_building_from_eight_threads_in_a_fresh_interpreter_gives_what_one_thread_gives():
    # three interpreters side by side (each spends its time importing torch and loading the registry)
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(3)]
    outs = [proc.communicate(timeout=300) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0], [err for _, err in outs]
    runs = [json.loads(out) for out, _ in outs]
    errors = {k: v for run in runs for k, v in run.items() if v.startswith("error")}
    assert not errors
    assert runs[0] == runs[1] == runs[2]
    assert runs[0]["cerebras.AdamW"] == "optreg.dialects.cerebras.adam.AdamW"


def test_python_dash_m_optreg_is_the_optreg_command():
    out = subprocess.run([sys.executable, "-m", "optreg", "list", "optimizers", "--dialect", "oneflow"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    names = optreg.list_optimizers(dialect="oneflow")
    assert "LBFGS" in names and "AdamW" in names
    assert [line.split()[0] for line in out] == ["optimizers", *names]
    assert out[0] == f"optimizers ({len(names)}):"
    bad = subprocess.run([sys.executable, "-m", "optreg", "show", "AdamW", "--dialect", "oneflw"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "did you mean 'oneflow'" in bad.stderr
