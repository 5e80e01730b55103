"""The benchmark suite of symplectic, one module per section (run it with `python benchmarks/run.py`).

common        timing helpers (interleaved repeats, medians), CSV/Markdown formatting, machine info
config        grids, caps and repeats of a full and a quick run
solvers       the methods of the work-precision sections (symplectic, SciPy, CVODE, GSL)
work_precision  sections 1 and 7      per_step      section 2       long_horizon  section 3
python_forms  section 4               chain         section 5       ensemble      section 6
peers         search and interleaved timing across horizons and targets (sections 8 and 10)
heyoka_models heyoka.py integrators   peers_dp      section 8       yardstick     section 9
peers_chain   section 10 (chain_peers: its GSL and MuJoCo methods, shared with chain_baselines.py)
report, report_peers, plots, results_md: the output
forces 11, symbolic 12, constraints 13, integrator 14, progress 15, store_every 16, top_forms 17,
closed_form 18, derivcheck 19, plausibility 20, branch 21, tangent 22, stiff 23, control 24: the
focused sections
(run_section)
readme_figures  the performance figures of README.md and docs/theory.md, from the recorded results
"""
