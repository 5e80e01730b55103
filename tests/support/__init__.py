"""Helpers shared by the test modules (no tests here).

- ``models``: independent NumPy models of the papers' systems, reference solvers and order
  fitting; they import nothing from symplectic, so they check the C core independently.
- ``cases``: the registries' rows as test cases and the systems built for the tests (these
  do use the package).
- ``cbuild``: the one C-compiler finder, the one compile-a-shared-library helper, and the
  session's cache of object files (``ObjectCache``, conftest.py's ``c_objects``) for the tests
  that build programs from csrc/core/.
- ``clibs``: C callbacks compiled by fixtures that several test modules share.
- ``forms_dp``: the double pendulum in the fast system forms (vectorised, combined, compiled).
- ``top``: near-vertical states of the heavy top.
- ``twins``: an independent Python twin of every built-in system (from the physics, not the C).
- ``rigid_body_ref``: the heavy top as a rigid body, written from the physics (the tops' reference).
- ``models_cart``: a 3-link pendulum on a cart, from ``symplectic.symbolic``.
- ``unforced_cases``: the runs whose arrays tests/data/unforced_base.npz holds (and the script
  that wrote it).
- ``branch_check``: an independent continuation in h of a step's root (wrong-branch judge).
- ``figcheck``: what a Matplotlib figure shows (axis labels and units, legends off the data).
- ``variational``: the continuous variational equations (SymPy, DOP853 at 1e-13): the
  reference of the tangent (``integrate(..., tangent=True)``).
- ``differences``: d(q_N, p_N)/d(q_0, p_0) by central differences of whole runs.
- ``rotations``: elementary rotations and URDF's roll-pitch-yaw, from the definitions.
- ``urdf_reference``: rigid-body trees from URDF files, read and modelled again in SymPy
  (its own XML reading and forward kinematics; nothing from ``symplectic.multibody``).

Test modules import from here, never from conftest.py (which holds only fixtures and hooks)
nor from another test module.
"""
