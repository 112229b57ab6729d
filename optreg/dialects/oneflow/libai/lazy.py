"""LiBai's LazyConfig files read with Python's `ast`, never executed.

A LazyConfig (libai.config.LazyConfig, after detectron2) is a Python file whose top-level names are the config:
`optim = LazyCall(flow.optim.AdamW)(params=LazyCall(get_default_optimizer_params)(...), lr=...)`,
`train = dict(train_iter=..., scheduler=LazyCall(WarmupCosineLR)(...))`, names imported from other config files
(`from .common.optim import optim`), then attribute assignments (`train.train_iter = 1000`).

What is read: literals (numbers, strings, lists, tuples, dicts), `LazyCall(X)(**kwargs)` (a mapping with
`_target_: X`), `dict(...)`, `DictConfig(...)` / `OmegaConf.create(...)` (the mapping itself), `x.update(...)`,
names bound in the file and in the config files it imports (found beside it, relative to it, or under an
ancestor folder: `from configs.common.train import train`; `get_config("common/train.py")` under a configs/ folder
up the file's folders, as LiBai reads its packaged configs), attribute and item
assignment, `del`, arithmetic on numbers. Imports of other modules bind their names as symbols (`flow.optim.AdamW`
is the string "oneflow.optim.AdamW"). Any other expression is a `NotRead` value that says what it is, refused
only if the reader needs it; a config import not found is one too (naming the import).

Refused outright (ConfigError at the line, nothing runs): `__import__`, eval/exec/compile/open/getattr/setattr/
globals/locals/vars/breakpoint/input, dunder attributes, lambdas, function and class definitions, a statement
that calls something (other than `x.update(...)`), `if` / `while` / `try` / `with`, loops that assign to the
config's names; a `get_config` LiBai refuses (an absolute path or `..`, other than one path). Loops that touch
other names (datasets) are skipped. In a file the config imports (a module of
code under projects/, such as a dataset's, or a config file), the names imported from it are `NotRead` instead,
saying why: as any value optreg does not evaluate, refused only where the reader needs it.
"""

from __future__ import annotations

import ast
import ntpath
import os
import operator
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from optreg.errors import MAX_INT_BITS, ConfigError, ErrorItem, Location, closest, show

FORBIDDEN_CALLS = {"__import__", "eval", "exec", "compile", "open", "getattr", "setattr", "delattr", "globals",
                   "locals", "vars", "breakpoint", "input", "exit", "quit", "help", "memoryview", "type", "object",
                   "super", "classmethod", "staticmethod", "property", "__builtins__", "print"}
MAPPING_CALLS = {"dict", "DictConfig", "OmegaConf.create", "omegaconf.DictConfig", "omegaconf.OmegaConf.create"}
LAZY_CALL = {"LazyCall", "libai.config.LazyCall", "libai.config.lazy.LazyCall", "L"}
MAX_IMPORTS = 64
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}


class NotRead(str):
    """A value the file computes in a way optreg does not evaluate; the string says what and where. `suggestion`: a
    close value the file may have meant (a config file of get_config's folder), carried by a value read from it."""

    suggestion: str | None = None


class Unbound(NotRead):
    """A name the file neither imports nor binds (`LazyCall(WarmupCosineLR)` without `from libai.scheduler import
    WarmupCosineLR`); `name` is the name."""

    name = ""

    @classmethod
    def of(cls, name: str, where: str) -> "Unbound":
        """`name`, written at `where` (`train.py:3`), unbound."""
        text = cls(f"the name {name!r} ({where}) is neither imported nor bound in the file")
        text.name = name
        return text


class Symbol(str):
    """A name imported from a module that is not a config file (`oneflow.optim.AdamW`)."""


@dataclass
class Lazy:
    """`LazyCall(target)`, not yet called: calling it gives the config mapping {"_target_": target, **kwargs}."""

    target: str


@dataclass
class Module:
    """A config file read: its top-level names, and where each config path was written; `shown` is how its positions
    name it (`Reader.shown`)."""

    path: Path
    env: dict[str, Any] = field(default_factory=dict)
    shown: str = ""


class Marks:
    """Where each config path was written (file, line, column), as optreg.config.yaml_loader.Source locates."""

    def __init__(self, name: str):
        self.name = name
        self.marks: dict[str, Location] = {}

    def exactly(self, path: str) -> Location | None:
        return self.marks.get(path)

    def __call__(self, path: str) -> Location | None:
        while True:
            if path in self.marks:
                return self.marks[path]
            if not path:
                return Location(self.name)
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""


def _refuse(node: ast.AST, file: str, message: str) -> ConfigError:
    return ConfigError([ErrorItem("", f"{message}; optreg reads LazyConfig files without running them",
                                  Location(file, getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1))])


def parse(text: str, file: str) -> ast.Module:
    """The file's syntax tree; a file that is not Python (or nests too deep to parse) is a located ConfigError."""
    try:
        return ast.parse(text, filename=file)
    except SyntaxError as exc:
        raise ConfigError([ErrorItem("", f"not Python: {exc.msg}", Location(file, exc.lineno or 0,
                                                                             exc.offset or 0))]) from None
    except (RecursionError, MemoryError, ValueError) as exc:   # nesting beyond the parser, a NUL byte
        raise ConfigError([ErrorItem("", f"not a config optreg can parse: {type(exc).__name__}",
                                     Location(file))]) from None


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _root(node: ast.AST) -> str | None:
    """The name an attribute or item chain starts from (`optim` of `optim.params["x"].y`), else None."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _changed(stmt: ast.AST) -> list[ast.AST]:
    """What a statement changes in place: its targets (assigned, augmented, annotated, deleted: each item of a tuple
    target) and the mapping an `x.update(...)` updates."""
    if isinstance(stmt, (ast.Assign, ast.Delete)):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        targets = [stmt.target]
    elif isinstance(stmt, ast.Call) and isinstance(stmt.func, ast.Attribute) and stmt.func.attr == "update":
        targets = [stmt.func.value]
    else:
        return []
    out = []
    while targets:
        target = targets.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            targets.extend(target.elts)
        else:
            out.append(target.value if isinstance(target, ast.Starred) else target)
    return out


def _unpacked(value: Any, where: str) -> NotRead:
    """`**value` (or `{**value}`) of a value that is not a mapping read: what it unpacks is not known."""
    return value if isinstance(value, NotRead) else NotRead(f"** of {type(value).__name__} ({where})")


def screen(tree: ast.AST, file: str) -> None:
    """Refuse what tries to run code, anywhere in the file, before anything is read."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            raise _refuse(node, file, "a lambda or a function or class definition")
        if isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            raise _refuse(node, file, f"the attribute {node.attr!r}")
        if isinstance(node, ast.Name) and (node.id in FORBIDDEN_CALLS or node.id.startswith("__")):
            raise _refuse(node, file, f"the name {node.id!r}")
        if isinstance(node, (ast.If, ast.While, ast.Try, ast.With, ast.AsyncWith, ast.AsyncFor, ast.Global,
                             ast.Nonlocal, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
            raise _refuse(node, file, f"a {type(node).__name__.lower()} statement")


class Reader:
    """Reads one LazyConfig file and the config files it imports (each once; `MAX_IMPORTS` at most)."""

    def __init__(self, roots: tuple[str, ...] = ("optim", "train")):
        self.roots = roots
        self.modules: dict[Path, Module] = {}
        self.unread: dict[Path, str] = {}   # an imported file refused: why (`_load`)
        self.marks: Marks | None = None
        self.main: tuple[Path, str] | None = None   # the file read first, and its name as the user gave it

    def shown(self, path: Path) -> str:
        """How a position names the file `path`: the first file read by the name it was given (`read`'s `name`), a
        file it imports by that name's folder and its way from there (`lb/cfg.py` imports `lb/common/train.py`), as
        a YAML file's positions name it."""
        if self.main is None:
            return str(path)
        main, name = self.main
        if path == main:
            return name
        return os.path.normpath(os.path.join(os.path.dirname(name), os.path.relpath(path, main.parent)))

    # -- files -------------------------------------------------------------------------------------
    def read(self, text: str, path: Path, name: str | None = None) -> Module:
        """The file at `path` (resolved), its imports read too; `name`: how the user named it, for the first file."""
        if self.main is None and name is not None:
            self.main = (path, name)
        if len(self.modules) >= MAX_IMPORTS:
            raise ConfigError(f"{self.shown(path)}: more than {MAX_IMPORTS} config files imported")
        module = Module(path, shown=self.shown(path))
        tree = parse(text, module.shown)
        screen(tree, module.shown)
        self.modules[path] = module
        for stmt in tree.body:
            self._statement(stmt, module)
        return module

    def _load(self, file: Path) -> Module | NotRead:
        """The imported file's module, or why it is not read (a NotRead: a refusal, in its words and at its line)."""
        file = file.resolve()
        if file not in self.modules and file not in self.unread:
            try:
                text = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError([ErrorItem("", f"cannot read the imported config: {type(exc).__name__}",
                                             Location(self.shown(file)))]) from None
            try:
                self.read(text, file)
            except ConfigError as exc:   # what it binds, partly read, is not known: none of it is read
                self.modules.pop(file, None)
                self.unread[file] = str(exc).splitlines()[0]
        if file in self.unread:
            return NotRead(self.unread[file])
        return self.modules[file]

    @staticmethod
    def _refused(node: ast.AST, module: Module, message: str) -> ConfigError:
        """What LiBai itself refuses at `node` of the file."""
        return ConfigError([ErrorItem("", message, Location(module.shown, getattr(node, "lineno", 0),
                                                            getattr(node, "col_offset", -1) + 1))])

    def _config_file(self, module: str, level: int, here: Path) -> Path | None | bool:
        """The config file of an import: a Path, None when it should be one but is not found, False when the module
        is a library's (oneflow, libai)."""
        parts = module.split(".") if module else []
        if level:
            base = here.parent
            for _ in range(level - 1):
                base = base.parent
            candidates = [base.joinpath(*parts).with_suffix(".py")] if parts else []
        elif parts and parts[0] in ("configs", "projects"):
            candidates = [p.joinpath(*parts).with_suffix(".py") for p in [here.parent, *here.parent.parents]]
        else:
            return False
        return next((c for c in candidates if c.is_file()), None)

    # -- statements --------------------------------------------------------------------------------
    def _statement(self, stmt: ast.stmt, module: Module) -> None:
        env, file = module.env, module.shown
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                env[alias.asname or alias.name.split(".")[0]] = Symbol(alias.name if alias.asname else
                                                                       alias.name.split(".")[0])
        elif isinstance(stmt, ast.ImportFrom):
            found = self._config_file(stmt.module or "", stmt.level, module.path)
            text = f"from {'.' * stmt.level}{stmt.module or ''} import ..."
            for alias in stmt.names:
                name = alias.asname or alias.name
                if found is False:
                    env[name] = Symbol(f"{stmt.module}.{alias.name}")
                elif found is None:
                    env[name] = NotRead(f"{alias.name} of the config file {'.' * stmt.level}{stmt.module} "
                                        f"({file}:{stmt.lineno}: {text}), which is not beside the file")
                else:
                    other = self._load(found)
                    env[name] = NotRead(f"{alias.name} of {other}") if isinstance(other, NotRead) else \
                        other.env.get(alias.name, NotRead(f"{alias.name}: not in {other.shown}"))
        elif isinstance(stmt, ast.Assign):
            value = self._expr(stmt.value, module)
            for target in stmt.targets:
                self._assign(target, value, module, stmt)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._assign(stmt.target, self._expr(stmt.value, module), module, stmt)
        elif isinstance(stmt, ast.AugAssign):
            current = self._expr(stmt.target, module)
            value = self._arith(type(stmt.op), current, self._expr(stmt.value, module), stmt, module)
            self._assign(stmt.target, value, module, stmt)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                self._delete(target, module)
        elif isinstance(stmt, ast.Expr):
            self._expression_statement(stmt, module)
        elif isinstance(stmt, ast.For):
            touched = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            roots = {_root(t) for s in ast.walk(stmt) for t in _changed(s)}
            if (touched | roots) & set(self.roots):
                raise _refuse(stmt, file, "a loop that assigns to " + ", ".join(sorted((touched | roots) &
                                                                                    set(self.roots))))
        elif not isinstance(stmt, ast.Pass):
            raise _refuse(stmt, file, f"a {type(stmt).__name__} statement")

    def _expression_statement(self, stmt: ast.Expr, module: Module) -> None:
        node = stmt.value
        if isinstance(node, ast.Constant):
            return   # a docstring
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update":
            target = self._expr(node.func.value, module)   # a mapping not read (NotRead) is left as it is
            if isinstance(target, dict):
                values = [self._expr(arg, module) for arg in node.args]
                keywords = self._keywords(node.keywords, module, f"{Path(module.shown).name}:{stmt.lineno}")
                if isinstance(keywords, NotRead) or not all(isinstance(v, dict) for v in values):
                    if _root(node.func.value) in self.roots:   # what it sets in the config is not known
                        raise _refuse(stmt, module.shown, f"{_dotted(node.func) or 'update'}(...) of a value optreg "
                                                          f"does not read")
                    return
                for value in values:
                    target.update(value)
                target.update(keywords)
                dotted = _dotted(node.func.value)
                if dotted is not None:   # each key it sets is where this call writes it, as an assignment's
                    for key in [k for v in values for k in v] + list(keywords):
                        self._forget(f"{dotted}.{key}")
                    for given in [*node.args, node]:   # dict(...) / {...} arguments, then the call's keywords
                        self._mark_value(dotted, given, module)
            return
        called = _dotted(getattr(node, "func", node)) or "something"
        raise _refuse(stmt, module.shown, f"a statement that calls {called}")

    def _container(self, node: ast.AST, module: Module) -> tuple[Any, Any] | None:
        """(the container, its key) an assignment target names, or None when it is not read."""
        if isinstance(node, ast.Attribute):
            owner, key = self._expr(node.value, module), node.attr
        elif isinstance(node, ast.Subscript):
            owner, key = self._expr(node.value, module), self._expr(node.slice, module)
        else:
            return None
        if isinstance(owner, dict) and isinstance(key, (str, int)):
            return owner, key
        if isinstance(owner, list) and isinstance(key, int) and -len(owner) <= key < len(owner):
            return owner, key
        return None

    def _assign(self, target: ast.AST, value: Any, module: Module, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            module.env[target.id] = value
            self._forget(target.id)
            self._mark_value(target.id, getattr(stmt, "value", None), module)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            values = value if isinstance(value, (list, tuple)) and len(value) == len(target.elts) else \
                [NotRead(f"an unpacking at line {stmt.lineno}")] * len(target.elts)
            for t, v in zip(target.elts, values):
                self._assign(t, v, module, stmt)
            return
        found = self._container(target, module)
        if found is not None:
            found[0][found[1]] = value
        self._mark(target, module, stmt)

    def _mark(self, target: ast.AST, module: Module, stmt: ast.stmt) -> None:
        dotted = _dotted(target)
        if self.marks is not None and dotted and dotted.split(".")[0] in self.roots:
            self._forget(dotted)
            self.marks.marks[dotted] = Location(module.shown, stmt.lineno, stmt.col_offset + 1)
            self._mark_value(dotted, getattr(stmt, "value", None), module)

    def _forget(self, path: str) -> None:
        """Drops the marks of `path` and below: bound anew, it is where the new binding is (a value the file binds
        over an imported one is located in the file, not in the import)."""
        if self.marks is not None:
            for key in [k for k in self.marks.marks if k == path or k.startswith((path + ".", path + "["))]:
                del self.marks.marks[key]

    def _mark_value(self, path: str, node: ast.AST | None, module: Module) -> None:
        """Where each keyword of a dict(...) / LazyCall(...)(...) value under a config root was written: the keyword
        (`lr` of `lr=-1`, the key of a {"lr": -1} literal), as a YAML file's key is."""
        if self.marks is None or path.split(".")[0] not in self.roots or node is None:
            return
        self.marks.marks.setdefault(path, Location(module.shown, node.lineno, node.col_offset + 1))
        pairs = [(k.arg, k, k.value) for k in node.keywords if k.arg] if isinstance(node, ast.Call) else \
            [(k.value, k, v) for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant)] \
            if isinstance(node, ast.Dict) else []
        for key, at, value in pairs:
            self.marks.marks[f"{path}.{key}"] = Location(module.shown, at.lineno, at.col_offset + 1)
            self._mark_value(f"{path}.{key}", value, module)

    def _delete(self, target: ast.AST, module: Module) -> None:
        if isinstance(target, ast.Name):
            module.env.pop(target.id, None)
            return
        found = self._container(target, module)
        if found is not None and isinstance(found[0], dict):
            found[0].pop(found[1], None)

    # -- expressions -------------------------------------------------------------------------------
    def _expr(self, node: ast.AST, module: Module) -> Any:
        env, file = module.env, module.shown
        where = f"{Path(file).name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [self._expr(e, module) for e in node.elts]
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.Dict):
            out = {}
            for k, v in zip(node.keys, node.values):
                if k is None:   # {**x}
                    inner = self._expr(v, module)
                    if not isinstance(inner, dict):
                        return _unpacked(inner, where)
                    out.update(inner)
                else:
                    key = self._expr(k, module)
                    try:
                        out[key] = self._expr(v, module)
                    except TypeError:   # {[1]: 2}: Python refuses the key when it runs the file
                        return NotRead(f"a mapping with a {type(key).__name__} key ({where})")
            return out
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            if node.id in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[node.id]
            return Unbound.of(node.id, where)
        if isinstance(node, ast.Attribute):
            owner = self._expr(node.value, module)
            if isinstance(owner, Symbol):
                return Symbol(f"{owner}.{node.attr}")
            if isinstance(owner, dict):
                return owner.get(node.attr, NotRead(f"{node.attr!r} is not set ({where})"))
            text = NotRead(f"an attribute of {owner if isinstance(owner, NotRead) else type(owner).__name__} "
                           f"({where})")
            text.suggestion = getattr(owner, "suggestion", None)
            return text
        if isinstance(node, ast.Subscript):
            owner, key = self._expr(node.value, module), self._expr(node.slice, module)
            try:
                return owner[key] if isinstance(owner, (dict, list, tuple)) else NotRead(f"an item ({where})")
            except (KeyError, IndexError, TypeError):
                return NotRead(f"a missing item ({where})")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self._expr(node.operand, module)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return -value if isinstance(node.op, ast.USub) else value
            return NotRead(f"a sign on a non-number ({where})")
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return self._arith(type(node.op), self._expr(node.left, module), self._expr(node.right, module), node,
                               module)
        if isinstance(node, ast.Call):
            return self._call(node, module, where)
        return NotRead(f"a {type(node).__name__} expression ({where})")

    def _arith(self, op: type, left: Any, right: Any, node: ast.AST, module: Module) -> Any:
        """`left op right` on numbers: integers beyond float range (MAX_INT_BITS) are not operands, so that a chain
        of powers or products stays bounded in time; anything else is NotRead (an operand not read: that one)."""
        not_read = [v for v in (left, right) if isinstance(v, NotRead)]
        if not_read:
            return not_read[0]
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right))
        if not numbers or op is ast.Pow and abs(right) > 64 or any(
                isinstance(v, int) and v.bit_length() > MAX_INT_BITS for v in (left, right)):
            return NotRead(f"arithmetic on {show(left)} and {show(right)} (line {getattr(node, 'lineno', 0)})")
        try:
            return _BINARY[op](left, right)
        except (ZeroDivisionError, OverflowError):
            return NotRead(f"arithmetic that fails (line {getattr(node, 'lineno', 0)})")

    def _keywords(self, keywords: list[ast.keyword], module: Module, where: str) -> dict[str, Any] | NotRead:
        """The keyword arguments of a call, `**mapping` merged; a `**` of anything but a mapping read is NotRead."""
        out: dict[str, Any] = {}
        for k in keywords:
            value = self._expr(k.value, module)
            if k.arg is not None:
                out[k.arg] = value
            elif isinstance(value, dict):
                out.update(value)
            else:
                return _unpacked(value, where)
        return out

    def _call(self, node: ast.Call, module: Module, where: str) -> Any:
        if isinstance(node.func, ast.Call):   # LazyCall(X)(...)
            factory = self._expr(node.func, module)
            if isinstance(factory, Lazy):
                if node.args:
                    return NotRead(f"positional arguments to LazyCall({factory.target}) ({where})")
                keywords = self._keywords(node.keywords, module, where)
                return keywords if isinstance(keywords, NotRead) else {"_target_": factory.target, **keywords}
            return NotRead(f"a call of a call ({where})")
        func = self._expr(node.func, module)
        name = str(func) if isinstance(func, Symbol) else _dotted(node.func)
        bare = _dotted(node.func)
        if func in LAZY_CALL or bare in LAZY_CALL or (isinstance(func, Symbol) and func.endswith(".LazyCall")):
            if len(node.args) != 1 or node.keywords:
                return NotRead(f"LazyCall takes one target ({where})")
            target = self._expr(node.args[0], module)
            if not isinstance(target, str):
                return NotRead(f"a LazyCall target ({where})")
            return Lazy(target if isinstance(target, NotRead) else str(target))   # a target not read says why
        if bare in MAPPING_CALLS or name in MAPPING_CALLS or (isinstance(func, Symbol) and
                                                               func.split(".")[-1] in ("DictConfig", "create")):
            out = {}
            for arg in node.args:
                value = self._expr(arg, module)
                if not isinstance(value, dict):
                    return NotRead(f"{bare} of a non-mapping ({where})")
                out.update(value)
            keywords = self._keywords(node.keywords, module, where)
            return keywords if isinstance(keywords, NotRead) else {**out, **keywords}
        if bare == "get_config" or (isinstance(func, Symbol) and func.endswith(".get_config")):
            return self._get_config(node, module, where)
        return NotRead(f"a call to {name or bare or 'an expression'} ({where})")

    def _get_config(self, node: ast.Call, module: Module, where: str) -> Any:
        """libai.config.get_config(config_path): LiBai's `pkg_resources.resource_filename("libai.config",
        os.path.join("configs", config_path))`, a file of the configs/ folder it packages (a checkout's configs/, in
        the file's folder or an ancestor). A ConfigError at the call: other than one path (LiBai's TypeError), and a
        path that leaves that folder, absolute or through `..` (pkg_resources deprecates both in a resource path and
        refuses a Windows absolute one; optreg reads no file outside the folder). A file that is not there is a
        NotRead naming the closest file of its folder (LiBai: "not available in LiBai configs")."""
        given = [*node.args, *(k.value for k in node.keywords)]
        if len(given) != 1 or any(k.arg != "config_path" for k in node.keywords):
            raise self._refused(node, module, f"get_config takes one config path (get_config(config_path)), got "
                                              f"{len(node.args)} arguments and "
                                              f"{', '.join(str(k.arg) for k in node.keywords) or 'no keywords'}")
        arg = self._expr(given[0], module)
        if not isinstance(arg, str) or isinstance(arg, NotRead):
            return NotRead(f"get_config of a non-literal ({where})")
        inside = posixpath.normpath(posixpath.join("configs", arg))   # LiBai joins it to configs/
        if posixpath.isabs(arg) or ntpath.isabs(arg) or arg.startswith("\\") or not inside.startswith("configs/"):
            raise self._refused(node, module, f"get_config({arg!r}): LiBai's get_config takes a path relative to "
                                              f"its packaged configs/ folder (common/train.py); an absolute path "
                                              f"or a `..` out of that folder leaves it (pkg_resources deprecates "
                                              f"both in a resource path; optreg reads no file outside the folder)")
        folders = [base / "configs" for base in [module.path.parent, *module.path.parent.parents]]
        for folder in folders:
            candidate = folder.parent / inside
            if candidate.is_file():
                other = self._load(candidate)
                return NotRead(f"get_config({arg!r}) ({where}): {other}") if isinstance(other, NotRead) else \
                    dict(other.env)
        text = NotRead(f"get_config({arg!r}) ({where}): no configs/ folder up the file's folders has {arg} (LiBai: "
                       f"not available in LiBai configs)")
        within = posixpath.dirname(inside.removeprefix("configs/"))
        near = [posixpath.join(within, f.name) for folder in folders if (folder / within).is_dir()
                for f in sorted((folder / within).iterdir()) if f.suffix == ".py"]
        text.suggestion = closest(arg, near)
        return text
