"""The per-joint limit step over the packed arrays of :func:`.fused.pack_limit`, run by the C++ core
(``jointlimits._core``, cpp/include/jointlimits/step.hpp); :mod:`.codes` names the shape codes."""
