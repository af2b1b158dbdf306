"""Fitted joint limits inside other libraries' solvers (:mod:`.mink`: whole-body IK on MuJoCo models).

Each integration imports its library only when used (``jointlimits._optional.require``)."""
