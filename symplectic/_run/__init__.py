"""The run layer's private modules: runs and their results.

``step``, ``integrate`` (``_integrate``), ``integrate_many`` (``_ensemble``),
``sp.Integrator`` (``_integrator``); what a run returns -- ``sp.Trajectory``
(``_trajectory``), its dense output (``_dense``) and files (``_io``); what a
run watches -- events (``_events``), progress (``_progress``) and the step
size's stability (``_stability``).  They import the model layer (``_model``,
``forces``, ``linear``) and the engine, never the tools or the face above
(tests/layout/test_layering.py).
"""
