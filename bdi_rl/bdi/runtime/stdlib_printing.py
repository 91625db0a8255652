"""Jason's printing actions besides ``.print``: ``.printf`` (Java's ``String.format``),
``.puts`` (``#{Var}`` replaced by the variable's value) and ``.log`` (a level, then the
text).

What they print goes where ``.print`` goes (``Host.print``): Jason logs each at level INFO
on the agent's logger, as ``.print``. ``.log``'s ``warning`` and ``severe`` go to the
Python log instead (Jason's console shows them apart from the agents' lines), and ``fine``,
``finer``, ``finest`` nowhere (below Jason's default level).
"""

from __future__ import annotations

import decimal
import logging
import math
import re
from typing import Any

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.stdlib_core import is_free, java_error, standard, text_of, value, wrong_argument
from bdi_rl.bdi.runtime.stdlib_strings import parse_term
from bdi_rl.bdi.runtime.terms import FALSE, TRUE, UNBOUND, LVar, Struct, Trail, deref, term_str
from bdi_rl.bdi.runtime.unify import Env, TermCompiler, read_slot

log = logging.getLogger("bdi_rl.bdi.runtime")


# -- .log ---------------------------------------------------------------------------------
@standard(".log")
def _log(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.log(Level, Text...)``: the text (strings bare, a free variable as ``X<no-value>``)
    at that level (severe, warning, info, fine, finer, finest; another atom is info)."""
    if not node.args:
        raise tc.error(node, ".log needs a level and its text")
    level = tc.term(node.args[0]).build
    parts = [tc.term(a) for a in node.args[1:]]
    names = [getattr(a, "name", "_") for a in node.args[1:]]

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        lv = deref(level(env))
        if type(lv) is not Struct or lv.args or lv.annots:
            raise wrong_argument(".log", "first argument must be an atom: severe, warning, info, fine, finer or finest")
        text = "".join(
            f"{name}<no-value>" if is_free(code, env) else text_of(value(code, env))
            for code, name in zip(parts, names, strict=False)
        )
        if lv.functor in ("severe", "warning"):
            log.warning("[%s] %s", ag.name, text)
        elif lv.functor not in ("fine", "finer", "finest"):
            ag.host.print(ag, text)
        return True

    return Query(first)


# -- .puts --------------------------------------------------------------------------------
_REFERENCE = re.compile(r"#\{([A-Za-z0-9_]+)\}")


@standard(".puts", 1, 2)
def _puts(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.puts("X is #{X}"[, Out])``: the text with each ``#{Name}`` replaced by that
    variable's value (its name when it has none; another name is read as a term), printed, or
    unified with ``Out`` when that is free."""
    codes = [tc.term(a) for a in node.args]
    scope = tc.scope  # complete once the plan is compiled: the plan's variables by name

    def reference(env: Env, name: str) -> str:
        if name[:1].isupper() or name[:1] == "_":
            slot = scope.slots.get(name)
            if slot is None:
                return name
            v = read_slot(env, slot)
            if v is UNBOUND or type(v) is LVar:
                return name
            return text_of(v)
        return text_of(parse_term(name))

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        texts = [value(c, env) for c in codes if not is_free(c, env)]
        if type(texts[0] if texts else None) is not str:
            raise wrong_argument(".puts", "first argument must be a string")
        out = "".join(_REFERENCE.sub(lambda m: reference(env, m.group(1)), t) for t in texts if type(t) is str)
        if is_free(codes[-1], env):
            return codes[-1].match(out, env, trail)
        ag.host.print(ag, out)
        return True

    return Query(first)


# -- .printf ------------------------------------------------------------------------------
@standard(".printf")
def _printf(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.printf(Format, Args...)``: Java's ``String.format``, every number a double (so
    ``%d`` is an error, as in Jason)."""
    if not node.args:
        raise tc.error(node, ".printf needs a format")
    codes = [tc.term(a) for a in node.args]

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        fmt = value(codes[0], env)
        if type(fmt) is not str:
            raise wrong_argument(".printf", "first argument must be a string (the format)")
        ag.host.print(ag, java_format(fmt, [_java_object(value(c, env)) for c in codes[1:]]))
        return True

    return Query(first)


class _Text(str):
    """An argument Java formats with its ``toString()`` (a term, a list)."""


def _java_object(v: Any) -> Any:
    """The Java object ``.printf`` passes for a term: a number a double, ``true``/``false``
    a boolean, a string its text, a list a Java list, anything else its text."""
    if type(v) is int or type(v) is float:
        return float(v)
    if v is TRUE or v is FALSE:
        return v is TRUE
    if type(v) is str:
        return v
    if type(v) is tuple:
        return _Text("[" + ", ".join(_list_element(deref(x)) for x in v) + "]")
    return _Text(term_str(v))


def _list_element(v: Any) -> str:
    """A list element as Java prints it (``termToObject``: an integral number as an int)."""
    if type(v) is int or type(v) is float:
        if float(v).is_integer() and abs(v) < 2**63:
            return str(int(v))
        return java_double(float(v))
    obj = _java_object(v)
    if type(obj) is bool:
        return "true" if obj else "false"
    return str(obj)


def java_double(x: float) -> str:
    """Java's ``Double.toString``: ``7.0``, ``0.001``, ``1.0E-5``, ``1.2345678E7``."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    digits, exponent = _shortest(abs(x))
    if 1e-3 <= abs(x) < 1e7:
        point = exponent + 1
        if point <= 0:
            text = "0." + "0" * -point + digits
        elif point >= len(digits):
            text = digits + "0" * (point - len(digits)) + ".0"
        else:
            text = digits[:point] + "." + digits[point:]
        return sign + text
    mantissa = digits[0] + "." + (digits[1:] or "0")
    return f"{sign}{mantissa}E{exponent}"


def _shortest(x: float) -> tuple[str, int]:
    """The shortest digits that read back as ``x`` and the decimal exponent of the first."""
    text = repr(x)
    mantissa, _, exp = text.partition("e")
    exponent = int(exp) if exp else 0
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    exponent += len(whole.lstrip("0")) - 1 if whole.lstrip("0") else -(len(frac) - len(frac.lstrip("0"))) - 1
    return digits.rstrip("0") or "0", exponent


_SPEC = re.compile(r"%(\d+\$)?([-#+ 0,(<]*)(\d+)?(\.\d+)?([a-zA-Z%])")


def java_format(fmt: str, args: list[Any]) -> str:
    """Java's ``String.format`` for the conversions Jason's ``.printf`` can meet: ``%s %S %b
    %B %f %e %E %g %G %n %%`` with flags, width and precision. Anything Java refuses
    (``%d`` of a double, a missing argument, an unknown conversion) is the action's Java
    exception."""
    out: list[str] = []
    at = 0
    next_arg = 0
    for match in _SPEC.finditer(fmt):
        out.append(fmt[at : match.start()])
        at = match.end()
        index, flags, width, precision, conversion = match.groups()
        if conversion == "n":
            out.append("\n")
            continue
        if conversion == "%":
            out.append(_pad("%", flags, width))
            continue
        if index is not None:
            k = int(index[:-1]) - 1
        else:
            k, next_arg = next_arg, next_arg + 1
        if not 0 <= k < len(args):
            raise java_error()  # MissingFormatArgumentException
        prec = int(precision[1:]) if precision else None
        text = _convert(args[k], conversion, flags, prec)
        out.append(_pad(text, flags, width))
    rest = fmt[at:]
    if "%" in rest:
        raise java_error()  # UnknownFormatConversionException
    out.append(rest)
    return "".join(out)


def _pad(text: str, flags: str, width: str | None) -> str:
    if width is None or len(text) >= int(width):
        return text
    n = int(width)
    if "-" in flags:
        return text.ljust(n)
    if "0" in flags and text[:1] in "+- " and text[1:2].isdigit():
        return text[0] + text[1:].rjust(n - 1, "0")
    if "0" in flags and text[:1].isdigit():
        return text.rjust(n, "0")
    return text.rjust(n)


def _convert(arg: Any, conversion: str, flags: str, precision: int | None) -> str:
    lower = conversion.lower()
    if lower == "s":
        text = _java_string(arg)
        if precision is not None:
            text = text[:precision]
        return text.upper() if conversion == "S" else text
    if lower == "b":
        text = ("true" if arg else "false") if type(arg) is bool else "true"
        return text.upper() if conversion == "B" else text
    if lower in "feg" and type(arg) is float:
        text = _java_float(arg, lower, flags, 6 if precision is None else precision)
        return text.upper() if conversion.isupper() else text
    raise java_error()  # IllegalFormatConversionException, or a conversion Jason's numbers never fit


def _java_string(arg: Any) -> str:
    if type(arg) is float:
        return java_double(arg)
    if type(arg) is bool:
        return "true" if arg else "false"
    return str(arg)


def _java_float(x: float, conversion: str, flags: str, precision: int) -> str:
    if math.isnan(x) or math.isinf(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    d = decimal.Decimal(repr(abs(x)))
    if conversion == "g":
        precision = max(precision, 1)
        rounded = _round(d, precision - _exponent(d) - 1) if d else d
        if d == 0 or decimal.Decimal("0.0001") <= rounded < decimal.Decimal(10) ** precision:
            body = _fixed(d, precision - (_exponent(rounded) + 1 if d else 1), "," in flags)
        else:
            body = _scientific(d, precision - 1)
    elif conversion == "e":
        body = _scientific(d, precision)
    else:
        body = _fixed(d, precision, "," in flags)
    negative = math.copysign(1, x) < 0
    if negative:
        return f"({body})" if "(" in flags else "-" + body
    if "+" in flags:
        return "+" + body
    if " " in flags:
        return " " + body
    return body


def _exponent(d: decimal.Decimal) -> int:
    return d.adjusted()


def _round(d: decimal.Decimal, places: int) -> decimal.Decimal:
    return d.quantize(decimal.Decimal(1).scaleb(-places), rounding=decimal.ROUND_HALF_UP)


def _fixed(d: decimal.Decimal, places: int, grouping: bool) -> str:
    places = max(places, 0)
    text = f"{_round(d, places):f}"
    if grouping:
        whole, dot, frac = text.partition(".")
        text = f"{int(whole):,}" + dot + frac
    return text


def _scientific(d: decimal.Decimal, places: int) -> str:
    if d == 0:
        return "0." + "0" * places + "e+00" if places else "0e+00"
    exponent = _exponent(d)
    mantissa = _round(d.scaleb(-exponent), places)
    if mantissa >= 10:  # rounding carried into another digit
        exponent += 1
        mantissa = _round(d.scaleb(-exponent), places)
    sign = "-" if exponent < 0 else "+"
    return f"{mantissa:f}e{sign}{abs(exponent):02d}"
