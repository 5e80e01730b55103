"""Exceptions raised by symplectic."""


class ConvergenceError(RuntimeError):
    """An integration could not continue past a step.

    Raised when Newton's iteration of an implicit scheme does not converge,
    its matrix is singular, a non-finite value appears, the mass matrix
    stops being positive definite, or the state reaches a singularity of the
    system's coordinates (reason "coordinate singularity ...":
    ``systems.lagrange_top`` within 0.01 rad of the vertical, where the
    quaternion form ``systems.lagrange_top_quaternion`` is the remedy).  The message names the step, the time and
    the residual.  A run that a built-in refuses before its first step
    (``systems.lagrange_top`` whose exact motion from the initial state
    comes that close) has step 0, t = t0, no Newton iterations, and the
    initial state alone in ``trajectory``.

    Attributes
    ----------
    step : int
        Index k of the failing step t_k -> t_{k+1} (0-based).
    t : float
        Time t_k at the start of the failing step.
    residual : float
        Infinity norm of the last Newton residual (momentum units), nan if
        not applicable.
    iterations : int
        Newton iterations spent on the failing step.
    reason : str
        What went wrong (from the C core).
    trajectory : symplectic.Trajectory or None
        The trajectory computed up to (and including) t_k, so that long runs
        are not lost.
    """

    def __init__(self, message, *, step=None, t=None, residual=float("nan"),
                 iterations=0, reason="", trajectory=None):
        super().__init__(message)
        self.step, self.t, self.residual = step, t, residual
        self.iterations, self.reason, self.trajectory = iterations, reason, trajectory


class DerivativeError(ValueError):
    """A supplied derivative disagrees with finite differences.

    Raised by :meth:`symplectic.System.check_derivatives` and, the first time
    a system with user-supplied derivatives is stepped or integrated, by
    :func:`symplectic.step`, :func:`symplectic.integrate` and
    :func:`symplectic.integrate_many` (unless ``check=False`` or
    ``System.derivative_check`` is False).  The message names the callback,
    the worst entry, the supplied and the finite-difference value, the q
    where it happened and, when a permutation of the tensor's axes (or a
    sign flip) would match, the layout the callback looks like it uses.

    Attributes
    ----------
    callback : str
        The callback as the user supplied it (e.g. ``"mass_grad"``,
        ``"mass_dir"``, ``"the combined callable's dM"``).
    quantity : str
        ``"mass_grad"``, ``"mass_hess"``, ``"potential_grad"`` or
        ``"potential_hess"``.
    index : tuple of int
        Worst entry, in the documented layout of ``quantity``
        (``[k, i, j]`` for mass_grad, ``[k, l, i, j]`` for mass_hess, ``[k]``,
        ``[k, l]``; ``[k, l]`` of H(q, g) when the full mass Hessian was too
        large to reconstruct).
    supplied, finite_difference : float
        The two values at ``index``.
    q : ndarray
        The configuration where the check failed.
    error, tolerance : float
        ``|supplied - finite_difference|`` at ``index`` and the tolerance it
        exceeded.
    layout : str or None
        The layout hint (None if no permutation or sign flip matches).
    report : dict
        ``{quantity: relative error}`` for every checked derivative at ``q``.
    """

    def __init__(self, message, *, callback=None, quantity=None, index=None, supplied=None,
                 finite_difference=None, q=None, error=None, tolerance=None, layout=None,
                 report=None):
        super().__init__(message)
        self.callback = callback
        self.quantity = quantity
        self.index = index
        self.supplied = supplied
        self.finite_difference = finite_difference
        self.q = q
        self.error = error
        self.tolerance = tolerance
        self.layout = layout
        self.report = report


class StabilityWarning(RuntimeWarning):
    """A system is stepped at or beyond the method's stability limit.

    Before the first step of :func:`symplectic.integrate` and
    :func:`symplectic.integrate_many`, the fastest linearised frequency at
    the initial state, omega_max (the square root of the largest eigenvalue
    of M^-1 hess V there; on a constraint manifold, of the reduced pencil),
    is compared with the method's limit on the harmonic oscillator
    (``symplectic.methods(details=True)[m]["stability"]``, e.g. omega h <
    2 sqrt 2 for Simpson): at or beyond it the scheme's solution grows
    exponentially on that mode.  A warning (not an error) because the
    estimate is local (a nonlinear motion may visit stiffer states, or
    softer ones); during the run the core stops a growth that a stable step
    cannot produce with :class:`ConvergenceError` ("unstable step size").
    Turn it into an error with
    ``warnings.simplefilter("error", symplectic.StabilityWarning)``.
    """
