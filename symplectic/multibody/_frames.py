"""Rotations and rigid placements in NumPy: URDF's roll-pitch-yaw, a rotation
about a unit axis, composition, and the inertia of combined bodies."""
import math

import numpy as np


def rpy_matrix(rpy):
    """R(rpy) = Rz(yaw) Ry(pitch) Rx(roll), URDF's convention: roll about the
    fixed x axis first, then pitch about the fixed y axis, then yaw about the
    fixed z axis (radians)."""
    roll, pitch, yaw = (float(a) for a in rpy)
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr]])


def axis_rotation(axis, angle):
    """The rotation by ``angle`` (rad, right-handed) about the unit vector
    ``axis``: R = I + sin(a) K + (1 - cos(a)) K^2 with K the cross-product
    matrix of the axis."""
    K = skew(axis)
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)


def skew(v):
    """The cross-product matrix [v]x, [v]x w = v x w."""
    x, y, z = v
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def compose(a, b):
    """The placement (R, p) of frame C in frame A from those of B in A (``a``)
    and of C in B (``b``): x_A = R_a (R_b x_C + p_b) + p_a."""
    Ra, pa = a
    Rb, pb = b
    return Ra @ Rb, Ra @ pb + pa


def shifted_inertia(inertia, mass, d):
    """The inertia tensor about a point at -d from the centre of mass (the
    parallel-axis theorem): I + m (|d|^2 E - d d^T)."""
    d = np.asarray(d, dtype=float)
    return inertia + mass * (float(d @ d) * np.eye(3) - np.outer(d, d))


def combine(parts):
    """One rigid body from parts (mass, centre of mass, inertia about it), all
    in one frame: the total mass, the combined centre of mass (the origin when
    the mass is zero) and the inertia about it (parallel-axis theorem)."""
    m = sum(p[0] for p in parts)
    if m > 0.0:
        c = sum(p[0] * p[1] for p in parts) / m
    else:
        c = np.zeros(3)
    inertia = np.zeros((3, 3))
    for mi, ci, Ii in parts:
        inertia = inertia + shifted_inertia(Ii, mi, ci - c)
    return m, c, 0.5 * (inertia + inertia.T)
