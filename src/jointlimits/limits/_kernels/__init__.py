"""The per-joint limit step over a ``_core.CompiledLimit`` (:func:`.fused.pack_limit`), run by the C++
core (``jointlimits._core``, cpp/include/jointlimits/step.hpp)."""
