"""Shape codes of the packed arrays the compiled step reads (see ``fused.pack_shape``).

A shape module's ``pack()`` returns ``(code, f[16], axes, mins, maxs, G, bnd)`` with one of these
codes; ``fused._project_point`` dispatches on it."""

SLABS, ELLIPSOID, KDOP_EXACT, BOX, POLYGON, ELLIPSE = 0, 1, 2, 3, 4, 5
