"""Elementary rotations and URDF's roll-pitch-yaw, written from the definitions (R = Rz(yaw)
Ry(pitch) Rx(roll)) for the multibody tests' expected values; nothing from symplectic."""
import math

import numpy as np


def Rx(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def Ry(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def Rz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rpy(r, p, y):
    return Rz(y) @ Ry(p) @ Rx(r)


def rpy_of(R):
    """(roll, pitch, yaw) of R = Rz(yaw) Ry(pitch) Rx(roll), |pitch| < pi/2."""
    return (math.atan2(R[2, 1], R[2, 2]), -math.asin(R[2, 0]), math.atan2(R[1, 0], R[0, 0]))
