"""Expressions given as text, parsed without running any of it.

:func:`sympy.sympify` evaluates a string as Python code: ``sympify("__import__('os').system(...)")``
runs the command. Text given to fluidnet (a right-hand side, a transfer function) is parsed
instead by :func:`parse_expression`, which reads Python's syntax tree of the text and builds sympy
objects from an allow-list: numbers, the names declared for the context (states, signals,
parameters, ``t``, ``s``), a fixed set of mathematical functions, the operators ``+ - * / **``
(``^`` is read as ``**``) and comparisons. Attribute access, subscripts, keywords, lambdas and
every other construct are refused with a :class:`~fluidnet.errors.ModelError` naming what was
found; nothing is evaluated but sympy constructors of the allowed names.
"""

from __future__ import annotations

import ast
import io
import operator
import tokenize
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

import sympy

from .errors import ModelError

__all__ = ["FUNCTIONS", "as_expression", "collision", "identifier", "parse_expression"]

#: The mathematical functions a text expression may call, by the name it uses.
FUNCTIONS: dict[str, Callable[..., sympy.Basic]] = {
    "exp": sympy.exp,
    "log": sympy.log,
    "ln": sympy.log,
    "sqrt": sympy.sqrt,
    "sin": sympy.sin,
    "cos": sympy.cos,
    "tan": sympy.tan,
    "asin": sympy.asin,
    "acos": sympy.acos,
    "atan": sympy.atan,
    "atan2": sympy.atan2,
    "sinh": sympy.sinh,
    "cosh": sympy.cosh,
    "tanh": sympy.tanh,
    "Abs": sympy.Abs,
    "abs": sympy.Abs,
    "sign": sympy.sign,
    "Heaviside": sympy.Heaviside,
    "Max": sympy.Max,
    "max": sympy.Max,
    "Min": sympy.Min,
    "min": sympy.Min,
    "Piecewise": sympy.Piecewise,
    "floor": sympy.floor,
    "ceiling": sympy.ceiling,
}

_CONSTANTS: dict[str, sympy.Basic] = {"pi": sympy.pi, "E": sympy.E}

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_COMPARE = {
    ast.Lt: sympy.StrictLessThan,
    ast.LtE: sympy.LessThan,
    ast.Gt: sympy.StrictGreaterThan,
    ast.GtE: sympy.GreaterThan,
}

#: Longest text accepted, and deepest nesting of the syntax tree.
MAX_LENGTH = 100_000
MAX_DEPTH = 200
#: Largest exponent of a power of two numbers (``9**9**9`` would not finish).
MAX_NUMERIC_EXPONENT = 1000


def parse_expression(
    text: str,
    *,
    symbols: Mapping[str, sympy.Basic] | None = None,
    functions: Mapping[str, Callable[..., Any]] | None = None,
    where: str = "expression",
) -> sympy.Basic:
    """Build the sympy expression written in ``text`` over declared names only.

    Parameters
    ----------
    text : str
        E.g. ``"-k * x(t - T) + exp(-0.2*s)"``.
    symbols : dict, optional
        ``{name: sympy object}`` for the names the text may use as values (parameters, ``t``,
        ``s``). ``pi`` and ``E`` are known unless redeclared.
    functions : dict, optional
        ``{name: callable}`` for the names the text may call besides :data:`FUNCTIONS`
        (states and signals, called with a time).
    where : str
        What the text is, for messages.

    Returns
    -------
    sympy.Basic

    Raises
    ------
    ModelError
        For a syntax error, a name that is not declared, or any construct outside the allow-list
        (attribute access, subscripts, keyword arguments, strings, lambdas, ...).

    Examples
    --------
    >>> import sympy
    >>> from fluidnet.parsing import parse_expression
    >>> k = sympy.Symbol("k")
    >>> parse_expression("2*k^2 + exp(-k)", symbols={"k": k})
    2*k**2 + exp(-k)
    >>> parse_expression("__import__('os').getcwd()")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fluidnet.errors.ModelError: expression: a call of something other than a name ...
    """
    if not isinstance(text, str):
        raise ModelError(f"{where}: expected a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ModelError(f"{where}: the text is longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(_xor_to_power(text.strip()), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError, tokenize.TokenError) as exc:
        raise ModelError(f"{where}: cannot parse {text!r}: {exc}") from exc
    names = _identifiers(symbols or {}, where)
    calls = _identifiers(functions or {}, where)
    return _Builder(names, calls, where).build(tree.body, 0)


def _identifiers(named: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``named`` keyed by the identifiers Python's parser reads for its names (NFKC, see
    :func:`identifier`): a name of the text is found whatever
    compatibility form declared it, and two declared spellings of one identifier are refused."""
    out: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for name, value in named.items():
        key = identifier(name)
        if key in spelled and spelled[key] != name:
            raise collision(spelled[key], name, "declared name", where=where)
        spelled[key] = name
        out[key] = value
    return out


def as_expression(
    value: Any,
    *,
    symbols: Mapping[str, sympy.Basic] | None = None,
    where: str = "expression",
) -> sympy.Basic:
    """A sympy object from a sympy object, a number or text, never running text as code.

    Text is parsed by :func:`parse_expression`; a bare name it uses that is not in ``symbols``
    (nor a known function or constant) becomes a plain ``sympy.Symbol`` of that name, as
    :func:`sympy.sympify` would make it. Anything else goes through
    ``sympy.sympify(value, strict=True)``, which converts numbers and sympy-aware objects but
    never parses a string representation.

    Raises
    ------
    ModelError
        For text outside the allow-list of :func:`parse_expression`, or a value sympy cannot
        convert.

    Examples
    --------
    >>> from fluidnet.parsing import as_expression
    >>> as_expression("a*x^2")
    a*x**2
    """
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, str):
        names = _identifiers(symbols or {}, where)
        try:
            tree = ast.parse(_xor_to_power(value.strip()), mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError, tokenize.TokenError):
            tree = None  # parse_expression reports it
        if tree is not None:
            called = {
                n.func.id
                for n in ast.walk(tree)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            }
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Name)
                    and node.id not in names
                    and node.id not in called
                    and node.id not in _CONSTANTS
                    and node.id not in FUNCTIONS
                ):
                    names[node.id] = sympy.Symbol(node.id)
        return parse_expression(value, symbols=names, where=where)
    try:
        return sympy.sympify(value, strict=True)
    except (sympy.SympifyError, TypeError, ValueError) as exc:
        raise ModelError(f"{where}: cannot use {value!r} as an expression") from exc


def _xor_to_power(text: str) -> str:
    """``^`` written for a power becomes ``**`` token by token (so ``a + b^2`` keeps the
    precedence of a power; as an operator of Python, ``^`` would bind looser than ``+``)."""
    if "^" not in text:
        return text
    tokens = [
        (tokenize.OP, "**") if tok.type == tokenize.OP and tok.string == "^" else tok[:2]
        for tok in tokenize.generate_tokens(io.StringIO(text).readline)
    ]
    return tokenize.untokenize(tokens)


class _Builder:
    def __init__(self, symbols: dict, functions: dict, where: str):
        self.symbols = symbols
        self.functions = {**FUNCTIONS, **functions}
        for name in symbols:
            self.functions.pop(name, None)  # a declared value shadows a function of that name
        self.where = where

    def fail(self, node: ast.AST, what: str) -> ModelError:
        try:
            snippet = ast.unparse(node)
        except Exception:  # noqa: BLE001 - only for the message
            snippet = type(node).__name__
        if len(snippet) > 60:
            snippet = snippet[:57] + "..."
        return ModelError(f"{self.where}: {what} ({snippet!r}) is not allowed in an expression")

    def build(self, node: ast.AST, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise ModelError(f"{self.where}: the expression is nested too deeply")
        d = depth + 1
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise self.fail(node, f"the constant {type(v).__name__}")
            return sympy.Integer(v) if isinstance(v, int) else sympy.Float(v)
        if isinstance(node, ast.Name):
            if node.id in self.symbols:
                return self.symbols[node.id]
            if node.id in _CONSTANTS:
                return _CONSTANTS[node.id]
            if node.id == "True":  # pragma: no cover - parsed as a Constant
                return sympy.true
            if node.id in self.functions:
                raise ModelError(f"{self.where}: {node.id!r} is a function: call it")
            known = sorted(self.symbols) + sorted(_CONSTANTS)
            raise ModelError(
                f"{self.where}: {node.id!r} is not a declared name (known: "
                f"{', '.join(known) or 'none'}; functions: states, signals and "
                f"{', '.join(sorted(FUNCTIONS))})"
            )
        if isinstance(node, ast.BinOp):
            op = _BINARY.get(type(node.op))
            if op is None:
                raise self.fail(node, f"the operator {type(node.op).__name__}")
            a, b = self.build(node.left, d), self.build(node.right, d)
            if op is operator.pow:
                self._check_power(node, a, b)
            return op(a, b)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return -self.build(node.operand, d)
            if isinstance(node.op, ast.UAdd):
                return self.build(node.operand, d)
            raise self.fail(node, f"the operator {type(node.op).__name__}")
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise self.fail(node, "a chained comparison")
            rel = _COMPARE.get(type(node.ops[0]))
            if rel is None:
                raise self.fail(node, f"the comparison {type(node.ops[0]).__name__}")
            return rel(self.build(node.left, d), self.build(node.comparators[0], d))
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name):
                raise self.fail(node, "a call of something other than a name")
            if node.keywords:
                raise self.fail(node, "a keyword argument")
            if any(isinstance(a, ast.Starred) for a in node.args):
                raise self.fail(node, "a starred argument")
            func = self.functions.get(node.func.id)
            if func is None:
                return self.build(node.func, d)  # raises the unknown-name message
            if func is sympy.Piecewise:
                return sympy.Piecewise(*[self._piece(a, d) for a in node.args])
            return func(*[self.build(a, d) for a in node.args])
        raise self.fail(node, f"the construct {type(node).__name__}")

    def _piece(self, node: ast.AST, depth: int) -> tuple:
        if not isinstance(node, ast.Tuple) or len(node.elts) != 2:
            raise self.fail(node, "a Piecewise argument that is not a (value, condition) pair")
        value, cond = node.elts
        if isinstance(cond, ast.Constant) and cond.value is True:
            return self.build(value, depth + 1), sympy.true
        return self.build(value, depth + 1), self.build(cond, depth + 1)

    def _check_power(self, node: ast.AST, base: Any, exponent: Any) -> None:
        if (
            isinstance(base, sympy.Number)
            and isinstance(exponent, sympy.Number)
            and abs(exponent) > MAX_NUMERIC_EXPONENT
            and abs(base) not in (0, 1)
        ):
            raise self.fail(node, f"a numeric power with an exponent above {MAX_NUMERIC_EXPONENT}")


def identifier(name: str) -> str:
    """``name`` as the identifier Python reads: NFKC-normalized (PEP 3131).

    Examples
    --------
    >>> from fluidnet.parsing import identifier
    >>> identifier("\ufb01"), identifier("ℌ"), identifier("\u00b5") == "\u03bc"
    ('fi', 'H', True)
    """
    return name if name.isascii() else unicodedata.normalize("NFKC", name)


def _spelling(name: str) -> str:
    """``'ﬁ' (U+FB01)``: a name with the code points of its non-ASCII characters, so that two
    look-alike names can be told apart in a message."""
    if name.isascii():
        return repr(name)
    points = ", ".join(f"U+{ord(c):04X}" for c in dict.fromkeys(name) if not c.isascii())
    return f"{name!r} ({points})"


def collision(
    first: str, second: str, what: str = "name", other: str | None = None, where: str = ""
) -> ModelError:
    """The error for two different spellings ``first`` (a ``what``) and ``second`` (an
    ``other``, default the same kind) of one identifier."""
    where = f"{where}: " if where else ""
    return ModelError(
        f"{where}{what} {_spelling(first)} and {other or what} {_spelling(second)} are the "
        f"same identifier {identifier(first)!r} once Unicode-normalized (NFKC), as Python's "
        "parser reads names in text: they would be merged; rename one"
    )
