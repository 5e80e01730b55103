"""The System class: a Lagrangian L = 1/2 qdot^T M(q) qdot - V(q)."""
import numpy as np

from . import _constraints, _derivcheck, _fd, _matrices, _validate
from .. import _engine
from ._addresses import _address_of, _data_address

_M, _A, _H, _V, _DV, _D2V = (_engine.NEED_M, _engine.NEED_A, _engine.NEED_H, _engine.NEED_V,
                             _engine.NEED_DV, _engine.NEED_D2V)


class System(_engine.System):
    """A mechanical system with Lagrangian L(q, qdot) = 1/2 qdot^T M(q) qdot - V(q).

    Parameters
    ----------
    n : int
        Number of degrees of freedom (generalised coordinates q in R^n).
    mass : callable or array_like
        ``mass(q) -> (n, n)`` symmetric positive-definite mass matrix M(q), or a
        constant ``(n, n)`` array when M does not depend on q.
    potential : callable
        ``potential(q) -> float``, the potential energy V(q).
    mass_grad : callable, optional
        ``mass_grad(q) -> (n, n, n)`` with ``[k, i, j] = dM_ij/dq_k``.  If omitted
        for a callable mass (and no ``mass_dir`` is given), central finite
        differences of ``mass`` are used: about 1e-10 relative accuracy and 2n
        extra calls per evaluation.
    potential_grad : callable, optional
        ``potential_grad(q) -> (n,)``, grad V.  If omitted: finite differences of
        ``potential`` (as above).
    mass_hess : callable, optional
        ``mass_hess(q) -> (n, n, n, n)`` with ``[k, l, i, j] = d^2 M_ij/dq_k dq_l``.
        Used only in Newton's Jacobian; if omitted, the C core differentiates
        the first derivative numerically (Newton still converges to the exact
        root, the trajectory is unaffected beyond the Newton tolerance).
    potential_hess : callable, optional
        ``potential_hess(q) -> (n, n)``; if omitted, finite differences of
        ``potential_grad`` (Jacobian only, as for ``mass_hess``).
    mass_dir : callable, optional
        Contracted alternative to ``mass_grad`` for large n:
        ``mass_dir(q, g) -> (n, n)`` with ``[i, c] = sum_j dM_ij/dq_c g_j``.
    mass_hess_dir : callable, optional
        Contracted alternative to ``mass_hess``:
        ``mass_hess_dir(q, g) -> (n, n)``, the Hessian of 1/2 g^T M(q) g in q.
    name : str, optional
        A label used in ``repr``.
    derivative_check : bool, optional
        Check the supplied derivatives against finite differences the first
        time the system is stepped or integrated (default True; also an
        attribute that can be changed later).  See Notes.
    constraint : callable, optional
        Holonomic constraints g(q) = 0: ``constraint(q) -> (m,)``, the m
        constraint values (1 <= m < n; a float for m = 1).  The variational
        methods then solve the constrained equations of motion (the
        constraint force is -G(q)^T lambda, the multipliers lambda are
        :attr:`Trajectory.multipliers`); ``rk4`` refuses constrained systems.
        Initial states must satisfy g(q0) = 0 and G(q0) M(q0)^-1 p0 = 0
        (checked; :meth:`project` makes a nearby state consistent).
    constraint_jac : callable
        Required with ``constraint``: ``constraint_jac(q) -> (m, n)``, the
        Jacobian G = dg/dq, ``[k, j] = dg_k/dq_j`` (``(n,)`` for m = 1).
    constraint_hess : callable, optional
        ``constraint_hess(q) -> (m, n, n)`` with ``[k, i, j] = d^2 g_k/dq_i dq_j``
        (``(n, n)`` for m = 1); used only in Newton's matrix of the methods
        with internal nodes.  If omitted, the C core differentiates G
        numerically (about 1e-10 relative; Newton still converges to the
        exact root).
    n_constraints : int, optional
        m, when known; otherwise it is the length of ``constraint``'s first
        result (:attr:`n_constraints` is None until then).

    Notes
    -----
    Momenta are canonical, p = M(q) qdot, and the Hamiltonian is
    H(q, p) = 1/2 p^T M(q)^-1 p + V(q).  Units are the user's: with q in
    radians or metres and t in seconds, p is in kg m^2/s or kg m/s and
    H in joules.  Every callable receives a fresh float64 copy of q (and g);
    its result must be convertible to float64, of the documented shape, and
    finite.  Exceptions raised inside a callable propagate out of
    ``step``/``integrate`` unchanged.

    Derivatives are checked before they are trusted: a derivative laid out
    in the wrong order (``mass_grad`` as ``[i, j, k]``) still gives a
    symplectic, energy-conserving -- and wrong -- trajectory.  So the first
    :func:`~symplectic.step`, :func:`~symplectic.integrate` or
    :func:`~symplectic.integrate_many` on a system with user-supplied
    derivatives (Python callables in any form, compiled callbacks) compares
    every supplied derivative with finite differences, at the initial q and
    at a perturbed q, and raises :class:`symplectic.DerivativeError` naming
    the callback, the worst entry, both values and the layout it looks like.
    The check costs 5n + 1 evaluations at each of the two points (21 for
    n > 16, where it uses fixed generic directions) -- 1 to 2 % of a
    1000-step integration of the double pendulum in plain callables
    (``benchmarks/RESULTS.md`` section 19); a pass is remembered on this
    System object.  Turn it off with ``check=False`` on the call or
    ``derivative_check=False`` here.  Built-in and SymPy-generated systems
    are not checked (their derivatives are not hand-written);
    :meth:`check_derivatives` runs the same check on any system.
    """

    def __init__(self, n, mass, potential, mass_grad=None, potential_grad=None,
                 mass_hess=None, potential_hess=None, *, mass_dir=None, mass_hess_dir=None,
                 name=None, derivative_check=True, constraint=None, constraint_jac=None,
                 constraint_hess=None, n_constraints=None):
        n = _validate.dof(n)
        _check_callbacks(dict(mass=mass if callable(mass) else None, potential=potential,
                              mass_grad=mass_grad, potential_grad=potential_grad,
                              mass_hess=mass_hess, potential_hess=potential_hess,
                              mass_dir=mass_dir, mass_hess_dir=mass_hess_dir))
        self._fd_used = []
        if callable(mass):
            if mass_grad is None and mass_dir is None:
                mass_grad = _fd.mass_grad(mass, n)
                self._fd_used.append("mass_grad")
        else:
            mass = _matrices.constant_mass(mass, n)
            if mass_grad is not None or mass_hess is not None or mass_dir is not None:
                raise ValueError("a constant mass takes no mass derivatives")
        if potential_grad is None:
            potential_grad = _fd.gradient(potential, n)
            self._fd_used.append("potential_grad")
        cons = _constraint_args(constraint, constraint_jac, constraint_hess, n_constraints, n)
        super().__init__(n, mass, potential, mass_grad, potential_grad, mass_hess,
                         potential_hess, mass_dir, mass_hess_dir, **cons)
        self._describe(name, derivative_check, dict(
            mass=mass, potential=potential, mass_grad=mass_grad, potential_grad=potential_grad,
            mass_hess=mass_hess, potential_hess=potential_hess, mass_dir=mass_dir,
            mass_hess_dir=mass_hess_dir, **cons))

    @classmethod
    def vectorized(cls, n, func, *, name=None, derivative_check=True, constraint=None,
                   constraint_jac=None, constraint_hess=None, n_constraints=None):
        """A system from one vectorised callable (one Python call per Newton iteration).

        ``func(Q)`` receives the k evaluation points of a Newton iteration at
        once, ``Q`` of shape (k, n) (k = 3 for Simpson, 1 for midpoint and for
        each RK4 stage), and returns a dict of arrays with a leading axis k:

        ``"mass"`` (k, n, n), ``"mass_grad"`` (k, n, n, n) with
        ``[p, c, i, j] = dM_ij/dq_c``, ``"potential"`` (k,),
        ``"potential_grad"`` (k, n), and optionally ``"mass_hess"``
        (k, n, n, n, n) and ``"potential_hess"`` (k, n, n).

        One Python call per Newton iteration instead of about ten per point.
        Missing second derivatives are formed by central differences of the
        first (2n extra calls of ``func`` per batch, all points at once).

        This form pays off when ``func`` does enough array work per call for
        NumPy to amortise its per-call overhead (larger n, NumPy-heavy
        models).  For small systems it is the slowest Python form: on the
        double pendulum (n = 2, Simpson, h = 0.01) it measured 39 us/step
        against 7.7 us for :meth:`combined` and 19 us for plain callables
        with Hessians (``benchmarks/RESULTS.md``, section 4).

        ``derivative_check``: as for :class:`System` (the first step or
        integration checks ``mass_grad``, ``potential_grad`` and, when
        returned, the Hessians against finite differences).

        ``constraint``, ``constraint_jac``, ``constraint_hess``,
        ``n_constraints``: holonomic constraints, as for :class:`System`
        (one call each per node).
        """
        n = _validate.dof(n)
        _validate.callback("func", func, "func(Q) -> dict of arrays",
                           "the k evaluation points Q (k, n)")
        cons = _constraint_args(constraint, constraint_jac, constraint_hess, n_constraints, n)
        return cls._form(n, name, derivative_check, "vectorized", func, cons,
                         vectorized=_fd.with_hessians(func, n))

    @classmethod
    def combined(cls, n, func, *, name=None, derivative_check=True, constraint=None,
                 constraint_jac=None, constraint_hess=None, n_constraints=None):
        """A system from one in-place Python callable (fastest pure Python for small n).

        ``func(q, M, dM, dV, d2M, d2V)`` receives a fresh copy of q and five
        zeroed float64 arrays to fill in place -- M (n, n), dM (n, n, n) with
        ``dM[k, i, j] = dM_ij/dq_k``, dV (n,) = grad V, d2M (n, n, n, n) with
        ``d2M[k, l, i, j] = d^2 M_ij/dq_k dq_l``, d2V (n, n) = hess V -- and
        returns V(q) as a float.  Write only the nonzero entries; plain
        ``math`` arithmetic is faster than NumPy at this size.

        One call per evaluation point, and none when the same q is asked
        again (the left node of each Newton iteration): about 5 calls per
        Simpson step instead of about 24 with separate callables.

        ``derivative_check``: as for :class:`System` (the first step or
        integration checks dM, dV, d2M and d2V against finite differences,
        so all four must be filled).

        ``constraint``, ``constraint_jac``, ``constraint_hess``,
        ``n_constraints``: holonomic constraints, as for :class:`System`.
        """
        n = _validate.dof(n)
        _validate.callback("func", func, "func(q, M, dM, dV, d2M, d2V) -> V",
                           "the coordinates q (n,) and the arrays M (n, n), dM (n, n, n), "
                           "dV (n,), d2M (n, n, n, n) and d2V (n, n) to fill", 6)
        cons = _constraint_args(constraint, constraint_jac, constraint_hess, n_constraints, n)
        return cls._form(n, name, derivative_check, "combined", func, cons, combined=func)

    @classmethod
    def from_cfunc(cls, n, func, user_data=None, *, keepalive=None, name=None,
                   derivative_check=True, constraint=None, constraint_data=None,
                   n_constraints=None):
        """A system from a compiled C callback: no Python in the loop, GIL released.

        ``func`` is the callback's address (an int) or an object that has one:
        a ctypes function pointer, a numba ``cfunc`` (``.address``), or a
        ``scipy.LowLevelCallable``.  Its C signature is::

            int eval(const double *q, const double *g, unsigned need,
                     double *M, double *A, double *H, double *V,
                     double *dV, double *d2V, void *user_data);

        It fills what ``need`` asks for (bits: M = 1, A = 2, H = 4, V = 8,
        grad V = 16, hess V = 32; unrequested pointers are NULL; g is NULL
        when neither A nor H is asked): M (n x n, row-major), A[i][c] =
        sum_j dM_ij/dq_c g_j, H = Hessian of 1/2 g^T M(q) g, V, grad V,
        hess V; and returns 0 (nonzero stops the integration with an error
        that gives the returned value, what was asked for and q).
        ``user_data`` is passed through as the last argument: None (NULL), an
        int address, a NumPy array (a pointer to its first element; it must be
        C-contiguous, and it is kept alive with the System -- e.g. a float64
        array of parameters the callback reads), or a ctypes object (a
        pointer, a ``c_void_p``, or a ctypes instance such as a Structure, by
        its address; also kept alive).

        The callback must be thread-safe and must not call Python.  A wrong
        address or signature crashes the interpreter: this is the unchecked,
        fast path.  ``keepalive`` is kept referenced for the System's life
        (pass the library or closure that owns the code).

        ``derivative_check``: as for :class:`System` (the first step or
        integration checks A, H, grad V and hess V against finite
        differences of M, A, V and grad V).

        ``constraint`` (with ``n_constraints`` = m and ``constraint_data``):
        holonomic constraints g(q) = 0 as a compiled callback, given like
        ``func``, of the C signature::

            int constraint(const double *q, const double *mu, unsigned need,
                           double *g, double *G, double *S, void *user_data);

        filling what ``need`` asks for (bits: g = 1, G = 2, S = 4; the others
        are NULL): g (m), G = dg/dq (m x n, row-major, ``G[k*n + j] =
        dg_k/dq_j``), S = sum_k mu_k d^2 g_k/dq^2 (n x n; mu has m values and
        is NULL unless S is asked for).  ``constraint_data`` is its
        user_data (as ``user_data``).  The first use checks G and S against
        finite differences of g and G.
        """
        n = _validate.dof(n)
        address = _address_of(func)
        cons = {}
        if constraint is not None:
            if n_constraints is None:
                raise TypeError("a compiled constraint callback needs n_constraints (the "
                                "number m of constraints)")
            cons = dict(constraint=_address_of(constraint, "constraint"),
                        constraint_data=_data_address(constraint_data),
                        n_constraints=_validate.integer("n_constraints", n_constraints, 1))
        elif constraint_data is not None or n_constraints is not None:
            raise TypeError("constraint_data and n_constraints need constraint")
        obj = cls._form(n, name, derivative_check, "cfunc", address, cons, cfunc=address,
                        cfunc_data=_data_address(user_data),
                        keepalive=(func, user_data, keepalive, constraint, constraint_data))
        return obj

    @classmethod
    def from_sympy(cls, expr, q, qdot=None, params=None, **options):
        """A system from a SymPy Lagrangian L(q, qdot) or a pair (M(q), V(q)).

        The same as :func:`symplectic.symbolic.system` (see there for the
        options ``constraints`` -- holonomic constraints g_k(q) = 0 as SymPy
        expressions --, ``compile``, ``simplify``, ``name``, ``test_point``,
        ``cache_dir``): every derivative the core needs is derived
        symbolically and evaluated by compiled C when a C compiler is
        available (cached on disk), else by NumPy.  Needs SymPy
        (``pip install sympy``).
        """
        if cls is not System:
            raise TypeError("from_sympy builds a symplectic.symbolic.SymbolicSystem; call it on System")
        # symbolic depends on System, not the other way round: the package face
        # hands it over, loading it on first use (ImportError without SymPy)
        import symplectic
        return symplectic.symbolic.system(expr, q, qdot, params, **options)

    @classmethod
    def _form(cls, n, name, derivative_check, form, func, cons, **core_kwargs):
        """A System of one of the single-callable forms (vectorized, combined,
        cfunc): the core's System made with ``core_kwargs`` and the constraint
        arguments ``cons``; ``func`` is kept under ``form`` (for pickling and
        the derivative check, which treats the form as supplying every
        derivative), the constraint arguments under their names."""
        obj = cls.__new__(cls)
        _engine.System.__init__(obj, n, **core_kwargs, **cons)
        obj._describe(name, derivative_check, {form: func, "mass_hess": True,
                                               "mass_hess_dir": None, "potential_hess": True,
                                               **cons})
        return obj

    @classmethod
    def _from_builtin(cls, name, n, flat_params, params, force=None, constraints=None):
        """A built-in C system; ``constraints``: None, or the constraint keywords
        of :class:`System` (``constraint``, ``constraint_jac``, optional
        ``constraint_hess`` and ``n_constraints``) attached to a built-in that
        has no constraints of its own (a tree closed into a loop; a built-in
        with its own refuses them: TypeError).  Python constraint callables
        keep the GIL during a run (``nogil`` is then False)."""
        cons = {} if constraints is None else _constraint_args(
            constraints.get("constraint"), constraints.get("constraint_jac"),
            constraints.get("constraint_hess"), constraints.get("n_constraints"),
            _validate.dof(n))
        if constraints is not None and not cons:
            raise TypeError("constraints: give at least constraint and constraint_jac")
        obj = cls.__new__(cls)
        flat = np.asarray(flat_params, dtype=float)
        _engine.System.__init__(obj, n, builtin=name, params=flat, **cons)
        obj._flat = flat
        obj._describe(name, False, None)    # derived in C, not user-supplied: never checked
        obj._params = dict(params)
        obj._force = force                  # a built-in's damping (symplectic.forces)
        obj._builtin_constraints = cons     # Python constraints attached to it ({}: none)
        return obj

    def _describe(self, name, derivative_check, callables):
        """The Python-side attributes every System has."""
        self._name = name
        self._params = None
        self._fd_used = getattr(self, "_fd_used", [])
        self.derivative_check = bool(derivative_check)
        self._callables = callables
        self._force = None

    # ------------------------------------------------------------------
    def __reduce__(self):
        """Pickling (for multiprocessing, Dask, ...): built-in systems by their
        parameters; Python-callable systems by their callables (which must be
        picklable themselves: module-level functions, not lambdas)."""
        if self.builtin is not None:
            cons = getattr(self, "_builtin_constraints", None) or None
            return (_rebuild_builtin, (self.builtin, self.n, self._flat, self._params,
                                       self._force, cons))
        c = self._callables or {}
        if "cfunc" in c:
            raise TypeError("a System from a compiled callback cannot be pickled: rebuild it "
                            "in the worker process (the code address is process-local)")
        check = getattr(self, "derivative_check", True)
        cons = {k: c[k] for k in _CONSTRAINT_ARGS if c.get(k) is not None}
        if "combined" in c:
            return (_rebuild_form, ("combined", self.n, c["combined"], self._name, check, cons))
        if "vectorized" in c:
            return (_rebuild_form, ("vectorized", self.n, c["vectorized"], self._name, check,
                                    cons))
        fd = set(self._fd_used)
        kwargs = {k: v for k, v in c.items() if k not in fd}
        return (_rebuild_callables, (self.n, kwargs, self._name, check))

    @property
    def name(self):
        """Label of the system (the built-in name for built-in systems)."""
        return self._name

    @property
    def force(self):
        """The system's own non-conservative force (a
        :class:`symplectic.forces.Force`: a built-in's ``damping=``, the
        forces of :meth:`from_sympy`), included in every run; None for a
        conservative system."""
        return getattr(self, "_force", None)

    @property
    def params(self):
        """Parameters of a built-in system (dict), None for Python systems."""
        return None if self._params is None else dict(self._params)

    def __repr__(self):
        if self.builtin is not None:
            args = ", ".join(f"{k}={_validate.value_text(v)}" for k, v in self._params.items())
            extra = (", with Python constraint callables"
                     if getattr(self, "_builtin_constraints", None) else "")
            return f"<symplectic.System {self.builtin}({args}), n={self.n}, built-in C{extra}>"
        label = f" {self._name!r}" if self._name else ""
        kind = "compiled C callback" if "cfunc" in (self._callables or {}) else "Python callables"
        return f"<symplectic.System{label} n={self.n}, {kind}>"

    # ------------------------------------------------------------------
    def mass(self, q):
        """M(q), the (n, n) mass matrix."""
        return self._eval(q, None, _M)[0]

    def mass_dir(self, q, g):
        """A(q, g) = d(M(q) g)/dq: ``A[i, c] = sum_j dM_ij/dq_c g_j`` (n, n)."""
        return self._eval(q, g, _A)[1]

    def mass_hess_dir(self, q, g):
        """Hessian in q of 1/2 g^T M(q) g, (n, n)."""
        return self._eval(q, g, _H)[2]

    def potential(self, q):
        """V(q) (float)."""
        return self._eval(q, None, _V)[3]

    def potential_grad(self, q):
        """grad V(q), (n,)."""
        return self._eval(q, None, _DV)[4]

    def potential_hess(self, q):
        """hess V(q), (n, n)."""
        return self._eval(q, None, _D2V)[5]

    def kinetic(self, q, p):
        """Kinetic energy 1/2 p^T M(q)^-1 p (same shapes as energy)."""
        q = np.asarray(q, dtype=float)
        V = (np.array([self.potential(row) for row in q]) if q.ndim == 2
             else self.potential(q))
        return self.energy(q, p) - V

    def velocity(self, q, p):
        """qdot = M(q)^-1 p for one state (n,) or row-wise (N, n)."""
        q = np.asarray(q, dtype=float)
        p = np.asarray(p, dtype=float)
        if q.ndim == 1:
            return np.linalg.solve(self.mass(q), p)
        if q.shape != p.shape or q.ndim != 2:
            raise ValueError(f"velocity(q, p) needs q and p of equal shape (n,) or (N, n), "
                             f"got {q.shape} and {p.shape}")
        Ms = np.array([self.mass(a) for a in q]).reshape(len(q), self.n, self.n)
        return np.linalg.solve(Ms, p[..., None])[..., 0]

    def momentum(self, q, qdot):
        """p = M(q) qdot for one state (n,) or row-wise (N, n)."""
        q = np.asarray(q, dtype=float)
        qdot = np.asarray(qdot, dtype=float)
        if q.ndim == 1:
            return self.mass(q) @ qdot
        return np.array([self.mass(a) @ b for a, b in zip(q, qdot)])

    # ------------------------------------------------------------------
    # ------------------------------------------------------------------ constraints
    def constraint(self, q):
        """g(q), the (m,) values of the holonomic constraints (ValueError
        without constraints)."""
        return self._constraint(q, None, 1)[0]

    def constraint_jac(self, q):
        """G(q) = dg/dq, (m, n): ``[k, j] = dg_k/dq_j``."""
        return self._constraint(q, None, 2)[1]

    def constraint_hess(self, q, mu):
        """S(q, mu) = sum_k mu_k d^2 g_k/dq^2, (n, n): the constraints' second
        derivatives contracted with a multiplier vector mu (m,) -- supplied,
        or central differences of G^T mu."""
        return self._constraint(q, mu, 4)[2]

    def project(self, q, p=None, *, qdot=None, tol=1e-14, max_iter=50):
        """A nearby state on the constraint manifold.

        q is moved by Newton's iteration q <- q - M^-1 G^T (G M^-1 G^T)^-1 g(q)
        (M = M(q) of the given q: the M-orthogonal projection to first order)
        until |g(q)| is below ``tol`` times the size of its terms; then p (or
        M(q) qdot) by the M(q)^-1-orthogonal projection onto the hidden
        constraint G(q) M(q)^-1 p = 0, p <- p - G^T (G M^-1 G^T)^-1 G M^-1 p.

        Returns q, or (q, p) when ``p`` or ``qdot`` is given.  ValueError
        when the iteration does not converge (a state too far from the
        manifold) or G is rank-deficient.
        """
        return _constraints.project(self, q, p, qdot, tol, max_iter)

    def check_constraint_derivatives(self, q, mu=None, *, rtol=1e-6):
        """Check G (and S, when supplied) against central differences of g
        (and of G^T mu) at q: returns ``{"constraint_jac": relative error,
        "constraint_hess": relative error or None}``, or raises
        :class:`symplectic.DerivativeError` naming the entry.  The first step
        or integration runs it at the initial q on systems whose constraint
        derivatives the user wrote (see ``derivative_check``)."""
        return _constraints.check_derivatives(self, q, mu, rtol)

    def check_derivatives(self, q, g=None, *, rtol=1e-6, raise_on_failure=True):
        """Check every supplied derivative against central finite differences at q.

        The same check that :func:`~symplectic.integrate` runs on first use
        (see :class:`System`, Notes): the full tensor dM_ij/dq_k that the
        core uses (rebuilt from A(q, e_j)) against differences of M; grad V
        against differences of V; the Hessian of 1/2 g^T M(q) g for the
        vector g (pseudo-random if omitted) against differences of
        1/2 A(q, g)^T g; hess V against differences of grad V.  Differences
        at two steps give a Richardson value and an error estimate; a
        derivative fails when its largest deviation exceeds
        ``max(rtol * largest entry, 10 * estimated finite-difference error)``.
        Derivatives that are themselves finite differences (not supplied) are
        reported as such and not checked.  Works on every system, built-in
        and SymPy-generated ones included.

        Returns a dict ``{name: relative error}`` (largest deviation relative
        to the largest entry; it can exceed ``rtol`` without failing where
        the finite differences themselves are less accurate, e.g. near a
        singular point).  Raises :class:`symplectic.DerivativeError` (a
        ValueError) naming the callback, the worst entry, both values and,
        when a permutation of the axes or a sign flip would match, the layout
        it looks like -- unless ``raise_on_failure`` is False.
        """
        return _derivcheck.check(self, q, g, rtol, raise_on_failure)


def _rebuild_builtin(name, n, flat, params, force=None, constraints=None):
    return System._from_builtin(name, n, flat, params, force, constraints)


def _rebuild_form(form, n, func, name, derivative_check=True, cons=None):
    return getattr(System, form)(n, func, name=name, derivative_check=derivative_check,
                                 **(cons or {}))


_CONSTRAINT_ARGS = ("constraint", "constraint_jac", "constraint_hess", "n_constraints")

_Q = "the coordinates q (n,)"

#: The callables of System(): {argument: (how it is called, its positional
#: arguments in words, their number)}, checked at construction
#: (:func:`_check_callbacks`; the C binding calls each so: csrc/binding/py_callbacks.c,
#: py_constraints.c).
_CALLBACKS = {
    "mass": ("mass(q) -> (n, n)", _Q, 1),
    "potential": ("potential(q) -> float", _Q, 1),
    "mass_grad": ("mass_grad(q) -> (n, n, n)", _Q, 1),
    "potential_grad": ("potential_grad(q) -> (n,)", _Q, 1),
    "mass_hess": ("mass_hess(q) -> (n, n, n, n)", _Q, 1),
    "potential_hess": ("potential_hess(q) -> (n, n)", _Q, 1),
    "mass_dir": ("mass_dir(q, g) -> (n, n)", _Q + " and a vector g (n,)", 2),
    "mass_hess_dir": ("mass_hess_dir(q, g) -> (n, n)", _Q + " and a vector g (n,)", 2),
    "constraint": ("constraint(q) -> (m,) values of g(q)", _Q, 1),
    "constraint_jac": ("constraint_jac(q) -> (m, n)", _Q, 1),
    "constraint_hess": ("constraint_hess(q) -> (m, n, n)", _Q, 1),
}


def _check_callbacks(given):
    """Each callable of ``given`` ({argument: value or None}) callable as
    :data:`_CALLBACKS` says: a TypeError naming the argument, the expected
    call and the callable's own signature otherwise (:func:`_validate.callback`;
    a callable without an inspectable signature passes)."""
    for key, f in given.items():
        if f is not None or key == "potential":
            expected, words, n_args = _CALLBACKS[key]
            _validate.callback(key, f, expected, words, n_args)


def _constraint_args(constraint, constraint_jac, constraint_hess, n_constraints, n):
    """The constraint keywords of the Python forms, checked: {} without constraints."""
    if constraint is None:
        if any(x is not None for x in (constraint_jac, constraint_hess, n_constraints)):
            raise TypeError("constraint_jac, constraint_hess and n_constraints need constraint "
                            "(the constraint values g(q))")
        return {}
    _check_callbacks(dict(constraint=constraint))
    if constraint_jac is None:
        raise TypeError("constraint_jac is required with constraint: constraint_jac(q) -> "
                        "(m, n), the Jacobian G = dg/dq")
    _check_callbacks(dict(constraint_jac=constraint_jac, constraint_hess=constraint_hess))
    out = dict(constraint=constraint, constraint_jac=constraint_jac,
               constraint_hess=constraint_hess)
    if n_constraints is not None:
        m = _validate.integer("n_constraints", n_constraints, 1)
        if m >= n:
            raise ValueError(f"n_constraints must be at most n - 1 = {n - 1} (a system keeps at "
                             f"least one degree of freedom), got {m}")
        out["n_constraints"] = m
    return out


def _rebuild_callables(n, kwargs, name, derivative_check=True):
    kw = dict(kwargs)
    mass, potential = kw.pop("mass"), kw.pop("potential")
    return System(n, mass, potential, name=name, derivative_check=derivative_check, **kw)
