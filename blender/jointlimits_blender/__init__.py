"""jointlimits in Blender: a panel on armatures (View3D sidebar, "jointlimits" tab).

Fit limits from the ticked actions, apply them to the current action (with softening), colour
the bones by their violation on the current frame, repair pops, foot-lock, and save / load the
limits file. Every operator is one call of :mod:`jointlimits.integrations.blender` (the library,
installed from the wheel bundled with this extension); nothing is re-implemented here. The
limits live on the armature object as JSON (custom property ``jointlimits_limits``), so they are
saved with the .blend file.
"""

from __future__ import annotations

import json

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

LIMITS_KEY = "jointlimits_limits"


def _limits(obj):
    from jointlimits import JointLimits

    text = obj.get(LIMITS_KEY)
    if not text:
        raise ValueError("no limits on this armature: fit or load them first")
    return JointLimits.from_dict(json.loads(text), source=f"{obj.name}[{LIMITS_KEY}]")


def _store(obj, limits) -> None:
    obj[LIMITS_KEY] = json.dumps(limits.to_dict())


class _ArmatureOperator(bpy.types.Operator):
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        obj = context.object
        return obj is not None and obj.type == "ARMATURE"

    def execute(self, context):
        try:
            msg = self.run(context, context.object)
        except Exception as e:  # jointlimits errors name the problem in one line
            self.report({"ERROR"}, str(e).splitlines()[0] if str(e) else type(e).__name__)
            return {"CANCELLED"}
        if msg:
            self.report({"INFO"}, msg)
        return {"FINISHED"}

    def run(self, context, obj) -> str:
        raise NotImplementedError


def _shape_items(self, context):
    from jointlimits.limits import SHAPES

    return [(s, s, f"{s} limits") for s in SHAPES]


class JOINTLIMITS_OT_fit(_ArmatureOperator):
    """Fit joint limits to the ticked actions (or the current one)"""

    bl_idname = "jointlimits.fit"
    bl_label = "Fit limits"

    shape: EnumProperty(name="Shape", items=_shape_items)  # type: ignore[valid-type]
    swing_twist: BoolProperty(name="Swing-twist", default=False)  # type: ignore[valid-type]

    def run(self, context, obj):
        from jointlimits.integrations import blender as jl

        acts = [a for a in bpy.data.actions if a.get("jointlimits_use")]
        if not acts:
            acts = [obj.animation_data.action]
        lim = jl.fit_actions(obj, acts, shape=self.shape or "ellipsoid", swing_twist=self.swing_twist)
        _store(obj, lim)
        return f"limits fitted on {len(acts)} action(s)"


class JOINTLIMITS_OT_apply(_ArmatureOperator):
    """Limit the current action into the limits; the result is a new action"""

    bl_idname = "jointlimits.apply"
    bl_label = "Apply limits"

    soften: BoolProperty(name="Soften", default=False)  # type: ignore[valid-type]
    falloff: FloatProperty(name="Falloff", default=0.1, min=0.0)  # type: ignore[valid-type]
    radius: FloatProperty(name="Radius", default=0.2, min=0.0)  # type: ignore[valid-type]

    def run(self, context, obj):
        from jointlimits.integrations import blender as jl

        soften = (self.falloff, self.radius) if self.soften else None
        jl.apply_limits(obj, _limits(obj), soften=soften)
        return f"limited action: {obj.animation_data.action.name}"


class JOINTLIMITS_OT_violations(_ArmatureOperator):
    """Colour the bones by their violation of the limits on the current frame"""

    bl_idname = "jointlimits.violations"
    bl_label = "Show violations"

    def run(self, context, obj):
        from jointlimits.integrations import blender as jl

        v = jl.colour_violations(obj, _limits(obj))
        worst = max(v, key=v.get)
        return f"{sum(x > 1e-6 for x in v.values())} bones outside; worst {worst} ({v[worst]:.3f} rad)"


class JOINTLIMITS_OT_repair(_ArmatureOperator):
    """Detect pops in the current action and filter them out; the result is a new action"""

    bl_idname = "jointlimits.repair"
    bl_label = "Repair pops"

    def run(self, context, obj):
        from jointlimits.integrations import blender as jl

        _, cuts = jl.repair_pops(obj)
        return f"{len(cuts)} discontinuities filtered"


class JOINTLIMITS_OT_footlock(_ArmatureOperator):
    """Remove foot skating from the current action (inside the limits when there are some)"""

    bl_idname = "jointlimits.footlock"
    bl_label = "Foot-lock"

    use_limits: BoolProperty(name="Inside the limits", default=True)  # type: ignore[valid-type]

    def run(self, context, obj):
        from jointlimits.integrations import blender as jl

        lim = _limits(obj) if self.use_limits and obj.get(LIMITS_KEY) else None
        jl.foot_lock(obj, lim)
        return f"foot-locked action: {obj.animation_data.action.name}"


class JOINTLIMITS_OT_save(_ArmatureOperator, ExportHelper):
    """Save the armature's limits as a jointlimits JSON file"""

    bl_idname = "jointlimits.save"
    bl_label = "Save limits"
    filename_ext = ".json"
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})  # type: ignore[valid-type]

    def run(self, context, obj):
        _limits(obj).save(self.filepath)
        return f"wrote {self.filepath}"


class JOINTLIMITS_OT_load(_ArmatureOperator, ImportHelper):
    """Load a jointlimits JSON file onto the armature"""

    bl_idname = "jointlimits.load"
    bl_label = "Load limits"
    filename_ext = ".json"
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})  # type: ignore[valid-type]

    def run(self, context, obj):
        from jointlimits import JointLimits

        _store(obj, JointLimits.load(self.filepath))
        return f"loaded {self.filepath}"


class JOINTLIMITS_PT_panel(bpy.types.Panel):
    bl_label = "jointlimits"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "jointlimits"

    @classmethod
    def poll(cls, context):
        return context.object is not None and context.object.type == "ARMATURE"

    def draw(self, context):
        obj = context.object
        col = self.layout.column()
        col.label(text="Actions to fit:")
        for a in bpy.data.actions:
            if "jointlimits_use" in a:
                col.prop(a, '["jointlimits_use"]', text=a.name)
            else:
                col.operator("jointlimits.tick", text=f"+ {a.name}").action = a.name
        col.operator("jointlimits.fit")
        col.separator()
        col.label(text="Limits: " + ("on this armature" if obj.get(LIMITS_KEY) else "none"))
        col.operator("jointlimits.apply")
        col.operator("jointlimits.violations")
        col.operator("jointlimits.repair")
        col.operator("jointlimits.footlock")
        row = col.row()
        row.operator("jointlimits.save")
        row.operator("jointlimits.load")


class JOINTLIMITS_OT_tick(bpy.types.Operator):
    """Use this action when fitting"""

    bl_idname = "jointlimits.tick"
    bl_label = "Use action"
    bl_options = {"INTERNAL", "UNDO"}

    action: StringProperty()  # type: ignore[valid-type]

    def execute(self, context):
        bpy.data.actions[self.action]["jointlimits_use"] = True
        return {"FINISHED"}


CLASSES = (
    JOINTLIMITS_OT_fit,
    JOINTLIMITS_OT_apply,
    JOINTLIMITS_OT_violations,
    JOINTLIMITS_OT_repair,
    JOINTLIMITS_OT_footlock,
    JOINTLIMITS_OT_save,
    JOINTLIMITS_OT_load,
    JOINTLIMITS_OT_tick,
    JOINTLIMITS_PT_panel,
)


def register():
    for c in CLASSES:
        bpy.utils.register_class(c)


def unregister():
    for c in reversed(CLASSES):
        bpy.utils.unregister_class(c)
