"""The derivation: M and V in internal symbols, and everything derived from them.

A :class:`Model` holds M(q) and V(q) written in internal symbols q_i
(coordinates) and p_k (parameters), their symbolic derivatives -- dM/dq,
d^2M/dq^2, A(q, g) = d(M g)/dq, H(q, g) = d^2(1/2 g^T M g)/dq^2, grad V,
hess V, the quantities the C core asks for -- the parameter-only
subexpressions hoisted into constants, and, built once and kept, the code
generated from them: the C source, the compiled libraries (one per cache
directory and compiler), the NumPy function.  Models are shared by every
system with the same M, V, coordinates and parameter symbols
(:func:`model_for`), so parameter values never cost a new derivation or
compilation.
"""
import math
import threading

import numpy as np
import sympy as _sy

from ._codegen import MathPrinter, ModelCache, c_source, library_once, numpy_function

_MODELS = ModelCache()


def model_for(spec):
    """The shared :class:`Model` of a specification (see ``_lagrangian.spec``)."""
    key = (spec["M"].as_immutable(), spec["V"], spec["q"], spec["param_order"])
    return _MODELS.get(key, lambda: Model(spec["M"], spec["V"], list(spec["q"]),
                                          list(spec["param_order"]), list(spec["names"]),
                                          spec["title"]))


def _hoister(P):
    """hoist(e): ``e`` with every maximal subexpression of the parameters ``P``
    alone replaced by a constant c_j; and the table {definition: c_j}, filled
    in the order the constants are met."""
    table = {}
    memo = {}

    def const(e):
        if e not in table:
            table[e] = _sy.Symbol(f"c_{len(table)}")
        return table[e]

    def hoist(e):
        if e.is_Atom:
            return e
        if e in memo:
            return memo[e]
        fs = e.free_symbols
        if not fs:
            r = e
        elif fs <= P:
            r = const(e)
        elif isinstance(e, (_sy.Add, _sy.Mul)):
            cargs = [a for a in e.args if a.free_symbols <= P]
            rest = [hoist(a) for a in e.args if not a.free_symbols <= P]
            if cargs:
                cpart = e.func(*cargs)
                if cpart.free_symbols and not cpart.is_Symbol:
                    cargs = [const(cpart)]
                else:
                    cargs = [cpart]
            r = e.func(*(cargs + rest))
        else:
            r = e.func(*[hoist(a) for a in e.args])
        memo[e] = r
        return r

    return hoist, table


class Model:
    """M and V in internal symbols (q_i, p_i) and everything derived from them."""

    def __init__(self, M, V, qs, params, names, title):
        n = len(qs)
        self.n = n
        self.names = names
        self.title = title
        self.param_symbols = list(params)
        self.qi = [_sy.Symbol(f"q_{i}") for i in range(n)]
        self.gi = [_sy.Symbol(f"g_{i}") for i in range(n)]
        self.pi = [_sy.Symbol(f"p_{k}") for k in range(len(params))]
        sub = dict(zip(qs, self.qi))
        sub.update(zip(params, self.pi))
        # one simultaneous replacement: user symbols whose names clash with the
        # internal ones are replaced correctly
        self.M = M.xreplace(sub)
        self.V = _sy.sympify(V).xreplace(sub)
        q = self.qi
        self.dM = [self.M.diff(qk) for qk in q]                                  # [k][i, j]
        self.d2M = {(k, l): self.dM[k].diff(q[l]) for k in range(n) for l in range(k, n)}
        self.dV = [self.V.diff(qk) for qk in q]
        self.d2V = {(k, l): self.dV[k].diff(q[l]) for k in range(n) for l in range(k, n)}
        g = self.gi
        self.A = _sy.Matrix(n, n, lambda i, c: sum((self.dM[c][i, j] * g[j] for j in range(n)),
                                                 _sy.S.Zero))
        self.H = {}
        for (a, b), T in self.d2M.items():
            s = sum((T[i, i] * g[i] ** 2 / 2 for i in range(n)), _sy.S.Zero)
            s += sum((T[i, j] * g[i] * g[j] for i in range(n) for j in range(i + 1, n)), _sy.S.Zero)
            self.H[(a, b)] = s
        self._source = None
        self._numpy = None
        self._consts = None
        self._const_fn = None
        self._libs = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------ constants
    def hoisted(self):
        """Pull every maximal parameter-only subexpression out into constants
        c_j computed once per parameter set (constant folding for symbolic
        parameters).  Returns (outputs with constants, [(c_j, definition)])."""
        if self._consts is not None:
            return self._consts
        hoist, table = _hoister(set(self.pi))
        n = self.n
        out = {
            "M": [[hoist(self.M[i, j]) for j in range(n)] for i in range(n)],
            "A": [[hoist(self.A[i, c]) for c in range(n)] for i in range(n)],
            "H": {k: hoist(v) for k, v in self.H.items()},
            "V": hoist(self.V),
            "dV": [hoist(e) for e in self.dV],
            "d2V": {k: hoist(v) for k, v in self.d2V.items()},
            "dM": [[[hoist(self.dM[k][i, j]) for j in range(n)] for i in range(n)] for k in range(n)],
            "d2M": {k: [[hoist(T[i, j]) for j in range(n)] for i in range(n)]
                    for k, T in self.d2M.items()},
        }
        consts = [(s, e) for e, s in table.items()]
        self._consts = (out, consts)
        return self._consts

    def data(self, pvalues):
        """The run-time data vector: parameter values, then the constants."""
        _, consts = self.hoisted()
        p = [float(v) for v in pvalues]
        if not consts:
            return np.array(p, dtype=float)
        if self._const_fn is None:
            self._const_fn = _sy.lambdify(self.pi, [e for _, e in consts], modules="math",
                                          cse=True, printer=MathPrinter)
        try:
            vals = [complex(v) for v in self._const_fn(*p)]
        except (ValueError, ZeroDivisionError, OverflowError) as exc:
            raise ValueError(f"the parameter values {dict(zip(self.param_symbols, p))} make an "
                             f"expression of the parameters undefined ({exc})") from None
        bad = [str(consts[i][1].xreplace(dict(zip(self.pi, self.param_symbols))))
               for i, v in enumerate(vals) if v.imag != 0 or not math.isfinite(v.real)]
        if bad:
            raise ValueError(f"with these parameter values, expressions of the parameters are not "
                             f"finite real numbers: {', '.join(bad)}")
        return np.array(p + [v.real for v in vals], dtype=float)

    # ------------------------------------------------------------ generated code
    def source(self):
        """The generated C source (built once)."""
        if self._source is None:
            self._source = c_source(self)
        return self._source

    def library(self, cache_dir):
        """(ctypes library, path) of the compiled module, loaded once per process."""
        return library_once(self, cache_dir)

    def numpy_function(self):
        """``make(data)`` -> the vectorised NumPy evaluation (built once)."""
        if self._numpy is None:
            self._numpy = numpy_function(self)
        return self._numpy
