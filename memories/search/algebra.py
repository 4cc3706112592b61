"""The three ways search computes a formula of memories.search.formula: on Python floats (one candidate at a time),
on numpy arrays (every row of a snapshot at once) and as PostgreSQL float8 SQL text (in the statement). A formula is
written once, as arithmetic over its operands and the few functions below; given floats it gives a float, given
arrays an array, given `Sql` operands the SQL expression. Each binary operation of the SQL is parenthesised, so
PostgreSQL evaluates it in the order Python does: the three agree to the last bits but for `ln` and `power`, whose
C library may differ in the last place (tests/memories/search/test_formula.py).

A missing value (no cosine: no stored vector, no rank) is None for floats, NaN for arrays, NULL in SQL; `known`
tells it, `missing(value, default)` replaces it."""

import math
from functools import partial, reduce
from operator import add

import numpy as np


class Floats:
    """Python floats, None where there is no value."""

    @staticmethod
    def greatest(a, b):
        return max(a, b)

    @staticmethod
    def least(a, b):
        return min(a, b)

    ln = staticmethod(math.log)

    @staticmethod
    def where(condition, a, b):
        return a if condition else b

    @staticmethod
    def known(value) -> bool:
        return value is not None

    @staticmethod
    def missing(value, default):
        return default if value is None else value

    @staticmethod
    def total(values):
        """The sum, added left to right (as SQL's `a + b + c`)."""
        return reduce(add, values)


class Arrays:
    """numpy float64 arrays (element-wise), NaN where there is no value."""

    greatest = staticmethod(np.maximum)
    least = staticmethod(np.minimum)
    ln = staticmethod(np.log)
    where = staticmethod(np.where)

    @staticmethod
    def known(value):
        return ~np.isnan(value)

    @staticmethod
    def missing(value, default):
        return np.where(np.isnan(value), default, value)

    @staticmethod
    def total(values):
        """The sum of a sequence of arrays, added left to right (not numpy's pairwise summation)."""
        return reduce(add, values)


def _text(value) -> str:
    """An operand as float8 SQL: an expression as it is, a number as a float8 literal (repr round-trips the exact
    double, and PostgreSQL reads it back as the same one)."""
    if isinstance(value, Sql):
        return value.text
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return f"({float(value)!r}::float8)"


def _call(function: str, *args) -> "Sql":
    """A SQL function of the operands: `_call("ln", x)` is `ln(x)`."""
    return Sql(f"{function}({', '.join(_text(arg) for arg in args)})")


class Sql:
    """A float8 (or boolean) SQL expression over columns, built by ordinary arithmetic: `Sql("s.i0") * 2.2` is
    `(s.i0 * (2.2::float8))`. Columns' names are the caller's; constants become literals, never user input."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __str__(self) -> str:
        return self.text

    def _op(self, other, op: str, reverse: bool = False) -> "Sql":
        left, right = (_text(other), self.text) if reverse else (self.text, _text(other))
        return Sql(f"({left} {op} {right})")

    def __add__(self, other): return self._op(other, "+")
    def __radd__(self, other): return self._op(other, "+", reverse=True)
    def __sub__(self, other): return self._op(other, "-")
    def __rsub__(self, other): return self._op(other, "-", reverse=True)
    def __mul__(self, other): return self._op(other, "*")
    def __rmul__(self, other): return self._op(other, "*", reverse=True)
    def __truediv__(self, other): return self._op(other, "/")
    def __rtruediv__(self, other): return self._op(other, "/", reverse=True)
    def __pow__(self, other): return _call("power", self, other)
    def __rpow__(self, other): return _call("power", other, self)

    greatest = staticmethod(partial(_call, "greatest"))
    least = staticmethod(partial(_call, "least"))
    ln = staticmethod(partial(_call, "ln"))
    missing = staticmethod(partial(_call, "coalesce"))  # (value, default)

    @staticmethod
    def where(condition, a, b) -> "Sql":
        return Sql(f"(CASE WHEN {_text(condition)} THEN {_text(a)} ELSE {_text(b)} END)")

    @staticmethod
    def known(value) -> "Sql":
        return Sql(f"({_text(value)} IS NOT NULL)")

    @staticmethod
    def total(values) -> "Sql":
        return reduce(add, values)
