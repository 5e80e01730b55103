"""Exceptions raised by symplectic."""


class ConvergenceError(RuntimeError):
    """An integration could not continue past a step.

    Raised when Newton's iteration of an implicit scheme does not converge,
    its matrix is singular, a non-finite value appears, or the mass matrix
    stops being positive definite.  The message names the step, the time and
    the residual.

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
        self.step = step
        self.t = t
        self.residual = residual
        self.iterations = iterations
        self.reason = reason
        self.trajectory = trajectory
