"""
jointlimits' compiled core: C++17 kernels over whole batches (see cpp/include/jointlimits)
"""

from collections.abc import Sequence
from typing import Annotated

import numpy
from numpy.typing import NDArray


def forward_kinematics(lr: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], lp: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], parents: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], gr: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], gp: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> None:
    """
    Global rotations gr [n, J, 4] and positions gp [n, J, 3] from local ones (written in place).
    """

class CompiledShape:
    """
    A compiled limit-space shape (box, slabs, ellipsoid, ellipse, kdop, polygon): what Shape.compile() returns and the step projects onto.
    """

    def __init__(self, kind: str, f: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], axes: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], mins: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], maxs: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], G: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], bnd: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)]) -> None:
        """
        The shape `kind` from f[16] = position, rotation (row-major), scale, radius and the flat arrays it reads (ValueError if they do not fit it).
        """

    @property
    def kind(self) -> str: ...

    @property
    def code(self) -> int:
        """The shape's code in limits files."""

    @property
    def radius(self) -> float: ...

    def arrays(self) -> dict:
        """
        The shape's arrays as the limits file holds them: f, axes, mins, maxs, G, bnd.
        """

    def project(self, points: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)]) -> NDArray[numpy.float64]:
        """
        Closest points [..., 3] in limit space (points inside unchanged, bit for bit).
        """

    def distance(self, points: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)]) -> NDArray[numpy.float64]:
        """Distance [...] from each point to the shape (0 inside)."""

    def contains(self, points: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], tolerance: float = 1e-09) -> NDArray[numpy.bool_]:
        """Whether each point is within `tolerance` of the shape [...]."""

class CompiledLimit:
    """One joint's compiled limit: what FittedLimit.compiled() returns."""

    def __init__(self, mode: int, covers: bool, tlo: float, thi: float, ref: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], axis: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], a: CompiledShape, b: CompiledShape) -> None: ...

    @property
    def mode(self) -> int: ...

    @property
    def a(self) -> CompiledShape: ...

    @property
    def b(self) -> CompiledShape: ...

    def project(self, q: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], soft_on: bool, falloff: float, radius: float) -> NDArray[numpy.float64]:
        """
        Limited rotations [..., 4] (a new array): the step with one call and one allocation.
        """

def limit_step(limit: CompiledLimit, q: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], soft_on: bool, falloff: float, radius: float, out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], hard: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')] | None = None) -> None:
    """
    Limited rotations q [n, 4] into out (softened if soft_on) and the unsoftened ones into hard.
    """

def to_limit_space(q: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], ref: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> None:
    """Scaled angle axis of abs(inv(ref) q) for q [n, 4] into out [n, 3]."""

def from_limit_space(v: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], ref: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> None:
    """ref * exp(v / 2) for v [n, 3] into out [n, 4]."""

class PoseLimits:
    """Every limited joint of a skeleton, projecting whole poses."""

    def __init__(self, num_joints: int, joints: Sequence[int], limits: Sequence[CompiledLimit]) -> None: ...

    def project(self, q: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], soft_on: bool, falloff: float, radius: float, out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], hard: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')] | None = None) -> bool:
        """
        Limited poses q [..., J, 4] into out (joints without a limit copied) and, if given, the unsoftened result into hard in the same pass; False (out unspecified) if q holds a non-finite value.
        """

    @property
    def num_joints(self) -> int: ...

    @property
    def joints(self) -> list[int]: ...

def project_box_fast(pts: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], lo: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], hi: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], out: object | None) -> object:
    """
    project_box_aa with its checks in one call: the result (out, or a new array), or None where the checked path must run (wrong shapes, non-finite values, lo > hi).
    """

def project_box_f32_fast(pts: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], lo: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], hi: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], out: object | None) -> object:
    """
    project_box_aa_f32 with its checks in one call: out, or None where the checked path must run.
    """

def project_box_oriented_fast(pts: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], lo: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], hi: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], pos: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], rot: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], always_map: bool, out: object | None) -> object:
    """
    project_box_oriented with its checks in one call: the result, or None where the checked path must run.
    """

def project_ellipsoid_fast(pts: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], scale: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], eps: float, pos: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], rot: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], iterations: int, out: object | None) -> object:
    """
    project_ellipsoid with its checks in one call: the result, or None where the checked path must run.
    """

def project_box_aa(pts: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], lo: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], hi: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> bool:
    """
    Clamp points [n, 3] to lo <= p <= hi into out; False if any input is not finite.
    """

def project_box_aa_f32(pts: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], lo: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], hi: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], out: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu')]) -> bool:
    """
    project_box_aa for float32 points and out; False if any input is not finite.
    """

def project_box_oriented(pts: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], lo: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], hi: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], pos: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], rot: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], always_map: bool, out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> bool:
    """
    Closest points of the box lo <= R^T (p - pos) <= hi into out; False if any input is not finite.
    """

def project_ellipsoid(pts: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], scale: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], eps: float, pos: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], rot: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], iterations: int, out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> int:
    """
    Closest points of the ellipsoid |R^T (p - pos) / scale| <= 1 into out; first non-finite row or -1.
    """

def project_kdop_slabs(pts: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], mins: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], maxs: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], pos: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], rot: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], axes: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], aa: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], always_map: bool, out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> int:
    """
    The reference's k-DOP: one pass of slab clamps into out; first non-finite row or -1.
    """

def project_kdop_exact(pts: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], G: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], bnd: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], pos: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], rot: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> tuple[int, int]:
    """
    Exact closest points of {G x <= bnd} (local frame) into out; (first non-finite row, first row the polytope is empty for), each -1 if none.
    """

def soften(orig: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], proj: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], falloff: float, radius: float, eps: float, out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> bool:
    """
    projection_soften of points [n, 3] into out; False if any input is not finite.
    """

def subsample_grid(pts: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], distance: float, margin: float, cell: float) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]:
    """
    Indices of the greedily kept points (hash grid; no kept point strictly closer than distance).
    """

def subsample_naive(pts: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], distance: float) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]:
    """The reference's O(N M) greedy subsampling (for checks)."""

def implicit_contains(arg0: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg2: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg3: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg4: float, arg5: float, arg6: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg7: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg8: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], arg9: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg10: float, arg11: Annotated[NDArray[numpy.bool_], dict(order='C', device='cpu')], /) -> None:
    """
    Inside test of limit-space points [n, 3] against a blended implicit field into out [n].
    """

def implicit_field(arg0: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg2: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg3: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg4: float, arg5: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg6: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg7: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], arg8: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg9: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], /) -> None:
    """Field value and limit-space gradient [n, 4] of points [n, 3]."""

def implicit_project(arg0: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg2: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg3: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg4: float, arg5: float, arg6: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg7: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg8: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg9: Annotated[NDArray[numpy.int32], dict(order='C', device='cpu', writable=False)], arg10: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], arg11: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg12: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg13: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], /) -> None:
    """
    Project limit-space points [n, 3] onto a blended implicit limit into out [n, 3].
    """

def implicit_splat(arg0: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], arg1: float, arg2: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], /) -> None:
    """
    Add a metaball of `radius` cells at each integer centre [n, 3] to F [nx, ny, nz], in place.
    """

def implicit_lift_points(arg0: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg1: float, arg2: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], /) -> int:
    """
    Raise the corners of cells holding points below `lift` (in place); how many points were lifted.
    """

def coupled_weights(arg0: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg2: float, arg3: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], arg4: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu')], arg5: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], /) -> None:
    """
    Trilinear weights [n, 8] of the parent cells around parent limit-space points [n, 3].
    """

def coupled_contains(arg0: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg2: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg3: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg4: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg5: float, arg6: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], arg7: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg8: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg9: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg10: float, arg11: float, arg12: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg13: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg14: float, arg15: bool, arg16: Annotated[NDArray[numpy.bool_], dict(order='C', device='cpu')], /) -> None:
    """
    Inside test of child rotations [n, 4] for their parents' rotations [n, 4] against a coupled limit, in one pass (limit space, the parent cells' blend, the field at both covers when long_cover) into out [n].
    """

class ReachLimit:
    """
    One joint's reach windows and twist range: what ReachWindowLimit.compiled() returns (IK reads it).
    """

    def __init__(self, ref: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], axis: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], tmid: float, thalf: float, wn: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], we1: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], we2: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], wc: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], wvs: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], verts: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], eg: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)]) -> None: ...

    def project(self, q: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], slack: float, out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> None:
        """Reach-window projection of rotations q [n, 4] into out [n, 4]."""

def reach_project(arg0: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg2: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg3: float, arg4: float, arg5: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg6: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg7: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg8: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg9: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], arg10: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg11: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg12: float, arg13: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], /) -> None:
    """Reach-window projection of rotations q [n, 4] into out [n, 4]."""

def spring_damper_exact(arg0: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg2: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg3: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg4: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg5: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg6: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg7: bool, arg8: float, arg9: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], arg10: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], /) -> bool:
    """
    Closed-form spring-damper step over n broadcast elements into (xo, vo); False if an input is invalid.
    """

def tracking_update(arg0: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg2: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg3: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg4: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg5: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg6: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg7: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg8: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg9: bool, arg10: bool, arg11: bool, arg12: bool, arg13: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], arg14: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], /) -> bool:
    """
    One tracking-spring step (lerp gains, or half-lives) into (xo, vo); False if an input is invalid.
    """

def tracking_update_exact(arg0: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg2: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg3: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg4: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg5: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg6: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg7: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg8: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg9: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg10: bool, arg11: bool, arg12: bool, arg13: float, arg14: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], arg15: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], /) -> bool:
    """
    One dt-invariant tracking-spring step into (xo, vo); False if an input is invalid.
    """

def spring_damper_exact_f32(arg0: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg2: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg3: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg4: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg5: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg6: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg7: bool, arg8: float, arg9: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu')], arg10: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu')], /) -> bool:
    """
    Closed-form spring-damper step over n broadcast elements into (xo, vo); False if an input is invalid.
    """

def tracking_update_f32(arg0: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg2: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg3: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg4: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg5: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg6: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg7: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg8: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg9: bool, arg10: bool, arg11: bool, arg12: bool, arg13: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu')], arg14: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu')], /) -> bool:
    """
    One tracking-spring step (lerp gains, or half-lives) into (xo, vo); False if an input is invalid.
    """

def tracking_update_exact_f32(arg0: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg2: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg3: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg4: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg5: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg6: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg7: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg8: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg9: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu', writable=False)], arg10: bool, arg11: bool, arg12: bool, arg13: float, arg14: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu')], arg15: Annotated[NDArray[numpy.float32], dict(order='C', device='cpu')], /) -> bool:
    """
    One dt-invariant tracking-spring step into (xo, vo); False if an input is invalid.
    """

def track_errors(arg0: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg2: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg3: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg4: bool, arg5: Annotated[NDArray[numpy.int8], dict(order='C', device='cpu', writable=False)], arg6: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg7: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg8: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg9: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg10: float, arg11: float, arg12: float, arg13: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], arg14: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], /) -> None:
    """
    The lerp tracking recursion in error form over vt [T, C] into (out_e, out_ev).
    """

def two_bone(arg0: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg2: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg3: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg4: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg5: bool, arg6: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg7: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg8: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg9: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], arg10: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], arg11: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], arg12: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], arg13: Annotated[NDArray[numpy.int8], dict(order='C', device='cpu')], /) -> None:
    """Geometric two-bone solve over n chains (flat rows) into the outputs."""

def ik_two_bone(arg0: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg2: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg3: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg4: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg5: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg6: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg7: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg8: float, arg9: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], arg10: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], arg11: Annotated[NDArray[numpy.int8], dict(order='C', device='cpu')], /) -> None:
    """The joint-limits demo's two-bone IK over n chains into the outputs."""

def two_bone_solve(root: object | None, mid: object | None, end: object | None, target: object | None, root_parent_rotation: object | None, root_local: object | None, mid_local: object | None, pole: object | None = None) -> object:
    """
    (root_local, mid_local, mid, end, case) of two_bone when every input is a float64 C-contiguous array of one leading shape, else None.
    """

def ik_two_bone_solve(bone_root: object | None, bone_mid: object | None, bone_end: object | None, target: object | None, fwd: object | None, bone_root_gr: object | None, bone_mid_gr: object | None, bone_par_gr: object | None, max_length_buffer: float) -> object:
    """
    (root_lr, mid_lr) of ik_two_bone when every input is a float64 C-contiguous array of one leading shape, else None.
    """

def ccd_solve(targets: object | None, base_rotation: object | None, base_position: object | None, offsets: object | None, init: object | None, target_rotations: object | None, end_rotation: object | None, starts: object, start_effectors: object, limits: list, tolerance: float, orientation_tolerance: float, orientation_weight: float, max_iterations: int, max_restarts: int, stall_iterations: int, stall_ratio: float) -> object:
    """
    (rotations, success, iterations, error, orientation_error, restarts) of ccd for its common case, or None.
    """

def dls_normal_step(arg0: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg2: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg3: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg4: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg5: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg6: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg7: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg8: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg9: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], arg10: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], arg11: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], arg12: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], arg13: Annotated[NDArray[numpy.uint8], dict(order='C', device='cpu', writable=False)], arg14: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], arg15: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], /) -> None:
    """
    One damped least-squares step per pose (whole-body IK) into dx [F, 3 + 3J] and push [F, J].
    """

def ccd_batch(arg0: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg1: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg2: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg3: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg4: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg5: bool, arg6: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg7: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg8: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg9: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], arg10: list, arg11: float, arg12: float, arg13: float, arg14: int, arg15: int, arg16: int, arg17: float, arg18: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], arg19: Annotated[NDArray[numpy.bool_], dict(order='C', device='cpu')], arg20: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu')], arg21: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], arg22: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], arg23: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu')], /) -> None:
    """
    CCD over N chains with limits and restarts into out [N, n, 4] and the per-chain statistics.
    """

def format_rows(data: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], n_ch: int, min_dec: int, eol: bytes, out: Annotated[NDArray[numpy.uint8], dict(order='C', device='cpu')]) -> int:
    """
    Rows of shortest exact fixed-notation values (at least min_dec decimals) into out; the bytes written.
    """

def merge_rows(src: bytes, starts: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], ends: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], n_ch: int, same: Annotated[NDArray[numpy.uint8], dict(order='C', device='cpu', writable=False)], data: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], min_dec: int, eol: bytes, out: Annotated[NDArray[numpy.uint8], dict(order='C', device='cpu')]) -> int:
    """
    Source rows with their changed tokens replaced (same == 0) into out; the bytes written, or -1.
    """

def parse_rows(src: bytes, n_ch: int, out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], ranges: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu')]) -> int:
    """
    Rows of n_ch plain decimals (blank lines skipped) into out [rows, n_ch] and their byte ranges into ranges [rows, 2]; the rows parsed, or -1 at anything else (the checked path reports it).
    """

def bvh_load_rows(src: bytes, n_ch: int, offsets: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], pos_col: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], pos_dst: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], rot_joint: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], rot_col: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], rot_axes: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], extra_col: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu', writable=False)], positions: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], rotations: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], hashes: Annotated[NDArray[numpy.uint64], dict(order='C', device='cpu')], ranges: Annotated[NDArray[numpy.int64], dict(order='C', device='cpu')], extra: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')], first: int, max_rows: int, base: int) -> tuple[int, int]:
    """
    BVH frame rows (plain decimals, blank lines skipped) straight into a clip's positions, rotations (three-axis Euler joints, degrees), fingerprints, row byte ranges (plus base) and extra columns, from row first on, at most max_rows rows: (rows written or -1, the block's line endings).
    """

def q_mul(a: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], b: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> None:
    """Hamilton products a b of [n, 4] rows into out."""

def q_inv(q: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> None:
    """Conjugates (w, -x, -y, -z) of [n, 4] rows into out."""

def q_mul_vec(q: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], v: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> None:
    """Vectors [n, 3] rotated by [n, 4] rows into out."""

def q_to_matrix(q: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> None:
    """Rotation matrices [n, 3, 3] of [n, 4] rows into out."""

def q_from_matrix(m: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> bool:
    """
    Unit quaternions (w >= 0) of [n, 3, 3] matrices into out; False if a norm left the safe range.
    """

def q_normalize(q: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> bool:
    """q / |q| of [n, 4] rows into out; False if a norm left the safe range."""

def q_log2(q: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], eps: float, scale: float, out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> bool:
    """
    Scaled angle axis 2 log(q) times scale of [n, 4] rows into out; False if a norm is too large.
    """

def q_exp2(v: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], pre: float, out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> bool:
    """
    exp(pre v / 2) of [n, 3] rows into out; False if a norm left the safe range.
    """

def q_slerp(a: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], b: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], t: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> bool:
    """
    Shortest-path slerp of [n, 4] rows at t (one or n values) into out; False if a norm left the safe range.
    """

def q_from_euler3(angles: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], i: int, j: int, k: int, degrees: bool, out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> None:
    """Products R_i(a0) R_j(a1) R_k(a2) of [n, 3] angle rows into out."""

def q_to_euler(q: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu', writable=False)], i: int, j: int, k: int, scale: float, out: Annotated[NDArray[numpy.float64], dict(order='C', device='cpu')]) -> int:
    """
    Intrinsic Euler angles (times scale) of [n, 4] rows into out; the first non-finite or zero row (n if none), or -2 if a norm left the safe range.
    """
