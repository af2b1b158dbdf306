"""jointlimits inside other applications: :mod:`.blender` (what the Blender add-on calls)."""
