"""Name normalisation and the option alias table (what the dialects declare)."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from optreg.core.entry import SCHEDULER


#: characters a name may hold anywhere without changing it (`normalise`; the JSON Schema's name patterns put them
#: in a character class as written: `-` first, so that it is no range)
SEPARATORS = "-_ "
#: the suffix a scheduler's name may drop (`CosineAnnealingLR` = `cosine_annealing`)
SCHEDULER_SUFFIX = "lr"


def normalise(name: str, kind: str | None = None) -> str:
    """`AdamW` = `adamw` = `adam_w` = `Adam-W`; schedulers also drop a trailing `LR`."""
    key = str(name).strip().lower().translate({ord(c): None for c in SEPARATORS})
    if kind == SCHEDULER and key.endswith(SCHEDULER_SUFFIX) and len(key) > len(SCHEDULER_SUFFIX):
        key = key[:-len(SCHEDULER_SUFFIX)]
    return key


def any_case(text: str, between: str = "") -> str:
    """A regular expression of `text` in any case (JSON Schema's patterns have no flags), `between` its letters."""
    import re

    return between.join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in text)


def spelling(name: str) -> str:
    """A name as spelled, case aside: `exponential_decay_lr` and `ExponentialDecayLR` stay apart."""
    return str(name).strip().lower()


def split_dialect(name: str, dialects: Iterable[str] | None = None) -> tuple[str | None, str]:
    """`mindspore.Adam` -> ("mindspore", "Adam"); `Adam` -> (None, "Adam").

    `dialects`: the known dialects; by default the registry's (built-ins and dialect plugins).
    """
    if dialects is None:
        from optreg.core.registry import REGISTRY

        dialects = REGISTRY.dialects()
    head, dot, tail = str(name).partition(".")
    if dot and head.strip().lower() in dialects:
        return head.strip().lower(), tail
    return None, str(name)


def option_aliases() -> Mapping[str, str]:
    """Option aliases, alias -> canonical name: one table for Python kwargs, YAML and Hydra, made of what each
    dialect declares (`Dialect.option_aliases`: MindSpore's `learning_rate`, OneFlow's `last_step`). A component
    whose own parameter is the alias (MindSpore's `learning_rate`) keeps it: aliases are resolved towards
    whichever member of the synonym set the component actually has."""
    from optreg.core.registry import REGISTRY

    return REGISTRY.option_aliases()

# Options that several frameworks spell as one tuple or as separate scalars.
TUPLE_ALIASES: dict[str, tuple[str, ...]] = {"betas": ("beta1", "beta2")}

# Keys that name the component itself.
NAME_KEYS = ("name", "optimizer_type", "type")


def given_twice(errors, key: Any, where: str, first: Any, keyword: Any) -> None:
    """Report into `errors` (a `Collector`) a key a Python call gives twice, in `where` (its value `first`) and as
    a keyword argument (`keyword`): no precedence, a contradiction or a slip."""
    from optreg.errors import key_text, show

    errors.add(key_text(key), f"given both in {where} ({show(first)}) and as {key}={show(keyword)}; give it once")


def named_twice(errors, name: Any, options: Mapping[str, Any]) -> None:
    """Report into `errors` (a `Collector`) each key of `NAME_KEYS` among a Python call's keyword `options`, whose
    first argument, `name`, names the component already (`configure_optimizer("sgd", model, type="adamw")`)."""
    for key in (k for k in NAME_KEYS if k in options):
        given_twice(errors, key, "the name argument", name, options[key])


def name_key(errors, spec: dict, path: str, what: str, missing: str) -> bool:
    """Put the name of the component `spec` (a dict, changed in place) under `name`, from its first key of
    `NAME_KEYS` as written, and report into `errors` (a `Collector`) each further one at its own path (`both 'name'
    and 'type' name {what}`, the second the one too many; dropped); none: `missing_name` with `missing`, the words
    of what is absent. Returns whether the spec names the component."""
    from optreg.errors import join_path

    given = [k for k in spec if k in NAME_KEYS]
    for extra in given[1:]:
        errors.add(join_path(path, extra), f"both {given[0]!r} and {extra!r} name {what}; keep one")
    if not given:
        missing_name(errors, spec, path, missing)
        return False
    spec["name"] = spec.pop(given[0])
    for extra in given[1:]:
        spec.pop(extra)
    return True


def missing_name(errors, spec: Mapping, path: str, what: str) -> None:
    """Report into `errors` (a `Collector`) a component spec with no key of `NAME_KEYS`: a key of it that misspells
    one (`nmae`, `tpye`) is the error, with its did-you-mean; otherwise `required: {what}` at `path`.name."""
    from optreg.errors import closest, join_path

    near = {key: closest(key, NAME_KEYS, cutoff=0.7) for key in spec if isinstance(key, str)}
    misspelt = [key for key, name in near.items() if name is not None and (
        _names_component(spec[key]) or not any(whole in key.lower() for whole in NAME_KEYS))]
    if misspelt:   # one whose value names a component first: {dtype: float32, tpye: SGD} misspells type at tpye
        key = next((key for key in misspelt if _names_component(spec[key])), misspelt[0])
        errors.add(join_path(path, key), f"unknown key, and {what} is missing", near[key])
        return
    errors.add(join_path(path, "name"), f"required: {what}")


def _names_component(value: object) -> bool:
    """Whether `value` is, or is close to, the name of a registered optimizer or scheduler (with or without its
    dialect; the dialects' own rows, no library's): a key that holds one misspells a name key (`typee: SGD`), one
    that only contains a name key whole and holds something else is another word (`dtype: float32`)."""
    from optreg.core.entry import OPTIMIZER
    from optreg.core.registry import REGISTRY
    from optreg.errors import closest

    if not isinstance(value, str):
        return False
    bare = split_dialect(value)[1]
    return any(closest(normalise(bare, kind), [normalise(e.name, kind) for e in REGISTRY.entries(kind)],
                       cutoff=0.7) is not None for kind in (OPTIMIZER, SCHEDULER))


def synonyms(option: str) -> set[str]:
    """Every spelling of `option` known to the alias table, itself included."""
    table = option_aliases()
    canonical = table.get(option, option)
    return {canonical} | {alias for alias, target in table.items() if target == canonical}
