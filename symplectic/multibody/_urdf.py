"""The URDF reader (standard library XML only): a URDF document -> a :class:`Tree`.

Read: ``<robot name>``; ``<link name>`` with ``<inertial>`` (``<origin xyz
rpy>``, ``<mass value>``, ``<inertia ixx ixy ixz iyy iyz izz>``); ``<joint
name type>`` with ``<parent link>``, ``<child link>``, ``<origin xyz rpy>``,
``<axis xyz>``, ``<limit lower upper effort velocity>`` (data only),
``<dynamics damping friction>`` and ``<mimic joint multiplier offset>``.
Ignored: visuals, collisions, meshes, materials, transmissions, Gazebo and
other tags.  Defaults (URDF's): a missing ``<origin>`` (or attribute of it)
is zero, a missing ``<axis>`` is (1, 0, 0), a link without ``<inertial>``
has zero mass and inertia.
"""
import os
import pathlib
import xml.etree.ElementTree as ET

import numpy as np

from . import _frames
from ._tree import Body, Joint, Tree

_XACRO = ("{http://www.ros.org/wiki/xacro}", "{http://ros.org/wiki/xacro}")


def read_tree(source, *, gravity=(0.0, 0.0, -9.81)):
    """The :class:`Tree` of a URDF document: ``source`` is a path (str or
    os.PathLike) or the XML text itself (a str that starts with ``<`` or
    contains ``<robot``, or bytes).  ValueError naming the element and the
    attribute for malformed XML, a document that is not a URDF, a missing
    required attribute or element, a value that is not a number; the Tree's
    own checks (a cycle, an unphysical inertia, ...) with the file's path in
    front of their message."""
    text, where = _source(source)
    try:
        try:
            root = ET.fromstring(text)
        except ET.ParseError as exc:
            raise ValueError(f"malformed XML: {exc}") from None
        _check_not_xacro(root)
        if _local(root.tag) != "robot":
            raise ValueError(f"not a URDF: the document's root element is <{_local(root.tag)}>, "
                             f"not <robot>")
        name = root.get("name")
        bodies = [_link(e, i) for i, e in enumerate(_children(root, "link"))]
        joints = [_joint(e, i) for i, e in enumerate(_children(root, "joint"))]
        return Tree(bodies, joints, gravity=gravity, name=name)
    except (ValueError, NotImplementedError) as exc:
        if where is None:
            raise
        raise type(exc)(f"{where}: {exc}") from None


def _source(source):
    """(the XML text or bytes, the file's path or None)."""
    if isinstance(source, bytes):
        return source, None
    if isinstance(source, str):
        if source.lstrip().startswith("<") or "<robot" in source:
            return source, None
        path = source
    elif isinstance(source, os.PathLike):
        path = os.fspath(source)
    else:
        raise TypeError(f"from_urdf needs a path (str or pathlib.Path) or the URDF's XML text, "
                        f"got {type(source).__name__}")
    return pathlib.Path(path).read_bytes(), str(path)


def _local(tag):
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _check_not_xacro(root):
    for e in root.iter():
        if isinstance(e.tag, str) and e.tag.startswith(_XACRO):
            raise ValueError(f"a xacro document (it has <xacro:{_local(e.tag)}>): expand it to a "
                             f"URDF first, e.g. `xacro robot.urdf.xacro > robot.urdf`")


def _children(elem, tag):
    return [e for e in elem if _local(e.tag) == tag]


def _one(elem, tag, owner, required=False):
    """The child <tag> of elem (None when absent and not required)."""
    found = _children(elem, tag)
    if len(found) > 1:
        raise ValueError(f"{owner} has {len(found)} <{tag}> elements; URDF allows one")
    if not found:
        if required:
            raise ValueError(f"{owner} has no <{tag}> element")
        return None
    return found[0]


def _attr(elem, attr, owner):
    value = elem.get(attr)
    if value is None:
        raise ValueError(f"{owner}: <{_local(elem.tag)}> has no attribute {attr!r}")
    return value


def _numbers(elem, attr, owner, count, default=None):
    """``count`` finite floats from the attribute (``default`` when it is absent and
    a default is given)."""
    text = elem.get(attr)
    if text is None:
        if default is None:
            raise ValueError(f"{owner}: <{_local(elem.tag)}> has no attribute {attr!r}")
        return default
    fields = text.split()
    shown = f'<{_local(elem.tag)} {attr}="{text}">'
    try:
        values = [float(x) for x in fields]
    except ValueError:
        raise ValueError(f"{owner}: {shown}: {attr} must be {_count(count)}, got {text!r}") \
            from None
    if len(values) != count:
        raise ValueError(f"{owner}: {shown}: {attr} must be {_count(count)}, got "
                         f"{len(values)}")
    if not all(np.isfinite(values)):
        raise ValueError(f"{owner}: {shown}: {attr} must be finite")
    return values if count > 1 else values[0]


def _count(count):
    return "a number" if count == 1 else f"{count} numbers separated by spaces"


def _origin(elem, owner):
    """(xyz, rpy) of the optional child <origin> (zeros when absent)."""
    o = _one(elem, "origin", owner)
    if o is None:
        return [0.0] * 3, [0.0] * 3
    return (_numbers(o, "xyz", owner, 3, [0.0] * 3), _numbers(o, "rpy", owner, 3, [0.0] * 3))


def _named(elem, index, what):
    name = elem.get("name")
    if name is None or not name:
        raise ValueError(f"the <{what}> element number {index + 1} has no attribute 'name'")
    return name


def _link(elem, index):
    name = _named(elem, index, "link")
    owner = f"link {name!r}"
    inertial = _one(elem, "inertial", owner)
    if inertial is None:
        return Body(name)
    owner_i = f"{owner}, <inertial>"
    xyz, rpy = _origin(inertial, owner_i)
    mass = _numbers(_one(inertial, "mass", owner_i, required=True), "value", owner_i, 1)
    ie = _one(inertial, "inertia", owner_i, required=True)
    xx, xy, xz, yy, yz, zz = (_numbers(ie, k, owner_i, 1)
                              for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
    inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    R = _frames.rpy_matrix(rpy)                # the inertia frame in the link frame
    inertia = R @ inertia @ R.T
    return Body(name, mass=mass, com=xyz, inertia=0.5 * (inertia + inertia.T))


def _joint(elem, index):
    name = _named(elem, index, "joint")
    owner = f"joint {name!r}"
    jtype = _attr(elem, "type", owner)
    parent = _attr(_one(elem, "parent", owner, required=True), "link", owner)
    child = _attr(_one(elem, "child", owner, required=True), "link", owner)
    xyz, rpy = _origin(elem, owner)
    axis_e = _one(elem, "axis", owner)
    axis = [1.0, 0.0, 0.0] if axis_e is None else _numbers(axis_e, "xyz", owner, 3)
    damping = friction = 0.0
    dyn = _one(elem, "dynamics", owner)
    if dyn is not None:
        damping = _numbers(dyn, "damping", owner, 1, 0.0)
        friction = _numbers(dyn, "friction", owner, 1, 0.0)
    limit = None
    lim = _one(elem, "limit", owner)
    if lim is not None:
        limit = {k: _numbers(lim, k, owner, 1) for k in ("lower", "upper", "effort", "velocity")
                 if lim.get(k) is not None}
    mimic = None
    mim = _one(elem, "mimic", owner)
    if mim is not None:
        mimic = (_attr(mim, "joint", owner), _numbers(mim, "multiplier", owner, 1, 1.0),
                 _numbers(mim, "offset", owner, 1, 0.0))
    return Joint(name, jtype, parent, child, xyz=xyz, rpy=rpy, axis=axis, damping=damping,
                 friction=friction, mimic=mimic, limit=limit)
