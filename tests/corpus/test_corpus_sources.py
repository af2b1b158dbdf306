"""Corpus sources (folders, patterns, @lists), bad files listed and skipped, skeleton groups, and
the merged statistics the fit folds clips into (no cluster here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from jointlimits.corpus.sources import expand
from jointlimits.errors import JointLimitsError
from jointlimits.limits.cloud import CloudStats, extreme_points, subsample


def _touch(p: Path, text: str = "x") -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_folders_patterns_and_lists(tmp_path: Path):
    for rel in ["a/one.bvh", "a/b/two.BVH", "a/b/c/three.npz", "a/notes.txt", "x/four.glb"]:
        _touch(tmp_path / rel)
    lst = _touch(tmp_path / "clips.txt", "# a comment\nx/four.glb\n\na/one.bvh  # again\n")
    clips, bad = expand([tmp_path / "a", str(tmp_path / "x" / "*.glb"), f"@{lst}", tmp_path / "missing"])
    assert [c.rel for c in clips] == ["one.bvh", "b/two.BVH", "b/c/three.npz", "four.glb"]
    assert [c.format for c in clips] == ["bvh", "bvh", "npz", "glb"]
    assert bad == [(str(tmp_path / "missing"), "no such file or folder")]
    with pytest.raises(JointLimitsError, match="missing"):
        expand([tmp_path / "missing"], strict=True)
    deep, _ = expand([str(tmp_path / "**" / "*.bvh")])
    assert sorted(c.rel for c in deep) == ["a/b/two.BVH", "a/one.bvh"] or len(deep) == 1


def test_a_list_names_only_files_inside_its_folder(tmp_path: Path):
    secret = _touch(tmp_path / "secret" / "s.bvh")
    _touch(tmp_path / "lists" / "in.bvh")
    (tmp_path / "lists" / "link.bvh").symlink_to(secret)
    lst = _touch(tmp_path / "lists" / "l.txt", f"in.bvh\n../secret/s.bvh\n{secret}\nlink.bvh\n../secret\n")
    clips, bad = expand([f"@{lst}"])
    assert [Path(c.path).name for c in clips] == ["in.bvh"]
    assert len(bad) == 4 and all("outside the list's folder" in why for _, why in bad)


def test_greedy_fold_is_the_whole_cloud_greedy():
    rng = np.random.default_rng(3)
    parts = [rng.normal(size=(n, 3)) * 0.3 for n in (50, 1, 80, 33)]
    st = CloudStats(0.1)
    st.FLUSH = 60  # fold in several steps
    for p in parts:
        st.add(p)
    every = np.concatenate(parts)
    assert np.array_equal(st.kept, every[subsample(every, 0.1)])
    # the extreme points hold every coordinate's extremes and the hull's maxima of convex functions
    assert np.array_equal(np.asarray(st).min(0), every.min(0)) and np.array_equal(np.asarray(st).max(0), every.max(0))
    d = rng.normal(size=(20, 3))
    assert np.array_equal((np.asarray(st) @ d.T).max(0), (every @ d.T).max(0))
    flat = np.c_[rng.normal(size=(40, 2)), np.zeros(40)]  # a swing-like planar cloud
    idx = extreme_points(flat)
    assert len(idx) < 40 and np.array_equal((flat[idx] @ d.T).max(0), (flat @ d.T).max(0))
