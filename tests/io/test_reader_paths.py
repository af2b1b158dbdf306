"""#41: a file names other files only beside itself. A glTF buffer URI that is absolute, climbs
with ``..`` or is a symlink out of the glTF's folder is one ``FormatError`` and no byte of the
target reaches the loaded clip or what is written from it; ``data:`` URIs and plain relative
names beside the file still load."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pygltflib")

from jointlimits.errors import FormatError
from jointlimits.io import gltf
from jointlimits.motion.procedural import humanoid_skeleton, range_of_motion

SECRET = b"root:x:0:0:SECRET-MARKER-41:/root:/bin/bash\n" * 40


def _clip_with_buffer(tmp: Path) -> tuple[dict, bytes]:
    """A saved clip's JSON document and its (data-URI) buffer's bytes."""
    m = range_of_motion(humanoid_skeleton(), seconds=0.4, fps=30, seed=0)
    src = tmp / "src.gltf"
    gltf.save(src, m)
    doc = json.loads(src.read_text())
    data = base64.b64decode(doc["buffers"][0]["uri"].split(",", 1)[1])
    return doc, data


def _with_uri(folder: Path, doc: dict, uri: str, name: str = "clip.gltf") -> Path:
    d = json.loads(json.dumps(doc))
    d["buffers"][0]["uri"] = uri
    out = folder / name
    out.write_text(json.dumps(d))
    return out


@pytest.fixture
def planted(tmp_path: Path):
    doc, data = _clip_with_buffer(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "passwd"
    secret.write_bytes(SECRET + data)  # even a file that would parse must not be read
    inside = tmp_path / "in"
    inside.mkdir()
    (inside / "ok.bin").write_bytes(data)
    os.symlink(secret, inside / "link.bin")
    return doc, data, inside, secret


@pytest.mark.parametrize("uri_kind", ["absolute", "dotdot", "symlink", "file-scheme", "dotdot-encoded"])
def test_buffer_outside_the_folder_is_refused(planted, uri_kind, tmp_path):
    doc, _, inside, secret = planted
    uri = {
        "absolute": str(secret),
        "dotdot": "../outside/passwd",
        "symlink": "link.bin",
        "file-scheme": f"file://{secret}",
        "dotdot-encoded": "%2E%2E/outside/passwd",
    }[uri_kind]
    path = _with_uri(inside, doc, uri)
    with pytest.raises(FormatError) as ei:
        gltf.load(path)
    msg = str(ei.value)
    assert "\n" not in msg and "buffer 0 is not read" in msg
    assert b"SECRET-MARKER-41" not in msg.encode()


def test_buffer_beside_the_file_and_data_uri_still_load(planted, tmp_path):
    doc, data, inside, _ = planted
    beside = gltf.load(_with_uri(inside, doc, "ok.bin"))
    embedded = gltf.load(
        _with_uri(inside, doc, "data:application/octet-stream;base64," + base64.b64encode(data).decode(), "e.gltf")
    )
    np.testing.assert_array_equal(beside.rotations, embedded.rotations)


def test_cli_writes_no_byte_of_the_target(planted, tmp_path):
    from click.testing import CliRunner

    from jointlimits.cli import main

    doc, _, inside, _ = planted
    path = _with_uri(inside, doc, "../outside/passwd")
    out = tmp_path / "out.bvh"
    r = CliRunner().invoke(main, ["resample", str(path), "-o", str(out), "--fps", "30"])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and "SECRET-MARKER-41" not in r.output
    assert not out.exists()
