"""The compiled per-joint limit step (:mod:`.fused` for small batches, :mod:`.phased` for large
ones) over the packed arrays of :func:`.fused.pack_limit`; :mod:`.codes` names the shape codes."""
