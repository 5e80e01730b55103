"""symplectic.multibody.from_urdf refuses what is not a URDF it can model, with a message
naming the element and the attribute (or the link or joint, and the file)."""
import pathlib

import pytest

from symplectic import multibody as mb

INERTIAL = ('<inertial><origin xyz="0 0 -0.5"/><mass value="1"/>'
            '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.05"/></inertial>')


def robot(links="", joints="", name="r"):
    return f'<robot name="{name}">{links}{joints}</robot>'


def two_links(joint):
    """A root and one link with an inertial, joined by ``joint`` (an XML string)."""
    return robot(f'<link name="base"/><link name="arm">{INERTIAL}</link>', joint)


def revolute(inner="", attrs='name="j" type="revolute"'):
    return f'<joint {attrs}><parent link="base"/><child link="arm"/>{inner}</joint>'


def test_the_well_formed_base_case_reads():
    """The documents below differ from this one by one defect each."""
    sys = mb.from_urdf(two_links(revolute('<axis xyz="0 1 0"/>')))
    assert sys.coordinates == ("j",)


@pytest.mark.parametrize("text", ['<robot name="r"><link name="a"></robot>',
                                  '<robot name="r"><link name="a"/>',
                                  '<robot name="r"><link name="a"/></robot> trailing <'])
def test_malformed_xml(text):
    with pytest.raises(ValueError, match=r"malformed XML"):
        mb.from_urdf(text)


def test_not_a_urdf():
    with pytest.raises(ValueError, match=r"not a URDF: the document's root element is <sdf>, "
                                         r"not <robot>"):
        mb.from_urdf('<sdf version="1.6"><model name="m"/></sdf>')


def test_xacro_document():
    text = ('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
            '<xacro:property name="l" value="1"/><link name="a"/></robot>')
    with pytest.raises(ValueError, match=r"a xacro document.*<xacro:property>.*expand it"):
        mb.from_urdf(text)


@pytest.mark.parametrize("doc, message", [
    (robot('<link/>'), r"the <link> element number 1 has no attribute 'name'"),
    (two_links(revolute(attrs='type="revolute"')),
     r"the <joint> element number 1 has no attribute 'name'"),
    (two_links(revolute(attrs='name="j"')), r"joint 'j': <joint> has no attribute 'type'"),
    (two_links('<joint name="j" type="revolute"><parent/><child link="arm"/></joint>'),
     r"joint 'j': <parent> has no attribute 'link'"),
    (two_links('<joint name="j" type="revolute"><parent link="base"/><child/></joint>'),
     r"joint 'j': <child> has no attribute 'link'"),
    (two_links('<joint name="j" type="revolute"><child link="arm"/></joint>'),
     r"joint 'j' has no <parent> element"),
    (two_links(revolute('<axis/>')), r"joint 'j': <axis> has no attribute 'xyz'"),
    (two_links(revolute('<mimic multiplier="2"/>')), r"joint 'j': <mimic> has no attribute "
                                                      r"'joint'"),
    (robot('<link name="base"/><link name="arm"><inertial><mass/><inertia ixx="1" ixy="0" '
           'ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>', revolute()),
     r"link 'arm', <inertial>: <mass> has no attribute 'value'"),
    (robot('<link name="base"/><link name="arm"><inertial><mass value="1"/><inertia ixx="1" '
           'ixy="0" ixz="0" iyy="1" iyz="0"/></inertial></link>', revolute()),
     r"link 'arm', <inertial>: <inertia> has no attribute 'izz'"),
    (robot('<link name="base"/><link name="arm"><inertial><inertia ixx="1" ixy="0" ixz="0" '
           'iyy="1" iyz="0" izz="1"/></inertial></link>', revolute()),
     r"link 'arm', <inertial> has no <mass> element"),
    (robot('<link name="base"/><link name="arm"><inertial><mass value="1"/></inertial></link>',
           revolute()),
     r"link 'arm', <inertial> has no <inertia> element"),
])
def test_missing_required_attribute_or_element(doc, message):
    with pytest.raises(ValueError, match=message):
        mb.from_urdf(doc)


@pytest.mark.parametrize("inner, message", [
    ('<origin xyz="a b c"/>', r"""joint 'j': <origin xyz="a b c">: xyz must be 3 numbers"""),
    ('<origin xyz="1 2"/>', r"""joint 'j': <origin xyz="1 2">: xyz must be 3 numbers.*got 2"""),
    ('<origin rpy="0 0 nan"/>', r"""joint 'j': <origin rpy="0 0 nan">: rpy must be finite"""),
    ('<axis xyz="0 one 0"/>', r"""joint 'j': <axis xyz="0 one 0">: xyz must be 3 numbers"""),
    ('<dynamics damping="lots"/>', r"""joint 'j': <dynamics damping="lots">: damping must be a """
                                   r"""number"""),
    ('<limit lower="-1" upper="x1" effort="1" velocity="1"/>',
     r"""joint 'j': <limit upper="x1">: upper must be a number"""),
    ('<mimic joint="j" multiplier="two"/>', r"""<mimic multiplier="two">"""),
])
def test_non_numeric_values_in_a_joint(inner, message):
    with pytest.raises(ValueError, match=message):
        mb.from_urdf(two_links(revolute(inner)))


def test_non_numeric_mass_and_inertia():
    doc = robot('<link name="base"/><link name="arm"><inertial><mass value="heavy"/>'
                '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>',
                revolute())
    with pytest.raises(ValueError, match=r"""link 'arm', <inertial>: <mass value="heavy">: """
                                         r"""value must be a number"""):
        mb.from_urdf(doc)
    doc = robot('<link name="base"/><link name="arm"><inertial><mass value="1"/>'
                '<inertia ixx="1" ixy="0" ixz="0" iyy="1e" iyz="0" izz="1"/></inertial></link>',
                revolute())
    with pytest.raises(ValueError, match=r"""<inertia iyy="1e">: iyy must be a number"""):
        mb.from_urdf(doc)


def test_duplicate_elements_are_refused():
    with pytest.raises(ValueError, match=r"joint 'j' has 2 <origin> elements"):
        mb.from_urdf(two_links(revolute('<origin xyz="0 0 1"/><origin xyz="0 0 2"/>')))
    doc = robot(f'<link name="base"/><link name="arm">{INERTIAL}{INERTIAL}</link>', revolute())
    with pytest.raises(ValueError, match=r"link 'arm' has 2 <inertial> elements"):
        mb.from_urdf(doc)


@pytest.mark.parametrize("kind", ["floating", "planar"])
def test_floating_and_planar_joints_are_not_supported(kind):
    with pytest.raises(NotImplementedError, match=rf"joint 'j' is {kind}: floating, planar and "
                                                  r"spherical joints are not supported yet"):
        mb.from_urdf(two_links(revolute(attrs=f'name="j" type="{kind}"')))


def test_unknown_joint_type():
    with pytest.raises(ValueError, match=r"joint 'j': unknown joint type 'ball'"):
        mb.from_urdf(two_links(revolute(attrs='name="j" type="ball"')))


def test_tree_checks_name_the_element():
    with pytest.raises(ValueError, match=r"joint 'j': its child link 'hand' is not a link"):
        mb.from_urdf(robot('<link name="base"/>', '<joint name="j" type="revolute">'
                           '<parent link="base"/><child link="hand"/></joint>'))
    with pytest.raises(ValueError, match=r"joint 'j': the axis is zero"):
        mb.from_urdf(two_links(revolute('<axis xyz="0 0 0"/>')))
    with pytest.raises(ValueError, match=r"joint 'j2' mimics joint 'ghost', which is not a joint"):
        mb.from_urdf(robot(f'<link name="base"/><link name="arm">{INERTIAL}</link>'
                           f'<link name="hand">{INERTIAL}</link>',
                           revolute('<axis xyz="0 1 0"/>') +
                           '<joint name="j2" type="revolute"><parent link="arm"/><child '
                           'link="hand"/><axis xyz="0 1 0"/><mimic joint="ghost"/></joint>'))
    bad = INERTIAL.replace('izz="0.05"', 'izz="0.3"')
    with pytest.raises(ValueError, match=r"link 'arm': the inertia is not physical.*triangle"):
        mb.from_urdf(robot(f'<link name="base"/><link name="arm">{bad}</link>', revolute()))
    with pytest.raises(ValueError, match=r"joint 'j' moves no mass"):
        mb.from_urdf(robot('<link name="base"/><link name="arm"/>', revolute()))


def test_errors_from_a_file_name_the_file(tmp_path):
    path = tmp_path / "bad.urdf"
    path.write_text(two_links(revolute('<origin xyz="1 2"/>')))
    with pytest.raises(ValueError, match=r"bad\.urdf: joint 'j': <origin"):
        mb.from_urdf(path)
    with pytest.raises(ValueError, match=r"bad\.urdf: joint 'j': <origin"):
        mb.from_urdf(str(path))
    path.write_text('<robot name="r"><link name="a"></robot>')
    with pytest.raises(ValueError, match=r"bad\.urdf: malformed XML"):
        mb.from_urdf(path)


def test_missing_file_and_wrong_source_type(tmp_path):
    with pytest.raises(FileNotFoundError):
        mb.from_urdf(tmp_path / "nowhere.urdf")
    with pytest.raises(FileNotFoundError):
        mb.from_urdf(str(pathlib.Path(tmp_path, "nowhere.urdf")))
    with pytest.raises(TypeError, match=r"a path .* or the URDF's XML text, got int"):
        mb.from_urdf(42)


def test_bad_options():
    doc = two_links(revolute('<axis xyz="0 1 0"/>'))
    with pytest.raises(ValueError, match=r'mimic must be "independent" .* got \'on\''):
        mb.from_urdf(doc, mimic="on")
    with pytest.raises(ValueError, match=r"gravity must be 3 real numbers"):
        mb.from_urdf(doc, gravity=(0, -9.81))
