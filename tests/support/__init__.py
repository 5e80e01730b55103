"""Helpers shared by the test modules (no tests here).

- ``models``: independent NumPy models of the papers' systems, reference solvers and order
  fitting; they import nothing from symplectic, so they check the C core independently.
- ``cases``: the registries' rows as test cases and the systems built for the tests (these
  do use the package).
- ``cbuild``: the one C-compiler finder and the one compile-a-shared-library helper.
- ``clibs``: C callbacks compiled by fixtures that several test modules share.
- ``forms_dp``: the double pendulum in the fast system forms (vectorised, combined, compiled).
- ``top``: near-vertical states of the heavy top.

Test modules import from here, never from conftest.py (which holds only fixtures and hooks)
nor from another test module.
"""
