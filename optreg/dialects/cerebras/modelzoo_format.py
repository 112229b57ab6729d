"""Cerebras Model Zoo configs as two config formats (optreg.config.formats): the trainer form (Model Zoo 2.3+) and the
legacy params file. Kept apart from the reader (`modelzoo.py`) so that detecting a file's format imports only this."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from optreg.errors import Collector, ConfigError, show


class ModelZooFormat:
    """A Cerebras Model Zoo config, whole, as a config format: its other sections are Model Zoo's own and are not
    read; `train:` is optreg's run of it (`optreg run`); read in the cerebras dialect."""

    def __init__(self, name: str, form: str, signature: str, doc: str):
        self.name, self.form, self.signature, self.doc = name, form, signature, doc

    def claims(self, data: Mapping[str, Any]) -> bool:
        """Whether `data` has the form's signature; a legacy optimizer section that also has `name:` is optreg's own
        (no params file names the optimizer but by optimizer_type), whose reading says both name it."""
        from optreg.config.formats import has

        phases = data.get("trainer") if self.form == "trainer" else None
        if self.form == "legacy":
            return has(data, self.signature) and not has(data, "optimizer.name")
        if not isinstance(phases, Sequence) or isinstance(phases, str):
            return has(data, self.signature)
        # a multi-phase trainer list: [{trainer: {init: ...}}, ...]
        return bool(phases) and all(hasattr(p, "keys") and has(p, self.signature) for p in phases)

    def sections(self, data: Mapping[str, Any]) -> list[Any]:
        own = ("trainer" if self.form == "trainer" else "optimizer", "train", "dialect")
        return [k for k in own if k in data]

    def read(self, data: Mapping[str, Any], source: Any = None) -> Any:
        from optreg.config.experiment import Experiment
        from optreg.config.run import read_train, resolve_run
        from optreg.dialects.cerebras.modelzoo import _plan_experiment, check, read

        errors = Collector()
        section, notes = None, []
        try:
            section = read(data, self.form)
            notes = check(section)
        except ConfigError as exc:
            errors.extend(exc)
        train = read_train(data, errors)
        dialect = data.get("dialect", "cerebras")
        if dialect != "cerebras":
            errors.add("dialect", f"a Model Zoo config is read in the cerebras dialect, got {show(dialect)}")
        steps = self.max_steps(data, errors)
        experiment = Experiment({}, None, train, "cerebras", source, modelzoo=section, planner=_plan_experiment,
                                format_steps=steps, run=resolve_run(train, format_steps=steps, errors=errors),
                                report=list(section.model_keys) if section is not None else [], notes=notes,
                                paths=dict(section.written) if section is not None else {})
        if errors:
            raise experiment.locate(ConfigError(errors.items))
        return experiment


    def max_steps(self, data: Mapping[str, Any], errors: Collector) -> tuple[int, str] | None:
        """The Cerebras trainer's run length, (steps, its key): `trainer.init.loop.max_steps` (2.3+, one phase) or
        `runconfig.max_steps` (the params file); None when absent."""
        path = ("trainer", "init", "loop", "max_steps") if self.form == "trainer" else ("runconfig", "max_steps")
        node: Any = data
        for part in path:
            if not hasattr(node, "keys") or part not in node:
                from optreg.config.formats import misspelt

                near = misspelt(node, [part]) if hasattr(node, "keys") and part == path[-1] else None
                if near is not None:   # `max_step: 20`: the run would be left to the other sources (optreg run's 100)
                    errors.add(".".join((*path[:-1], str(near[0]))), f"unknown key: the run length is {part}", near[1])
                return None
            node = node[part]
        from optreg.core.models import number_message

        if (wrong := number_message(node, 1, integer=True)) is not None:
            errors.add(".".join(path), wrong)
            return None
        return node, ".".join(path)


TRAINER_FORMAT = ModelZooFormat("modelzoo", "trainer", "trainer.init",
                                "Cerebras Model Zoo 2.3+: trainer: {init: {optimizer:, schedulers:, precision:}}")
LEGACY_FORMAT = ModelZooFormat("modelzoo_legacy", "legacy", "optimizer.optimizer_type",
                               "Cerebras Model Zoo 1.x-2.3 params file: optimizer: {optimizer_type:, learning_rate:}")
