"""The registry: dialect rows, user registrations and entry-point plugins, looked up by name and dialect."""

from __future__ import annotations

import importlib
import re
import threading
import warnings
from typing import Any, Callable, Iterable

from optreg.core.dialect import Dialect, plain
from optreg.core.entry import OPTIMIZER, SCHEDULER, Entry
from optreg.core.names import normalise, spelling, split_dialect
from optreg.errors import ConfigError, ErrorItem, closest, show

DEFAULT_DIALECT = "torch"
PLUGIN_GROUPS = {OPTIMIZER: "optreg.optimizers", SCHEDULER: "optreg.schedulers"}
DIALECT_GROUP = "optreg.dialects"
BUILTIN_PACKAGE = "optreg.dialects"   # the built-in dialects' package: its BUILTIN names, each a sub-package
_DIALECT_NAME = re.compile(r"[a-z][a-z0-9_]*")


class Registry:
    """Entries by (kind, dialect, spelling of a name or alias), and the known dialects in listing order.

    Name resolution, the same for every dialect and kind (`resolve`): a name spelled as an entry spells
    one of its names (case aside) finds that entry; otherwise the normalised name (no case, `-`, `_`,
    spaces, nor a scheduler's `LR` suffix) finds the one entry of the dialect that normalises to it, and
    two such entries are an ambiguity (a ConfigError listing both). MindSpore's `exponential_decay_lr`
    (its dynamic-lr function) and `ExponentialDecayLR` (its schedule class) are both found by their own
    spellings; `exponential_decay` is ambiguous.

    Read on first use: the built-in dialects (each package `optreg.dialects.<name>` declares its `DIALECT`, a
    `optreg.core.dialect.Dialect`: its rows and how it extends planning), then entry-point plugins (dialect
    plugins first, then optimizer and scheduler plugins). Loading holds a lock: a
    thread that asks while another loads waits for the whole registry.
    """

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str, str], Entry] = {}
        self._class_paths: tuple[dict | None, int, dict[tuple[str, str], Entry]] = (None, -1, {})
        self._normalised: tuple[dict | None, int, dict[tuple[str, str, str], list[Entry]]] = (None, -1, {})
        self._dialects: list[str] = []
        self._declared: dict[str, Dialect] = {}
        self._aliases: tuple[tuple[int, int] | None, dict[str, str]] = (None, {})
        self._paths: tuple[dict | None, int, dict[tuple[str, str], Entry]] = (None, -1, {})
        self._loaded = False
        self._loading = False
        self._lock = threading.RLock()
        self._libraries: set[str] = set()     # dialects whose library rows are read
        self._library_rows: set[int] = set()  # ids of those rows (listed only when their dialect is asked for)

    # -- loading -------------------------------------------------------------------------------
    def _load(self) -> None:
        if self._loaded:
            return
        with self._lock:  # other threads wait here; the loading thread itself re-enters (plugins look up)
            if self._loaded or self._loading:
                return
            self._loading = True
            try:
                self._dialects = []  # a reload (tests reset _entries and _loaded) forgets plugin dialects too
                self._declared = {}
                self._libraries, self._library_rows = set(), set()
                self._load_builtin()
                self._load_plugins()
            finally:
                self._loading = False
            self._loaded = True

    def _known(self) -> list[str]:
        if not self._dialects:
            self._dialects = list(importlib.import_module(BUILTIN_PACKAGE).BUILTIN)
        return self._dialects

    def _load_builtin(self) -> None:
        """optreg's own dialects: each built-in package's `DIALECT` and its rows."""
        self._known()
        for name in list(self._dialects):
            declared = importlib.import_module(f"{BUILTIN_PACKAGE}.{name}").DIALECT
            self._declared[name] = declared
            for entry in declared.rows:
                self.add(entry)

    def _load_plugins(self) -> None:
        from importlib.metadata import entry_points

        for ep in entry_points(group=DIALECT_GROUP):
            self._run_plugin(ep, DIALECT_GROUP, dialect=ep.name)
        for group in PLUGIN_GROUPS.values():
            for ep in entry_points(group=group):
                self._run_plugin(ep, group)

    def _run_plugin(self, ep: Any, group: str, dialect: str | None = None) -> None:
        """Add one entry point's rows (a module's ROWS, or what a callable returns given the registry).

        A dialect plugin (`dialect` set: the entry point's name) first adds its dialect to the known ones: the
        module's `DIALECT` (a Dialect, as a built-in package declares it; or only its name beside `ROWS`).
        """
        try:
            hook = ep.load()
            declared: Dialect | None = None
            if dialect is not None:
                declared = getattr(hook, "DIALECT", None)
                if not isinstance(declared, Dialect):
                    declared = plain(declared if declared is not None else dialect, getattr(hook, "ROWS", ()))
                if declared.name != dialect:
                    raise ConfigError(f"dialect plugin {ep.name!r} declares DIALECT = {declared.name!r}; the entry "
                                      f"point's name is the dialect's name", "dialect")
            rows = list(declared.rows if declared is not None and declared.rows else
                        (hook(self) if callable(hook) else getattr(hook, "ROWS", ())) or ())
            if declared is not None:
                self.add_dialect(declared)
            for entry in rows:
                self.add(entry if entry.provider != "optreg" else _with_provider(entry, ep))
        except ConfigError:
            raise  # a name clash is the plugin author's error and must be seen
        except Exception as exc:  # one broken plugin must not break the registry
            dist = getattr(ep.dist, "name", "?")
            warnings.warn(f"optreg plugin {ep.name!r} ({group}, from {dist}) failed to load: {exc!r}",
                          RuntimeWarning, stacklevel=3)

    # -- dialects --------------------------------------------------------------------------------
    def dialects(self) -> tuple[str, ...]:
        """The known dialects, in listing order: the built-ins, then those added by plugins."""
        self._load()
        return tuple(self._known())

    def option_aliases(self) -> dict[str, str]:
        """alias -> canonical option name: the spellings every declared dialect adds (`Dialect.option_aliases`,
        MindSpore's `learning_rate`), read in every dialect; one alias with two targets is the later dialect's
        error."""
        self._load()
        key = (id(self._declared), len(self._declared))   # a dialect added, or the table replaced (tests)
        if self._aliases[0] != key:
            table: dict[str, str] = {}
            for dialect in self._declared.values():
                for alias, target in dialect.option_aliases.items():
                    if table.setdefault(alias, target) != target:
                        raise ConfigError(f"the {dialect.name} dialect declares option alias {alias!r} for "
                                          f"{target!r}, another dialect for {table[alias]!r}", "dialect")
            self._aliases = (key, table)
        return self._aliases[1]

    def check_dialect(self, dialect: Any, path: str = "dialect") -> str:
        """`dialect` when it is a known dialect; else a ConfigError at `path` that names the known ones (with a
        did-you-mean)."""
        known = self.dialects()
        if dialect not in known:
            hint = closest(dialect, known) if isinstance(dialect, str) else None
            raise ConfigError([ErrorItem(path, f"unknown dialect {show(dialect)}; dialects: {', '.join(known)}", None,
                                         hint)])
        return dialect

    def dialect(self, name: str | None) -> Dialect:
        """The declared Dialect `name` (torch's reading for None); an unknown name is a ConfigError."""
        self._load()
        name = self.check_dialect(name or DEFAULT_DIALECT)
        if name not in self._declared:   # a dialect added by name alone (add_dialect("x"))
            return self._declared.setdefault(name, plain(name))
        return self._declared[name]

    def declared(self) -> list[Dialect]:
        """Every declared dialect, in listing order."""
        return [self.dialect(name) for name in self.dialects()]

    def add_dialect(self, dialect: "str | Dialect") -> str:
        """Make a dialect known (after the built-ins): a Dialect, or a name alone (it declares nothing); an
        existing or malformed name raises."""
        declared = dialect if isinstance(dialect, Dialect) else None
        name = declared.name if declared is not None else dialect
        known = self._known()
        if not isinstance(name, str) or not _DIALECT_NAME.fullmatch(name):
            raise ConfigError(f"dialect name {name!r} must be lowercase letters, digits and _ "
                              f"(starting with a letter)", "dialect")
        if name in known:
            raise ConfigError(f"dialect {name!r} is already registered", "dialect")
        known.append(name)
        if declared is not None:
            self._declared[name] = declared
        return name

    def library_rows(self, dialect: str, kind: str, path: str = "name", required: bool = True) -> None:
        """Read the rows of `dialect`'s installed library (`Dialect.library`) once, on its first use; a library that
        is not installed is a ConfigError at `path` naming the package (or nothing, when not `required`)."""
        declared = self._declared.get(dialect)
        library = getattr(declared, "library", None)
        if library is None or library.kind != kind or dialect in self._libraries:
            return
        with self._lock:
            if dialect in self._libraries:
                return
            try:
                rows = library.rows(dialect)
            except ImportError as exc:
                if not required:
                    return
                raise ConfigError(f"the {dialect} dialect's {kind}s are the classes of {library.module}, which is not "
                                  f"installed ({exc.name or library.package} not found): pip install "
                                  f"{library.package}", path) from None
            except Exception as exc:   # installed, but its import fails (a build for another torch)
                if not required:
                    return
                raise ConfigError(f"the {dialect} dialect's {kind}s are the classes of {library.module}, whose import "
                                  f"failed: {type(exc).__name__}: {str(exc)[:120]}", path) from None
            for entry in rows:
                self.add(entry)
                self._library_rows.add(id(entry))
            self._libraries.add(dialect)

    # -- adding ----------------------------------------------------------------------------------
    def add(self, entry: Entry) -> Entry:
        """Add one row; a name or alias spelled (case aside) like one of another entry of the same kind and
        dialect raises. Names that only normalise alike (`warmup_lr`, `WarmUpLR`) may coexist."""
        known = self._known()
        if entry.dialect not in known:
            raise ConfigError(f"unknown dialect {entry.dialect!r}; dialects: {', '.join(known)}", "dialect")
        keys = [(entry.kind, entry.dialect, spelling(n)) for n in (entry.name, *entry.aliases)]
        for key in keys:
            other = self._entries.get(key)
            if other is not None and other is not entry:
                raise ConfigError(
                    f"{entry.kind} name {entry.qualname!r} ({entry.provider}) clashes with "
                    f"{other.qualname!r} ({other.provider})", "name")
        other = self._by_class_path().get((entry.kind, entry.class_path)) if entry.class_path else None
        if other is not None and other is not entry:
            raise ConfigError(f"{entry.kind} {entry.qualname!r} declares the class path {entry.class_path!r} "
                              f"of {other.qualname!r}", "class_path")
        for key in keys:
            self._entries[key] = entry
        return entry

    # -- lookup ----------------------------------------------------------------------------------
    def entries(self, kind: str, dialect: str | None = None) -> list[Entry]:
        """The entries of `kind`: of one dialect (its library's rows read, when it has one), or of every dialect
        without the library rows (those are listed by their dialect)."""
        self._load()
        if dialect is not None and dialect in self._declared:
            self.library_rows(dialect, kind, "dialect", required=not self._declared[dialect].rows)
        seen: dict[int, Entry] = {}
        for (k, d, _), entry in self._entries.items():
            if k == kind and (d == dialect or dialect is None and id(entry) not in self._library_rows):
                seen.setdefault(id(entry), entry)
        order = {d: i for i, d in enumerate(self._known())}
        return sorted(seen.values(), key=lambda e: (order.get(e.dialect, len(order)), e.name.lower()))

    def _by_normalised(self) -> dict[tuple[str, str, str], list[Entry]]:
        """(kind, dialect, normalised name) -> the entries with a name or alias that normalises to it."""
        source, size, index = self._normalised
        if source is not self._entries or size != len(self._entries):  # rebuilt after an add or a swap (tests)
            index = {}
            for (kind, dialect, _), entry in self._entries.items():
                for n in (entry.name, *entry.aliases):
                    hits = index.setdefault((kind, dialect, normalise(n, kind)), [])
                    if entry not in hits:
                        hits.append(entry)
            self._normalised = (self._entries, len(self._entries), index)
        return index

    def _by_class_path(self) -> dict[tuple[str, str], Entry]:
        """(kind, class path its framework documents) -> the entry."""
        source, size, index = self._class_paths
        if source is not self._entries or size != len(self._entries):
            index = {(e.kind, e.class_path): e for e in self._entries.values() if e.class_path}
            self._class_paths = (self._entries, len(self._entries), index)
        return index

    def resolve(self, kind: str, name: str, dialect: str) -> list[Entry]:
        """The entries `name` finds in `dialect`: the one it spells, else those it matches normalised."""
        self._load()
        exact = self._entries.get((kind, dialect, spelling(name)))
        if exact is not None:
            return [exact]
        return list(self._by_normalised().get((kind, dialect, normalise(name, kind)), ()))

    def framework_paths(self) -> dict[tuple[str, str], Entry]:
        """(kind, a framework's class path) -> its entry: each dialect's declared module paths (`Dialect.paths`)
        joined with the entry's name and aliases (`torch.optim.AdamW`, `mindspore.nn.AdamWeightDecay`)."""
        self._load()
        source, size, index = self._paths
        if source is self._entries and size == len(self._entries):
            return index
        index = dict(self._by_class_path())   # the class path an entry declares wins
        for declared in self.declared():
            for kind, modules in declared.paths.items():
                for entry in self.entries(kind, declared.name):
                    for module in modules:
                        for n in (entry.name, *entry.aliases):
                            index.setdefault((kind, f"{module}.{n}"), entry)
        self._paths = (self._entries, len(self._entries), index)   # rebuilt after an add or a swap (tests)
        return index

    def place(self, kind: str, name: str, dialect: str | None = None, path: str = "name",
              default: str | None = None) -> tuple[str, str, Entry | None]:
        """(dialect, bare name, entry found by its framework path or None) of `name`, by the one rule of names: a
        dotted name is first matched exactly against the declared framework paths, then read as `dialect.Name`;
        a Hydra group name (`oneflow_adamw`) names the entry of that dialect when the bare name finds none.

        `dialect` is the dialect the name's own spec asks for (`dialect=` of a call, a section's own `dialect:`
        key): a prefix or path that names another dialect is a ConfigError at `path`, in every entry point.
        `default` is the dialect of a name without a prefix when `dialect` is None (a file's top-level `dialect:`,
        the dialect of the optimizer a spec is nested in): a prefix overrides it."""
        hit = self.framework_paths().get((kind, str(name).strip())) if "." in str(name) else None
        module = self._module_of(kind, str(name).strip()) if hit is None and "." in str(name) else None
        if hit is not None:
            prefix, bare = hit.dialect, hit.name
        elif module is not None:   # a framework path to no entry (`oneflow.optim.AdamWW`): its dialect's name
            prefix, bare = module[0], str(name).strip()[len(module[1]) + 1:]
        else:
            prefix, bare = split_dialect(name, self.dialects())
        where = prefix or dialect or default or DEFAULT_DIALECT
        if prefix is None and not self.resolve(kind, bare, where):
            text = str(name).strip()   # a dialect's name may hold `_` itself (mindspore_experimental_adamw)
            for head in sorted(self.dialects(), key=len, reverse=True):
                tail = text[len(head) + 1:]
                if text.lower().startswith(head + "_"):   # a library's rows, read on first use (as `find` reads them)
                    self.library_rows(head, kind, path)
                if text.lower().startswith(head + "_") and self.resolve(kind, tail, head):
                    prefix, bare, where = head, tail, head
                    break
        if dialect is not None and prefix is not None and prefix != dialect:
            raise ConfigError(f"{show(name)} names the {prefix} {kind}, but dialect={dialect!r} asks for the "
                              f"{dialect} one; drop the prefix or the dialect", path)
        return where, bare, hit

    def _module_of(self, kind: str, name: str) -> tuple[str, str] | None:
        """(dialect, module) of the longest framework module path a dotted `name` starts with (`oneflow.optim`,
        `mindspore.mint.optim`), or None."""
        modules = [(d.name, m) for d in self.declared() for m in d.paths.get(kind, ()) if name.startswith(m + ".")]
        return max(modules, key=lambda dm: len(dm[1]), default=None)

    def find(self, kind: str, name: str, dialect: str | None = None, path: str = "name",
             default: str | None = None) -> Entry | None:
        """The entry for `name`, or None; a normalised name that fits two entries is a ConfigError at `path` (see
        `place` for `dialect` and `default`)."""
        self._load()
        where, bare, hit = self.place(kind, name, dialect, path, default)
        if hit is not None:
            return hit
        hits = self.resolve(kind, bare, where)
        if not hits and where in self._declared:   # a library's class, read on its first use
            self.library_rows(where, kind, path)
            hits = self.resolve(kind, bare, where)
        if len(hits) > 1:
            names = [e.name for e in hits]
            raise ConfigError([ErrorItem(
                path, f"{show(bare)} is ambiguous: it matches the {where} {kind}s "
                      f"{' and '.join(map(repr, names))} (names compare without case, '-', '_'"
                      + (" and an LR suffix" if kind == SCHEDULER else "")
                      + "); spell one of them exactly", None, closest(bare, names) or names[0])])
        return hits[0] if hits else None

    def lookup(self, kind: str, name: Any, dialect: str | None = None, path: str = "name",
               default: str | None = None) -> Entry:
        """The entry for `name` (`Adam`, `mindspore.Adam`, `torch.optim.Adam`, `mindspore_adam`); ConfigError with
        close matches otherwise (see `place` for the rule, `dialect` and `default`)."""
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"{kind} name must be a non-empty string, got {show(name)}", path)
        if dialect is not None:
            self.check_dialect(dialect, path[: -len("name")] + "dialect" if path.endswith("name") else "dialect")
        if default is not None:   # a file's top-level dialect: (a parent's is an entry's, known)
            self.check_dialect(default, "dialect")
        entry = self.find(kind, name, dialect, path, default)
        if entry is not None:
            return entry
        raise self.unknown((kind,), name, dialect, path, default)

    def suggestion(self, kind: str, bare: str, where: str) -> str | None:
        """The did-you-mean for a name that `where` lacks: its closest name or alias of `kind`, else the closest
        normalised (`cosine_anealing` for `CosineAnnealingLR`), else the closest qualified name of any dialect."""
        names = {e.name: e for e in self.entries(kind, where)}
        aliases = {a: e for e in self.entries(kind, where) for a in e.aliases}
        hint = closest(bare, [*names, *aliases])
        if hint is None:
            norm = {normalise(n, kind): n for n in [*names, *aliases]}
            hit = closest(normalise(bare, kind), norm)
            hint = norm[hit] if hit else None
        if hint is None:
            qual = {e.qualname: e for e in self.entries(kind)}
            hint = closest(bare, [q.split(".", 1)[1] for q in qual])
            hint = next((q for q in qual if q.split(".", 1)[1] == hint), None) if hint else None
        return hint

    def unknown(self, kinds: tuple[str, ...], name: str, dialect: str | None = None, path: str = "name",
                default: str | None = None) -> ConfigError:
        """The error for a `name` that no entry of `kinds` has (the caller looked): it names the dialect and the
        kinds looked in, with the did-you-mean of `suggestion`, the dialects that do have it, or the dialect a
        misspelt prefix means (`onflow.AdamW`)."""
        # each kind's framework modules are its own (`torch.optim.lr_scheduler`): the reading that strips most
        where, bare, _ = min((self.place(kind, name, dialect, path, default) for kind in kinds),
                             key=lambda placed: len(placed[1]))
        what = " or ".join(kinds)
        head, dot, tail = str(name).strip().partition(".")
        if dot and head.strip().lower() not in self.dialects() and not any(
                self._module_of(kind, str(name).strip()) for kind in kinds):
            meant = closest(head.strip(), self.dialects())
            if meant is not None:
                fix = f"{meant}.{tail}"
                return ConfigError([ErrorItem(path, f"unknown {what} {show(name)}: {head.strip()!r} is not a "
                                                    f"dialect", None, fix)])
        elsewhere = [e.qualname for kind in kinds for e in self.entries(kind)
                     if e.dialect != where and normalise(bare, kind) in
                     {normalise(n, kind) for n in (e.name, *e.aliases)}]
        if elsewhere:
            return ConfigError(f"{show(bare)} is not a {where} {what}; {' and '.join(elsewhere)} "
                               f"{'has' if len(elsewhere) == 1 else 'have'} it (select the dialect "
                               f"with a prefix or a dialect: key)", path)
        hints = [h for kind in kinds if (h := self.suggestion(kind, bare, where)) is not None]
        hint = (closest(bare, hints) or hints[0]) if hints else None
        if hint is not None:
            return ConfigError([ErrorItem(path, f"unknown {where} {what} {show(bare)}", None, hint)])
        counts = " and ".join(f"the {len(self.entries(kind, where))} {where} {kind}s" for kind in kinds)
        flag = f" --kind {kinds[0]}s" if len(kinds) == 1 else ""
        return ConfigError(f"unknown {where} {what} {show(bare)}; `optreg list --dialect {where}{flag}` shows "
                           f"{counts}", path)

    def everywhere(self, kind: str, name: str) -> list[Entry]:
        """The entries of every dialect whose name or alias `name` spells or normalises to (`cosine`: hf.cosine and
        timm.cosine), each dialect's own rule applied."""
        return [hits[0] for d in self.dialects() if len(hits := self.resolve(kind, str(name), d)) == 1]

    def same_name(self, entry: Entry) -> list[Entry]:
        """Entries of other dialects with the same name (for `x is an option of cerebras.AdamW`)."""
        key = normalise(entry.name, entry.kind)
        return [e for e in self.entries(entry.kind) if e is not entry and normalise(e.name, e.kind) == key]

    def names(self, kind: str, dialect: str | None = None) -> list[str]:
        return [e.name if dialect else e.qualname for e in self.entries(kind, dialect)]


def _with_provider(entry: Entry, ep: Any) -> Entry:
    from dataclasses import replace

    return replace(entry, provider=getattr(ep.dist, "name", ep.name))


REGISTRY = Registry()


def homonym_note(entry: Entry, written: Any = None) -> str | None:
    """What a name of another dialect that finds `entry` (its `homonyms`: `constant`, HF's, finds torch's
    ConstantLR) means: the note describe() gives, or, for `written`, the name a spec writes without a prefix or a
    dialect, the note its planning gives where it is such a name; None otherwise."""
    from optreg.core import models

    others = [REGISTRY.lookup(entry.kind, qualname) for qualname in entry.homonyms]
    if written is not None:
        others = [o for o in others if spelling(written) in {spelling(n) for n in (o.name, *o.aliases)}]
    if not others:
        return None
    defaults = ", ".join(f"{o.name} {o.default:.4g}" if isinstance(o.default, float) else f"{o.name} {show(o.default)}"
                         for o in models.options(entry) if not o.required and o.name != "last_epoch")
    names = " or ".join(dict.fromkeys(show(o.name) for o in others))
    theirs = "; ".join(f"{o.qualname} is {o.dialect}'s {show(o.name)} ({o.doc.rstrip('.')})" for o in others)
    given = f" ({defaults} unless given)" if defaults else ""
    return (f"{names} without a prefix names {entry.qualname}, by the rule of names (no case, '-', '_' or LR suffix "
            f"in {entry.dialect}'s names): {entry.doc.rstrip('.')}{given}; {theirs}: write "
            f"{' or '.join(o.qualname for o in others)} for it, or {entry.name} for this one")


def _decorator(kind: str, name: str | None, dialect: str, aliases: Iterable[str], row: dict[str, Any]
               ) -> Callable[[Any], Any]:
    def register(obj: Any) -> Any:
        REGISTRY._load()
        REGISTRY.add(Entry(kind, dialect, name or obj.__name__, obj, (obj.__doc__ or "").strip().split("\n")[0],
                           aliases=tuple(aliases), provider=getattr(obj, "__module__", "user"), **row))
        return obj

    return register


def register_optimizer(name: str | None = None, *, dialect: str = DEFAULT_DIALECT, aliases: Iterable[str] = (),
                       **row: Any) -> Callable[[Any], Any]:
    """Decorator: register a `torch.optim.Optimizer` subclass (or factory) under `name`."""
    return _decorator(OPTIMIZER, name, dialect, aliases, row)


def register_scheduler(name: str | None = None, *, dialect: str = DEFAULT_DIALECT, aliases: Iterable[str] = (),
                       **row: Any) -> Callable[[Any], Any]:
    """Decorator: register an LR scheduler class (or a closed-form Schedule) under `name`."""
    return _decorator(SCHEDULER, name, dialect, aliases, row)
