"""Optional dependencies, imported on first use: an ImportError that names
the extra to install when one is missing."""


def load(name, purpose, extra, package):
    """The module ``name`` (e.g. "scipy.special"), or ImportError("<purpose>:
    pip install 'symplectic-vi[<extra>]' (or pip install <package>)")."""
    try:
        return __import__(name, fromlist=["_"])
    except ImportError:
        raise ImportError(f"{purpose}: pip install 'symplectic-vi[{extra}]' (or pip install "
                          f"{package})") from None
