"""The package's version (``symplectic.__version__``), in a module of its own
so that the run's files can record it without importing the package face."""
__version__ = "0.1.0"
