"""Settings of a full and a quick run (grids, caps, repeats) for every section."""

TARGETS = (1e-6, 1e-8, 1e-10)               # sections 1 and 7

FULL = dict(
    quick=False,
    T=100.0,
    n_per_octave=4,            # step grid: N = N0 * 2^(k/4)
    tol_per_decade=4,          # tolerance grid for the cheap adaptive solvers
    slow_tol_per_decade=2,     # ... for RK45 and Radau (seconds per run)
    cap=25.0,                  # stop a solver's search after a run longer than this (s)
    rounds=7,                  # interleaved repeats of the chosen configurations
    budget=6.0,                # ... but no more repeats once a config used this many seconds
    perstep_steps=200_000,
    perstep_rounds=9,
    horizons=(100.0, 1000.0, 10_000.0),
    horizon_budget=20.0,
    hold_dop_max_T=1000.0,
    forms_steps=4000,
    forms_builtin_steps=100_000,
    forms_rounds=7,
    chain_ns=(2, 4, 8, 16, 32, 64),
    chain_rounds=7,
    chain_steps=200,           # a 2 s segment for every n, repeated chain_work / (n^2 steps) times
    chain_work=2e5,
    chain_long_steps=1000,     # untimed robustness run
    ens_K=1000,
    ens_steps=1000,
    ens_rounds=11,
    ens_max_rounds=40,
    ens_quiet=5,
    small_cap=10.0,
    small_rounds=5,
    # ---- 8. double pendulum against the strongest peers (issue 19)
    peer_horizons=(100.0, 1e3, 1e4, 1e5),
    peer_targets=(1e-6, 1e-8, 1e-10, 1e-12),
    peer_cap=40.0,             # no run (search or timing) projected longer than this (s)
    peer_rounds=5,             # interleaved timing rounds per horizon ...
    peer_round_budget=15.0,    # ... but no more rounds once a configuration used this many seconds
    peer_min_rounds=3,
    peer_chunk=1 << 20,        # sp.integrate calls of at most this many steps (memory)
    peer_python_max_T=1e3,     # SciPy DOP853 and CVODE (Python right-hand side): longest horizon
    # ---- 9. per step against the hand-written C Simpson step (yardstick)
    yard_steps=200_000,
    yard_rounds=9,
    yard_budget=0.3,           # seconds of repeats the yardstick program spends per round
    # ---- 10. chain and arm against GSL rk8pd (LU and ABA right-hand sides), MuJoCo RK4, heyoka
    # (4035 s on 2026-12-04 on the 2-vCPU Intel machine, with a test suite and a CI run beside it)
    pc_ns=(4, 8, 16, 32, 64, 128),
    pc_target=1e-8,
    pc_horizons=(10.0, 100.0, 1000.0),
    pc_max_T={},                         # longest horizon per n, every method (cost): none, the cap rules
    # longest horizon per method and n where the cap alone would stop a search only after runs
    # just under it (MuJoCo over 1000 s: 11-36 s a run; its lag behind ours is clear at 100 s)
    pc_method_max_T={"mujoco-rk4": {8: 100.0, 16: 100.0, 32: 100.0}},
    pc_cap=20.0,                         # no search run projected longer than this (s)
    pc_warm=2,                           # search n from this many settings before n/2's choice
    pc_gsl_loosest=4.0,                  # GSL's tolerances from 10^-this (4 per decade) ...
    pc_heyoka_loosest=6.0,               # ... heyoka's (each a compile) from 10^-this
    pc_rounds=3,
    pc_round_budget=20.0,
    pc_default_max_compile=30.0,         # heyoka's default (non-compact) mode: compile budget (s)
    # ---- 11-22. the focused sections
    forces_steps=5000, forces_rounds=11, forces_methods=("midpoint", "simpson", "lobatto4", "rk4"),
    sym_steps=20_000, sym_rounds=11,
    con_steps=20_000, con_rounds=7,
    integ_rounds=21,
    prog_steps=10 ** 7, prog_rounds=7, prog_hook_steps=10 ** 6, prog_hook_rounds=3,
    store_steps=10 ** 7,
    top_quick=False, top_rounds=5,
    closed_rounds=7, closed_steps=(100, 100_000),
    deriv_rounds=21, deriv_steps=1000,
    plaus_quick=True, plaus_thin=1,      # the shorter lists of the former plausibility.py --quick
    branch_quick=False, branch_rounds=15,
    tan_cases=((2, 20_000), (8, 5000), (32, 1000)), tan_methods=("simpson", "lobatto5"),
    tan_rounds=9, tan_grad_rows=(10, 1000),
    # ---- 23. stiff oscillations: FPU (HLW I.5), a stiff spring, Gauss against Lobatto per step
    stiff_T=200.0, stiff_slow_T=20.0, stiff_omega_h=(0.5, 1.0, 2.0, 5.0, 10.0), stiff_rounds=5,
    stiff_spring_steps=2000, stiff_spring_omega_h=(1.4, 14.0, 141.0),
    stiff_cost_cases=((2, 0.01, 20_000), (32, 0.005, 1000)), stiff_cost_rounds=9,
    # ---- 24. optimal control: the swing-up, ours against backward Euler and the midpoint rule
    control_ours=(("simpson", 25), ("simpson", 50), ("simpson", 100), ("lobatto4", 25),
                  ("lobatto4", 50), ("lobatto4", 100)),
    control_reference=("lobatto4", 100), control_baseline_N=(500,), control_rounds=2,
    control_crane=(("simpson", 40), ("simpson", 80), ("simpson", 160), ("lobatto4", 20),
                   ("lobatto4", 40), ("lobatto4", 80)),
    control_crane_baseline_N=(150, 300),       # backward Euler and the midpoint rule on the crane
    # the 10 s swing-up from one optimum: the anchor solved from the seed's nodes, then the cases
    control_same_seed=("lobatto4", 100), control_same_anchor=("simpson", 100),
    control_same_ours=(("simpson", 25), ("simpson", 50), ("simpson", 100), ("lobatto4", 50)),
    control_cart_pendulum=(("simpson", 30), ("simpson", 60), ("simpson", 120)),
    # the exact Hessian against differences: (problem, method, N), interleaved repeats
    control_hessian=(("crane", "simpson", 80), ("crane", "lobatto4", 40),
                     ("crane", "simpson", 160), ("cart", "simpson", 60)),
    control_hessian_reps=7, control_hessian_solves=2,
    # ---- 25. control's defaults: the polish, the miss, the solver without ipyopt, minimum time
    control_defaults_rounds=5,
    control_defaults_polish=(("lobatto5", 40), ("lobatto5", 160), ("simpson", 160)),
    control_defaults_miss=(("simpson", 40), ("simpson", 80), ("lobatto5", 40)),
    control_defaults_solver=(("lobatto5", 40), ("simpson", 20), ("simpson", 80)),
    control_defaults_min_time=(("cartpole", "simpson", 40), ("cartpole", "lobatto5", 40),
                               ("crane", "simpson", 40), ("crane", "simpson", 80),
                               ("crane", "simpson", 160), ("crane", "lobatto4", 20),
                               ("crane", "lobatto4", 40), ("crane", "lobatto4", 80)),
    # ---- 26. rigid-body trees: the C built-in against the same Lagrangian from SymPy
    tree_steps=5000, tree_rounds=9, tree_chain_n=12,    # SymPy builds the chain of 12 in minutes
)

QUICK = dict(                # coarse grids, short caps, few repeats: indicative numbers in minutes
    FULL, quick=True,
    n_per_octave=2, tol_per_decade=2, slow_tol_per_decade=1, cap=0.8, rounds=3, budget=1.5,
    perstep_steps=20_000, perstep_rounds=3,
    horizons=(100.0, 1000.0), horizon_budget=3.0, hold_dop_max_T=100.0,
    forms_steps=1000, forms_builtin_steps=20_000, forms_rounds=3,
    chain_ns=(2, 4, 8, 16, 32), chain_rounds=3, chain_work=5e4, chain_long_steps=500,
    ens_K=200, ens_steps=500, ens_rounds=3, ens_max_rounds=6, ens_quiet=2,
    small_cap=0.5, small_rounds=3,
    peer_horizons=(100.0, 1e3), peer_targets=(1e-6, 1e-8), peer_cap=2.0, peer_rounds=2,
    peer_round_budget=2.0, peer_min_rounds=2,
    yard_steps=20_000, yard_rounds=3, yard_budget=0.1,
    pc_ns=(4, 8, 16), pc_horizons=(10.0, 100.0), pc_max_T={16: 10.0}, pc_method_max_T={}, pc_cap=2.0,
    pc_rounds=2, pc_round_budget=2.0, pc_default_max_compile=10.0,
    # the focused sections: 3 rounds each, 10x fewer steps, the short case lists
    **{k: 3 for k in ("forces_rounds", "sym_rounds", "con_rounds", "integ_rounds", "prog_rounds",
                      "closed_rounds", "deriv_rounds", "branch_rounds", "tan_rounds", "stiff_rounds",
                      "stiff_cost_rounds", "tree_rounds")},
    forces_steps=1000, forces_methods=("midpoint", "simpson"), sym_steps=2000, con_steps=2000,
    prog_steps=10 ** 6, prog_hook_steps=10 ** 5, prog_hook_rounds=1, store_steps=10 ** 6,
    top_quick=True, top_rounds=2, closed_steps=(100, 10_000), plaus_thin=6, branch_quick=True,
    tan_cases=((2, 2000), (8, 500), (32, 100)), tan_methods=("simpson",),
    stiff_T=50.0, stiff_cost_cases=((2, 0.01, 2000), (32, 0.005, 100)),
    control_ours=(("simpson", 25), ("simpson", 50), ("lobatto4", 50)), control_rounds=1,
    control_defaults_rounds=2, control_defaults_polish=(("lobatto5", 40),),
    control_defaults_miss=(("simpson", 40),), control_defaults_solver=(("lobatto5", 40),),
    control_defaults_min_time=(("cartpole", "simpson", 40), ("crane", "simpson", 40)),
    control_reference=("lobatto4", 50), control_crane=(("simpson", 40), ("lobatto4", 20)),
    control_cart_pendulum=(("simpson", 30),),
    control_hessian=(("crane", "simpson", 40), ("cart", "simpson", 30)), control_hessian_reps=3,
    control_hessian_solves=1, tree_steps=1000, tree_chain_n=8,
)
