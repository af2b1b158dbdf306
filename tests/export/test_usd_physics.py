"""The USD physics export of LAFAN1 limits: written by the CLI, passing usd-core's validators,
and read back with usd-core with every joint's limits as the JSON says."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from jointlimits.cli import main

from conftest import MOCAP, needs_shared

pytest.importorskip("pxr", reason="usd-core is not installed (pip install -e '.[usd]')")


@needs_shared
def test_lafan1_usd_physics_export_loads_back_with_its_limits(tmp_path):
    from jointlimits import JointLimits
    from jointlimits.export.usd import read_limits
    from jointlimits.io import bvh, usd

    clip = bvh.load(MOCAP / "lafan1" / "walk4_subject1.bvh").frames(0, 300)
    JointLimits.fit([clip], swing_twist=True).save(tmp_path / "lim.json")
    r = CliRunner()
    for engine, out in (("usd", "phys.usda"), ("usd-spherical", "sph.usdc")):
        args = ["export", str(tmp_path / "lim.json"), "--to", engine, "-o", str(tmp_path / out)]
        res = r.invoke(main, [*args, "--variant", "covering", "--samples", "200", "--random", "1000", "-q"])
        assert res.exit_code == 0, res.output
        doc = json.loads((tmp_path / out).with_suffix(".json").read_text())
        assert doc["files"] == {"covering": str(tmp_path / out)}
        assert usd.validate(tmp_path / out) == []
        back = read_limits(str(tmp_path / out))
        assert len(doc["joints"]) == 21 and set(back) >= {j["name"] for j in doc["joints"]}
        for j in doc["joints"]:
            p, got = j["variants"]["covering"], back[j["name"]]
            assert got["type"] == p["type"]
            if engine == "usd":
                for axis in ("rotX", "rotY", "rotZ", "transX", "transY", "transZ"):
                    want = (p[f"limit:{axis}"]["low"], p[f"limit:{axis}"]["high"])
                    assert np.allclose(got[axis], want, rtol=1e-6, atol=1e-5), (j["name"], axis)  # float attrs
            else:
                assert got["axis"] == "X"
                assert got["coneAngle0Limit"] == pytest.approx(p["physics:coneAngle0Limit"], rel=1e-6)
                assert got["coneAngle1Limit"] == pytest.approx(p["physics:coneAngle1Limit"], rel=1e-6)
    res = r.invoke(main, ["export", str(tmp_path / "lim.json"), "--to", "usd", "-o", str(tmp_path / "x.xml")])
    assert res.exit_code == 2 and ".usda/.usd/.usdc" in res.output
