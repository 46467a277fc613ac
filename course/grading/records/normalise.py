"""What a script can change in a module without changing what it does, undone before the
module is fingerprinted (``copies.py``).

A learner's script can pad code with statements that do nothing, swap statements that do not
depend on each other, and move blocks into helpers; each breaks the runs of syntax that
fingerprints are made of. So, in place, and the same for every submission and the reference:

- a helper the module defines once and calls once, from a statement (``x = helper(a, b)``,
  ``helper(a)``, ``return helper(a)``), is put back where it is called (up to
  ``INLINED_DEPTH`` helpers deep): its parameters become the arguments' names, what it
  returns the names it is assigned to;
- expressions of constants are folded (``3 * 7`` is ``21``), and a branch a constant decides is
  replaced by the branch taken (``if 0:`` goes, ``if True:`` is its body);
- statements with no effect go: what follows a ``return``, ``raise``, ``break`` or
  ``continue`` in its block, ``pass``, a bare constant or docstring, an expression of names,
  constants, operators and calls of pure builtins, ``x = x``, an ``if`` on such an expression
  with nothing in it; and every store of a function's local name that nothing reads (a dead
  store), repeated while a removal leaves another store unread;
- within each block of a function, statements that neither read nor write what another writes
  are put in one order (the same wherever they were), so numbering names by first use gives
  the same numbers.

What is left is what the code does. Every pass walks the tree without recursing on
expressions (a learner's deep nesting never recurses), once per round.
"""

from __future__ import annotations

import ast
import bisect
import heapq
import operator
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

INLINED_DEPTH = 8  # rounds of putting helpers back: a helper inside a helper, 8 deep
SHAPE_NODES = 400  # of a statement, read to order it among independent ones
USES_SHAPED = 8  # statements reading a name, read to order the one writing it
FOLDED_SIZE = 256  # characters or digits a folded constant may have
PURE_BUILTINS = frozenset({
    "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "dict", "divmod",
    "enumerate", "float", "format", "frozenset", "hash", "hex", "id", "int", "isinstance",
    "issubclass", "len", "list", "max", "min", "oct", "ord", "pow", "range", "repr", "reversed",
    "round", "set", "sorted", "str", "sum", "tuple", "type", "zip",
})  # fmt: skip
"""Builtins whose call changes nothing: a statement calling only these has no effect."""
PURE_METHODS = frozenset({
    "copy", "count", "endswith", "find", "format", "get", "index", "isdigit", "isidentifier",
    "islower", "isspace", "isupper", "items", "join", "keys", "lower", "lstrip", "partition",
    "replace", "rfind", "rpartition", "rsplit", "rstrip", "split", "splitlines", "startswith",
    "strip", "title", "upper", "values",
})  # fmt: skip
"""Methods of the builtin types that change nothing (a list's ``append`` does)."""
SHOWN_ONLY = frozenset({"print"})
"""Calls whose only effect is what they show: no part of what a function computes."""

_OWN_SCOPES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_FUNCTIONS, ast.Lambda, ast.ClassDef)
_BLOCK_FIELDS = ("body", "orelse", "finalbody")
_SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)
_LAST = (ast.Return, ast.Raise, ast.Break, ast.Continue)


def normalised(tree: ast.Module, keep: frozenset[str]) -> ast.Module:
    """``tree`` changed in place as the module's docstring says (``keep``: names never put
    back where they are called, as the lab functions and what the starter defines)."""
    _fold(tree)
    again = True
    for rounds in range(2):  # helpers are put back once the padding is out of them
        if not again:
            break
        tree.body = _cleaned(tree.body)
        idle = _Idle(tree)
        for function in _outer_functions(tree):
            _drop_idle_calls(function, idle)
            _drop_dead_stores(function)
            function.body = _cleaned(function.body)
        again = not rounds and _inline_helpers(tree, keep)
    for function in _outer_functions(tree):
        blocks = [block for block in _blocks(function) if len(block) > 1]
        local = _local_names(function) if blocks else frozenset()
        for block in blocks:
            block[:] = _canonical_order(block, local)
    return tree


# --------------------------------------------------------------------------- walking


def _own_blocks(node: ast.AST) -> list[list[ast.stmt]]:
    """The statement lists directly under ``node`` (handlers' and match cases' bodies too)."""
    found = []
    for name in _BLOCK_FIELDS:
        value = getattr(node, name, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            found.append(value)
    for child in [*getattr(node, "handlers", ()), *getattr(node, "cases", ())]:
        found.append(child.body)
    return found


def _blocks(root: ast.AST) -> list[list[ast.stmt]]:
    """Every statement list under ``root``, inner ones before those holding them (only
    statements are walked: no expression holds one)."""
    found: list[list[ast.stmt]] = []
    todo = [root]
    while todo:
        for block in _own_blocks(todo.pop()):
            found.append(block)
            todo.extend(block)
    return found[::-1]


def _outer_functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module's functions and its classes' methods (each with what it nests)."""
    for node in tree.body:
        if isinstance(node, _FUNCTIONS):
            yield node
        elif isinstance(node, ast.ClassDef):
            yield from (n for n in node.body if isinstance(n, _FUNCTIONS))


def _in_scope(root: ast.AST) -> Iterator[ast.AST]:
    """``root``'s nodes outside the comprehensions and lambdas it holds (their own scopes)."""
    todo = list(ast.iter_child_nodes(root))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _OWN_SCOPES):
            todo += ast.iter_child_nodes(node)


def _local_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The function's parameters and every name its own scope binds."""
    names = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    for node in _in_scope(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, (*_FUNCTIONS, ast.ClassDef, ast.ExceptHandler)) and node.name:
            names.add(node.name)
    return frozenset(names)


# --------------------------------------------------------------------------- effects


def _pure_call(call: ast.Call) -> bool:
    """A call of a pure builtin, of a method of a constant (``'a'.upper()``) or of one of
    ``PURE_METHODS``."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in PURE_BUILTINS
    if not isinstance(func, ast.Attribute):
        return False
    return isinstance(func.value, ast.Constant) or func.attr in PURE_METHODS


def is_pure(expression: ast.AST) -> bool:
    """Whether evaluating ``expression`` changes nothing: no call but of pure builtins, no
    assignment expression, no ``yield`` or ``await``."""
    for node in ast.walk(expression):
        if isinstance(node, ast.Call) and not _pure_call(node):
            return False
        if isinstance(node, ast.NamedExpr | ast.Yield | ast.YieldFrom | ast.Await):
            return False
    return True


def _base(target: ast.AST) -> str | None:
    """The name an attribute, item or method is reached through (``a`` of ``a.b[0].c``)."""
    while isinstance(target, ast.Attribute | ast.Subscript | ast.Starred):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


_COMPOUND = (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.AsyncFor, ast.AsyncWith)
_WALLS = (
    *_SCOPES, ast.Return, ast.Break, ast.Continue, ast.Global, ast.Nonlocal, ast.NamedExpr,
    ast.Yield, ast.YieldFrom, ast.Await,
)  # fmt: skip


def _effects(statement: ast.stmt) -> tuple[set[str], set[str], bool] | None:
    """A statement's names read and written (an attribute, an item or a method's object
    changed counts as its name written) and whether it calls anything impure or may raise;
    None for one nothing is moved across (``return``, ``raise``, a loop's ``break``, a block
    holding one…)."""
    if not isinstance(statement, (*_SIMPLE, *_COMPOUND)):
        return None
    reads: set[str] = set()
    writes: set[str] = set()
    calls = False
    for node in ast.walk(statement):
        if isinstance(node, _WALLS):
            return None
        if isinstance(node, ast.Name):
            (writes if isinstance(node.ctx, ast.Store | ast.Del) else reads).add(node.id)
        elif isinstance(node, ast.Attribute | ast.Subscript) and isinstance(node.ctx, ast.Store):
            writes.update(filter(None, [_base(node)]))
        elif isinstance(node, ast.Call) and not _pure_call(node):
            calls = True
            if isinstance(node.func, ast.Attribute):
                writes.update(filter(None, [_base(node.func.value)]))
        elif isinstance(node, ast.Raise | ast.Assert):
            calls = True
    if isinstance(statement, ast.AugAssign):
        reads.update(filter(None, [_base(statement.target)]))
    return reads, writes, calls


# --------------------------------------------------------------------------- folding

_OPERATORS: dict[type[ast.AST], Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
    ast.Invert: operator.invert,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_SMALL = (int, float, str, bool, type(None))


def _small(value: object) -> bool:
    if isinstance(value, str):
        return len(value) <= FOLDED_SIZE
    if isinstance(value, int) and not isinstance(value, bool):
        return value.bit_length() <= 4 * FOLDED_SIZE
    return isinstance(value, _SMALL)


def _bounded(op: ast.AST, left: object, right: object) -> bool:
    """Whether ``left op right`` stays small enough to compute (never ``9 ** 9 ** 9``)."""
    if isinstance(op, ast.Pow | ast.LShift):
        return isinstance(right, int) and abs(right) <= 64 and not isinstance(left, str)
    if isinstance(op, ast.Mult):
        for text, times in ((left, right), (right, left)):
            if isinstance(text, str):
                return isinstance(times, int) and len(text) * max(times, 0) <= FOLDED_SIZE
    return True


def _folded(node: ast.AST) -> ast.Constant | None:
    """``node`` as one constant, when it is an operation on constants small enough."""
    try:
        value: object
        if isinstance(node, ast.BinOp):
            left, right = node.left, node.right
            if not (isinstance(left, ast.Constant) and isinstance(right, ast.Constant)):
                return None
            if not (_small(left.value) and _small(right.value)):
                return None
            if not _bounded(node.op, left.value, right.value):
                return None
            value = _OPERATORS[type(node.op)](left.value, right.value)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
            if not _small(node.operand.value):
                return None
            value = _OPERATORS[type(node.op)](node.operand.value)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right = node.left, node.comparators[0]
            if not (isinstance(left, ast.Constant) and isinstance(right, ast.Constant)):
                return None
            if not (_small(left.value) and _small(right.value)):
                return None
            operation = _OPERATORS.get(type(node.ops[0]))
            if operation is None:
                return None
            value = operation(left.value, right.value)
        elif isinstance(node, ast.BoolOp) and all(isinstance(v, ast.Constant) for v in node.values):
            values = [v.value for v in node.values if isinstance(v, ast.Constant)]
            if not all(_small(v) for v in values):
                return None
            value = values[0]
            for more in values[1:]:
                value = (value and more) if isinstance(node.op, ast.And) else (value or more)
        else:
            return None
    except (ArithmeticError, TypeError, ValueError):
        return None
    return ast.Constant(value) if isinstance(value, _SMALL) and _small(value) else None


def _fold(tree: ast.AST) -> None:
    """Every operation on constants replaced by its constant, innermost first (in place)."""
    order: list[tuple[ast.AST, str, int | None]] = []  # (parent, field, index), pre-order
    todo: list[ast.AST] = [tree]
    while todo:
        parent = todo.pop()
        for name, value in ast.iter_fields(parent):
            if isinstance(value, ast.AST):
                order.append((parent, name, None))
                todo.append(value)
            elif isinstance(value, list):
                for at, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        order.append((parent, name, at))
                        todo.append(item)
    for parent, name, index in reversed(order):  # children before their parents
        value = getattr(parent, name)
        node = value if index is None else value[index]
        if not isinstance(node, ast.expr):
            continue
        folded: ast.expr | None = _folded(node)
        if isinstance(node, ast.IfExp) and isinstance(node.test, ast.Constant):
            folded = node.body if node.test.value else node.orelse  # the branch taken
        if folded is None:
            continue
        if index is None:
            setattr(parent, name, folded)
        else:
            value[index] = folded


# --------------------------------------------------------------------------- no-ops


def is_no_op(statement: ast.stmt) -> bool:
    """Whether ``statement`` has no effect (``pass``, a docstring, a pure expression, ``x = x``,
    an ``if`` with nothing in it)."""
    match statement:
        case ast.Pass() | ast.AnnAssign(value=None):
            return True
        case ast.Expr(value=value):
            return is_pure(value)
        case ast.Assign(targets=[ast.Name(id=target)], value=ast.Name(id=source)):
            return target == source
        case ast.Assign(targets=[ast.Tuple(elts=targets)], value=ast.Tuple(elts=sources)):
            return len(targets) == len(sources) and all(
                isinstance(t, ast.Name) and isinstance(s, ast.Name) and t.id == s.id
                for t, s in zip(targets, sources, strict=True)
            )
        case ast.If(test=test, body=body, orelse=orelse):
            return is_pure(test) and not body and not orelse
    return False


def _cleaned(block: list[ast.stmt]) -> list[ast.stmt]:
    """``block`` with the branches constants decide replaced by the branch taken, and its
    statements with no effect left out (the blocks under it are cleaned first)."""
    out: list[ast.stmt] = []
    for statement in block:
        for name in _BLOCK_FIELDS:
            value = getattr(statement, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(statement, name, _cleaned(value))
        for child in [*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())]:
            child.body = _cleaned(child.body)
        if isinstance(statement, ast.If) and isinstance(statement.test, ast.Constant):
            out += statement.body if statement.test.value else statement.orelse
        elif isinstance(statement, ast.While) and isinstance(statement.test, ast.Constant):
            out += [statement] if statement.test.value else statement.orelse
        elif not is_no_op(statement):
            out.append(statement)
        if isinstance(statement, _LAST):
            break  # what follows is never run
    return out


class _Idle:
    """Which of the module's functions do nothing (an empty body, or one that returns a pure
    expression): a call of one, as a statement, has no effect. Each is looked at once, when a
    statement calls it."""

    def __init__(self, tree: ast.Module) -> None:
        self.functions = {node.name: node for node in tree.body if isinstance(node, _FUNCTIONS)}
        self.known: dict[str, bool] = {}

    def __contains__(self, name: str) -> bool:
        if name not in self.known:
            function = self.functions.get(name)
            self.known[name] = function is not None and all(
                isinstance(s, ast.Return) and (s.value is None or is_pure(s.value))
                for s in function.body
            )
        return self.known[name]


def _drop_idle_calls(function: ast.FunctionDef | ast.AsyncFunctionDef, idle: _Idle) -> None:
    """Every call, as a statement, that cannot change what the function computes, in place: a
    call of ``print``, of one of the module's ``idle`` functions with pure arguments, or of
    anything given none of the function's own names (``sys.stdout.write("")``)."""
    blocks = [
        block
        for block in _blocks(function)
        if any(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) for s in block)
    ]
    if not blocks:
        return
    local = _local_names(function)

    def idle_call(statement: ast.stmt) -> bool:
        if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
            return False
        call = statement.value
        name = call.func.id if isinstance(call.func, ast.Name) else ""
        if name in SHOWN_ONLY or (name in idle and all(map(is_pure, call.args))):
            return True
        return not any(isinstance(n, ast.Name) and n.id in local for n in ast.walk(call))

    for block in blocks:
        block[:] = [statement for statement in block if not idle_call(statement)]


def _store_names(statement: ast.stmt) -> list[str] | None:
    """The names a store binds, when that is all it does (``a = b = …``, ``a, b = …``,
    ``a: T = …``, ``a += …``); None for anything else."""
    if isinstance(statement, ast.Assign):
        targets = [
            t
            for target in statement.targets
            for t in (target.elts if isinstance(target, ast.Tuple | ast.List) else [target])
        ]
    elif isinstance(statement, ast.AnnAssign | ast.AugAssign) and statement.value is not None:
        targets = [statement.target]
    else:
        return None
    if not all(isinstance(t, ast.Name) for t in targets):
        return None
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _drop_dead_stores(function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """Every statement that only binds local names nothing reads, in place; a store whose
    removal leaves another name unread goes too (a worklist: linear in the function)."""
    stores: dict[str, list[ast.stmt]] = defaultdict(list)
    for block in _blocks(function):
        for statement in block:
            for name in _store_names(statement) or ():
                stores[name].append(statement)
    if not stores:
        return
    pinned: set[str] = set()
    reads: Counter[str] = Counter()
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load | ast.Del):
            reads[node.id] += 1
        elif isinstance(node, ast.Global | ast.Nonlocal):
            pinned.update(node.names)
    removed: set[int] = set()
    todo = [name for name in stores if not reads[name] and name not in pinned]
    while todo:
        name = todo.pop()
        for statement in stores.pop(name, ()):
            names = _store_names(statement) or []
            if id(statement) in removed or any(reads[n] or n in pinned for n in names):
                continue
            removed.add(id(statement))
            for node in ast.walk(statement):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    reads[node.id] -= 1
                    if not reads[node.id] and node.id in stores and node.id not in pinned:
                        todo.append(node.id)
    if removed:
        for block in _blocks(function):
            block[:] = [s for s in block if id(s) not in removed]


# --------------------------------------------------------------------------- order


def _shape(statement: ast.stmt, local: frozenset[str]) -> tuple[list[str], dict[str, list[int]]]:
    """A statement's syntax with every local name alike (what orders independent ones), and
    where each local name is in it."""
    shape: list[str] = []
    where: dict[str, list[int]] = defaultdict(list)
    for node in islice(ast.walk(statement), SHAPE_NODES):
        if isinstance(node, ast.Name):
            if node.id in local:
                where[node.id].append(len(shape))
            shape.append("v" if node.id in local else node.id)
        elif isinstance(node, ast.Constant):
            shape.append(repr(node.value)[:40])
        elif isinstance(node, ast.Attribute):
            shape.append(f".{node.attr}")
        else:
            shape.append(type(node).__name__)
    return shape, where


def _marked(shaped: tuple[list[str], dict[str, list[int]]], name: str) -> tuple[str, ...]:
    """A statement's shape with ``name`` told apart from the other local names."""
    shape, where = shaped
    marked = list(shape)
    for at in where.get(name, ()):
        marked[at] = "*"
    return tuple(marked)


def _loaded(statement: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}


def _canonical_order(block: list[ast.stmt], local: frozenset[str]) -> list[ast.stmt]:
    """``block`` with its statements in one order: each after every statement it depends on
    (by the names each reads and writes; two impure calls keep their order; nothing moves
    across ``return``, ``raise`` or a block holding a ``return``), the first by shape among
    those ready, then by how later statements read what it writes, then where it was."""
    if len(block) < 2:
        return block
    after: list[set[int]] = [set() for _ in block]
    writer: dict[str, int] = {}
    readers: dict[str, list[int]] = defaultdict(list)
    wall, last_call = -1, -1
    since_wall: list[int] = []
    written: list[set[str]] = [set() for _ in block]
    read_by: dict[str, list[int]] = defaultdict(list)  # each name: the statements reading it
    for i, statement in enumerate(block):
        effects = _effects(statement)
        for name in effects[0] if effects else _loaded(statement):
            read_by[name].append(i)
        if wall >= 0:
            after[i].add(wall)
        if effects is None:
            after[i].update(since_wall)
            wall, last_call, since_wall = i, -1, []
            writer.clear()
            readers.clear()
            continue
        reads, writes, calls = effects
        written[i] = writes
        for name in reads | writes:
            if name in writer:
                after[i].add(writer[name])
        for name in writes:
            after[i].update(readers[name])
        if calls and last_call >= 0:
            after[i].add(last_call)
        for name in reads:
            readers[name].append(i)
        for name in writes:
            writer[name] = i
            readers[name] = []
        last_call = i if calls else last_call
        since_wall.append(i)
    before: list[list[int]] = [[] for _ in block]
    for i, earlier in enumerate(after):
        for j in earlier:
            before[j].append(i)
    shaped = [_shape(statement, local) for statement in block]

    def uses(i: int) -> tuple[tuple[str, ...], ...]:
        """How the statements after ``i`` read what it writes (the first few of each name)."""
        found = []
        for name in sorted(written[i]):
            readers = read_by[name]
            after_i = bisect.bisect_right(readers, i)
            found += [_marked(shaped[j], name) for j in readers[after_i : after_i + USES_SHAPED]]
        return tuple(sorted(found))

    keys = [(tuple(shaped[i][0]), uses(i)) for i in range(len(block))]
    waiting = [len(earlier) for earlier in after]
    ready = [(keys[i], i) for i in range(len(block)) if not waiting[i]]
    heapq.heapify(ready)
    out: list[ast.stmt] = []
    while ready:
        _, i = heapq.heappop(ready)
        out.append(block[i])
        for j in before[i]:
            waiting[j] -= 1
            if not waiting[j]:
                heapq.heappush(ready, (keys[j], j))
    return out


# --------------------------------------------------------------------------- helpers put back


def _inlinable(function: ast.stmt, keep: frozenset[str]) -> bool:
    """A plain helper: positional parameters only, no decorator, no nested scope, no
    ``global``, ``yield`` or ``await``, and a ``return`` (if any) only as its last statement."""
    if not isinstance(function, ast.FunctionDef) or function.name in keep:
        return False
    args = function.args
    if function.decorator_list or args.vararg or args.kwarg or args.kwonlyargs:
        return False
    if args.defaults or args.posonlyargs:
        return False
    banned = (*_SCOPES, ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await)
    returns = 0
    for node in _in_scope(function):
        if isinstance(node, banned):
            return False
        returns += isinstance(node, ast.Return)
    last = function.body[-1] if function.body else None
    return returns == 0 or (returns == 1 and isinstance(last, ast.Return))


def _called(statement: ast.stmt, helpers: dict[str, ast.FunctionDef]) -> ast.Call | None:
    """The helper call ``statement`` is, when it is one that can be put back."""
    match statement:
        case ast.Expr(value=ast.Call() as call) | ast.Return(value=ast.Call() as call):
            pass
        case ast.Assign(targets=[_], value=ast.Call() as call):
            pass
        case _:
            return None
    func = call.func
    if not isinstance(func, ast.Name) or func.id not in helpers or call.keywords:
        return None
    helper = helpers[func.id]
    if len(call.args) != len(helper.args.args) or any(
        isinstance(a, ast.Starred) for a in call.args
    ):
        return None
    returns = bool(helper.body) and isinstance(helper.body[-1], ast.Return)
    if isinstance(statement, ast.Assign) and not returns:
        return None  # it returns None: kept as called
    return call


def _put_back(
    statement: ast.stmt, call: ast.Call, helper: ast.FunctionDef, tag: str
) -> list[ast.stmt]:
    """``helper``'s body in place of ``statement``, its call: its parameters the arguments'
    names, the names it returns the ones they are assigned to, its other names kept (a helper
    moved out of a function by a script has that function's names)."""
    local = _local_names(helper)
    params = [a.arg for a in helper.args.args]
    renamed = {param: f"{param}\N{MIDDLE DOT}{tag}" for param in params}
    prelude: list[ast.stmt] = []
    for param, argument in zip(params, call.args, strict=True):
        if isinstance(argument, ast.Name):
            renamed[param] = argument.id
        else:
            prelude.append(ast.Assign([ast.Name(renamed[param], ast.Store())], argument))
    body = list(helper.body)
    last = body[-1] if body else None
    returned = last.value if isinstance(last, ast.Return) else None
    if isinstance(statement, ast.Assign) and returned is not None:
        target = statement.targets[0]
        pairs = [(target, returned)]
        if (
            isinstance(target, ast.Tuple)
            and isinstance(returned, ast.Tuple)
            and len(target.elts) == len(returned.elts)
        ):
            pairs = list(zip(target.elts, returned.elts, strict=True))
        for to, source in pairs:
            if (
                isinstance(to, ast.Name)
                and isinstance(source, ast.Name)
                and source.id in local
                and source.id not in params
                and to.id not in renamed.values()
            ):
                renamed[source.id] = to.id
    for node in ast.walk(helper):
        if isinstance(node, ast.Name) and node.id in renamed:
            node.id = renamed[node.id]
    if isinstance(statement, ast.Assign) and returned is not None:
        body[-1] = ast.Assign(statement.targets, returned)
    elif isinstance(statement, ast.Expr) and isinstance(last, ast.Return):
        body.pop()  # what it returns is not used
    elif isinstance(statement, ast.Return) and not isinstance(last, ast.Return):
        body.append(ast.Return(ast.Constant(None)))
    return prelude + body


def _top_bound(node: ast.stmt) -> list[str]:
    """The names a top-level statement binds (a ``def``, a class, an assignment, an import)."""
    if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).partition(".")[0] for a in node.names]
    return [
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    ]


def _inline_helpers(tree: ast.Module, keep: frozenset[str]) -> bool:
    """Each helper (a name's last top-level binding, a ``def``; an earlier one it shadows stays
    as it was) named once, in a call from a statement, put back there (in place),
    round after round, ``INLINED_DEPTH`` at most; those whose call sits in another helper
    being put back wait for the next round. Whether any was."""
    put_back = 0
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)} - keep
    if not defined:
        return False
    mentions = Counter(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in defined)
    plain: dict[int, bool] = {}  # each def's ``_inlinable``, looked at once
    for _round in range(INLINED_DEPTH):  # putting one back moves its mentions, counts none
        bound: dict[str, ast.stmt] = {}  # each name's last top-level binding: what runs
        for node in tree.body:
            for target in _top_bound(node):
                bound[target] = node
        helpers = {}
        for name, node in bound.items():
            if not isinstance(node, ast.FunctionDef) or mentions[name] != 1:
                continue
            if id(node) not in plain:
                plain[id(node)] = _inlinable(node, keep)
            if plain[id(node)]:
                helpers[name] = node
        if not helpers:
            break
        waiting = {id(helper) for helper in helpers.values()}
        sites: list[tuple[list[ast.stmt], int, ast.Call, ast.FunctionDef]] = []
        for top in tree.body:
            if id(top) in waiting:
                continue  # its calls wait until it is put back itself
            for block in _blocks(top):
                for index, statement in enumerate(block):
                    call = _called(statement, helpers)
                    if call is not None and isinstance(call.func, ast.Name):
                        sites.append((block, index, call, helpers[call.func.id]))
        if not sites:
            break
        done = set()
        for block, index, call, helper in sorted(sites, key=lambda s: -s[1]):
            put_back += 1
            block[index : index + 1] = _put_back(block[index], call, helper, str(put_back))
            done.add(id(helper))
        tree.body = [node for node in tree.body if id(node) not in done]
    return put_back > 0
