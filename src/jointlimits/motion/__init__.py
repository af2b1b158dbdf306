"""The motion model at the bottom of the package: quaternions (:mod:`.quat`), skeletons and
motions with forward kinematics (:mod:`.skeleton`), units and up axis (:mod:`.units`), joint-name
conventions and body-part roles (:mod:`.naming`), mirroring (:mod:`.mirror`), resampling
(:mod:`.resample`) and the built-in humanoid (:mod:`.procedural`)."""
