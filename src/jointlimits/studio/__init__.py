"""The studio: an interactive local web app (viser) to play clips, pose joints against their
limits and drag IK targets. :class:`StudioState` holds the logic and runs without a browser."""

from .state import Clip, SaveError, StudioState

__all__ = ["Clip", "SaveError", "StudioState"]
