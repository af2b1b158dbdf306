"""Skeleton groups of a corpus: clips of one topology (joint names and parents) and one rest pose
(child bone directions within a tolerance), named after their naming convention when the skeleton
really follows it (:data:`NAME_MATCH`), else ``custom``."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..limits.rest import DEFAULT_REST_TOLERANCE, rest_mismatch
from ..motion.skeleton import Skeleton

__all__ = ["Grouping", "convention_of", "group_convention", "NAME_MATCH"]

#: Smallest share of matching names for a group to be named after a convention: at least this
#: share of the skeleton's joint names are the convention's, and at least this share of the
#: convention's names are in the skeleton (a skeleton that borrows most of a convention's names
#: but drops or adds joints, e.g. 21 of 23 names on a 31-joint convention, is ``custom``).
NAME_MATCH = 0.9


def convention_of(skeleton: Skeleton) -> str:
    """The naming convention of a skeleton (``unknown`` when none matches)."""
    from ..errors import SkeletonError
    from ..motion.naming import detect

    try:
        return detect(skeleton)
    except SkeletonError:
        return "unknown"


def group_convention(skeleton: Skeleton) -> str:
    """The convention a group of this skeleton is named after: :func:`convention_of` when the names
    match it both ways by at least :data:`NAME_MATCH`, else ``custom``."""
    from ..motion.naming import CONVENTIONS, _bare

    conv = convention_of(skeleton)
    if conv not in CONVENTIONS:
        return "custom"
    names = {_bare(n) for n in skeleton.names}
    table = set(CONVENTIONS[conv].values())
    hit = len(names & table)
    if hit < NAME_MATCH * len(names) or hit < NAME_MATCH * len(table):
        return "custom"
    return conv


@dataclass
class Grouping:
    """Assigns clips to skeleton groups in the order they come (names are stable for a corpus
    in a fixed order: convention (see :func:`group_convention`), joint count, topology hash, and
    a rest-pose number when one topology has several rest poses)."""

    tolerance: float = DEFAULT_REST_TOLERANCE
    _reps: dict[str, list[tuple[str, list[NDArray[np.float64]]]]] = field(default_factory=dict)

    def assign(self, skeleton: Skeleton, rest: list[NDArray[np.float64]]) -> str:
        fp = skeleton.fingerprint()
        reps = self._reps.setdefault(fp, [])
        every = list(range(skeleton.num_joints))
        for name, r in reps:
            if not rest_mismatch(skeleton.names, r, rest, every, self.tolerance):
                return name
        name = f"{group_convention(skeleton)}-{skeleton.num_joints}j-{fp[:6]}"
        if reps:
            name += f"-rest{len(reps) + 1}"
        reps.append((name, rest))
        return name
