/*
 * A fixed set of calls of every function of the JS API on the web demo's data (docs/demo/data.js,
 * JL_DEMO_DATA): run under Node (api.test.cjs, `node cases.js DATA.js`) and in the page
 * (tests/viz/test_web_demo.py), the results must be the same numbers.
 */
(function (root, factory) {
  if (typeof module === "object" && module.exports) module.exports = factory();
  else root.jlCases = factory();
})(typeof globalThis !== "undefined" ? globalThis : this, function () {
  "use strict";
  const arr = (a) => Array.from(a);

  /** J rotations (w, x, y, z) from a fixed integer sequence, normalised with sqrt only: the same
   *  numbers in every JavaScript engine (Math.sin and Math.hypot may differ in the last bit). */
  function testPose(J) {
    const pose = [];
    let s = 12345;
    const next = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
    for (let j = 0; j < J; j++) {
      const q = [1.2 + next(), next(), next(), next()];
      const n = Math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
      pose.push(q[0] / n, q[1] / n, q[2] / n, q[3] / n);
    }
    return pose;
  }

  function runCases(jl, data) {
    const sk = data.skeleton, J = sk.names.length, rig = data.rig;
    const offsets = sk.offsets.flat();
    const out = {};
    const name = Object.keys(data.limitSets)[0];
    const lim = jl.loadLimits(JSON.stringify(data.limitSets[name]));
    try {
      const pose = testPose(J);
      out.testPose = pose;
      out.project = arr(jl.project(lim, pose));
      out.projectSoft = arr(jl.project(lim, pose, { soft: true, falloff: 2, radius: 0.1 }));
      out.projectJoint = arr(jl.projectJoint(lim, rig.twoBone[1], pose.slice(0, 16)));
      const fk = jl.fk(pose, offsets, sk.parents);
      out.fk = [arr(fk.rotations), arr(fk.positions)];
      const g = (k, j) => Array.from(k.slice(3 * j, 3 * j + 3)), q = (k, j) => Array.from(k.slice(4 * j, 4 * j + 4));
      const [a, b, c] = rig.twoBone, P = fk.positions, R = fk.rotations;
      const tgt = [P[3 * c] + 0.05, P[3 * c + 1] - 0.1, P[3 * c + 2] + 0.1];
      const tb = jl.twoBone({ root: g(P, a), mid: g(P, b), end: g(P, c), target: tgt, parentRotation: q(R, sk.parents[a]), rootLocal: q(pose, a), midLocal: q(pose, b) });
      out.twoBone = [arr(tb.rootLocal), arr(tb.midLocal), arr(tb.knee), arr(tb.end), tb.case];
      const ch = rig.ccd, base = sk.parents[ch[0]];
      const off = [];
      for (const j of ch) off.push(...sk.offsets[j]);
      off.push(...sk.offsets[rig.ccdEnd]);
      const init = [];
      for (const j of ch) init.push(...q(pose, j));
      const e = rig.ccdEnd;
      // a reachable target: where the end is with the chain's joints at rest
      const rest = pose.slice();
      for (const j of ch) rest.splice(4 * j, 4, 1, 0, 0, 0);
      const ct = g(jl.fk(rest, offsets, sk.parents).positions, e);
      for (const L of [null, lim]) {
        const r = jl.ccd({ baseRotation: q(R, base), basePosition: g(P, base), offsets: off, target: ct, rotations: init, limits: L, joints: ch, maxIterations: 100 });
        out[L ? "ccdLimited" : "ccd"] = [arr(r.rotations), r.success, r.iterations, r.error];
      }
      const h = rig.lookAt[rig.lookAt.length - 1];
      const lt = [P[3 * h] + 0.8, P[3 * h + 1] + 0.1, P[3 * h + 2] + 1.0];
      out.lookAt = arr(jl.lookAt({ rotations: pose, offsets, parents: sk.parents, chain: rig.lookAt, target: lt, forward: rig.forward }));
      out.lookAtLimited = arr(jl.lookAt({ rotations: pose, offsets, parents: sk.parents, chain: rig.lookAt, target: lt, forward: rig.forward, limits: lim }));
      const st = jl.swingTwist(pose, [0, 1, 0]);
      out.swingTwist = [arr(st.swing), arr(st.twist)];
      const e0 = data.limitSets[name].joints.find((x) => x.enabled && x.compiled);
      out.projectShape = arr(jl.projectShape(e0.compiled.a, [0.5, -0.3, 0.2, 2, 2, 2, 0, 0, 0]));
    } finally {
      lim.free();
    }
    return out;
  }

  return { runCases, testPose };
});

if (typeof require === "function" && typeof module === "object" && require.main === module) {
  // node cases.js DATA.js: print the results as JSON
  const vm = require("vm"), fs = require("fs"), path = require("path");
  const ctx = { globalThis: {} };
  vm.runInNewContext(fs.readFileSync(process.argv[2], "utf8"), ctx);
  require(path.join(__dirname, "..", "jointlimits.js"))
    .load()
    .then((jl) => process.stdout.write(JSON.stringify(module.exports.runCases(jl, ctx.globalThis.JL_DEMO_DATA))));
}
