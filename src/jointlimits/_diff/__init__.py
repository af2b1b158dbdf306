"""Differentiable joint limits shared by :mod:`jointlimits.torch` and :mod:`jointlimits.jax`
(see :mod:`.api`); not imported by the rest of the package."""
