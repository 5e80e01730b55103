"""The model layer's private modules: what is integrated, and the checks of it.

The systems (``_system``: ``sp.System``), their constraints (``_constraints``)
and finite-difference fallbacks (``_fd``), the registries read from the C core
(``_registry``), every input check of the public API (``_validate``), the
errors (``_errors``), the Lagrange top's pre-run check (``_topchart``), the
addresses of C callbacks (``_addresses``) and the first-use derivative check
(the ``_derivcheck`` package).  The public modules of the same layer --
``forces``, ``systems``, ``linear``, ``symbolic`` -- stand beside this folder
under their public names.  Nothing here imports the run layer (``_run``) or
anything above it (tests/layout/test_layering.py).
"""
