"""Fitted joint limits inside other libraries and applications: :mod:`.mink` (whole-body IK on
MuJoCo models) and :mod:`.blender` (what the Blender add-on's operators call, inside Blender with bpy).

Each integration imports its library only when used (``jointlimits._optional.require``)."""
