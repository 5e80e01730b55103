"""Generated spatial multibody trees (URDF text) for the tests and the
benchmarks of the spatial O(n) Newton path (benchmarks/spatial_tree_solver.py)."""
import numpy as np


def spatial_urdf(n, branched=False, seed=0, damping=0.0):
    """A generated spatial tree of n links: revolute joints about x, y, z in
    turn (every fifth prismatic along its axis), 0.4 m offsets, 0.2 rad
    twists; branched: from the third link on, a link hangs from a random
    earlier one half of the time."""
    rng = np.random.default_rng(seed)
    axes = ["1 0 0", "0 1 0", "0 0 1"]
    out = ['<robot name="gen">', '<link name="l0"/>']
    for i in range(1, n + 1):
        parent = i - 1
        if branched and i >= 3 and rng.random() < 0.5:
            parent = int(rng.integers(1, i))
        kind = "prismatic" if i % 5 == 0 else "revolute"
        out.append(f'<link name="l{i}"><inertial><origin xyz="0.01 0 0.2"/>'
                   f'<mass value="{1.0 + 0.1 * (i % 3)}"/><inertia ixx="0.02" ixy="0.001" ixz="0"'
                   f' iyy="0.025" iyz="0" izz="0.01"/></inertial></link>')
        out.append(f'<joint name="j{i}" type="{kind}"><parent link="l{parent}"/>'
                   f'<child link="l{i}"/><origin xyz="0 0 0.4" rpy="0.2 0 0"/>'
                   f'<axis xyz="{axes[i % 3]}"/><dynamics damping="{damping * (1 + i % 4)}"/>'
                   f'<limit effort="1" velocity="1" lower="-3" upper="3"/></joint>')
    out.append("</robot>")
    return "\n".join(out)
