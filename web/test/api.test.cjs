// The JS API under Node (node --test web/test): every function on the web demo's data
// (docs/demo/data.js), checked against what it must do, and its errors.
"use strict";
const test = require("node:test");
const assert = require("node:assert");
const fs = require("fs"), path = require("path"), vm = require("vm");
const JL = require("../jointlimits.js");
const { runCases, testPose } = require("./cases.js");

const ctx = { globalThis: {} };
vm.runInNewContext(fs.readFileSync(path.join(__dirname, "..", "..", "docs", "demo", "data.js"), "utf8"), ctx);
const data = ctx.globalThis.JL_DEMO_DATA;
const sk = data.skeleton, J = sk.names.length;
let jl, out;

const qmul = (a, b) => [
  a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
  a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
  a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
  a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
];
const qrot = (q, v) => { const r = qmul(qmul(q, [0, ...v]), [q[0], -q[1], -q[2], -q[3]]); return r.slice(1); };
const q4 = (a, j) => Array.from(a.slice(4 * j, 4 * j + 4));
const v3 = (a, j) => Array.from(a.slice(3 * j, 3 * j + 3));
const angle = (a, b) => { const q = qmul([a[0], -a[1], -a[2], -a[3]], b); return 2 * Math.atan2(Math.hypot(q[1], q[2], q[3]), Math.abs(q[0])); };
const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

test.before(async () => {
  jl = await JL.load();
  out = runCases(jl, data);
});

test("every compiled shape kind is built in", () => {
  assert.strictEqual(jl.shapeKinds, 6);
});

test("project limits the joints that are outside and leaves its result in place", () => {
  const lim = jl.loadLimits(data.limitSets[Object.keys(data.limitSets)[0]]);
  const again = jl.project(lim, out.project);
  let moved = 0;
  for (let j = 0; j < J; j++) {
    assert.ok(angle(q4(again, j), q4(out.project, j)) < 1e-6, sk.names[j]);
  }
  const pose = runCasesPose();
  for (let j = 0; j < J; j++) if (angle(q4(out.project, j), pose[j]) > 1e-3) moved++;
  assert.ok(moved >= 3, "the test pose should have joints outside their limits, moved " + moved);
  lim.free();
});

function runCasesPose() {
  const p = testPose(J), out = [];
  for (let j = 0; j < J; j++) out.push(p.slice(4 * j, 4 * j + 4));
  return out;
}

test("fk composes parents' rotations and offsets", () => {
  const pose = runCasesPose(), [R, P] = out.fk;
  const gr = [], gp = [];
  for (let j = 0; j < J; j++) {
    const p = sk.parents[j];
    gr.push(p < 0 ? pose[j] : qmul(gr[p], pose[j]));
    gp.push(p < 0 ? sk.offsets[j] : qrot(gr[p], sk.offsets[j]).map((x, c) => x + gp[p][c]));
    assert.ok(angle(gr[j], R.slice(4 * j, 4 * j + 4)) < 1e-12);
    assert.ok(dist(gp[j], P.slice(3 * j, 3 * j + 3)) < 1e-12);
  }
});

test("twoBone reaches a reachable target", () => {
  const [, , knee, end, cs] = out.twoBone;
  assert.strictEqual(cs, 0);
  const P = out.fk[1], c = data.rig.twoBone[2];
  const tgt = [P[3 * c] + 0.05, P[3 * c + 1] - 0.1, P[3 * c + 2] + 0.1];
  assert.ok(dist(end, tgt) < 1e-9);
  assert.ok(knee.every(Number.isFinite));
});

test("ccd closes in on a reachable target; with limits every chain joint stays inside", () => {
  // the target is where the end is with the chain at rest, 0.2-0.5 m from where it starts
  assert.ok(out.ccd[3] < 0.01, "ccd error " + out.ccd[3]);
  assert.ok(out.ccdLimited[3] < 0.05, "limited ccd error " + out.ccdLimited[3]);
  const lim = jl.loadLimits(data.limitSets[Object.keys(data.limitSets)[0]]);
  data.rig.ccd.forEach((j, k) => {
    const q = out.ccdLimited[0].slice(4 * k, 4 * k + 4);
    assert.ok(angle(Array.from(jl.projectJoint(lim, j, q)), q) < 1e-9, sk.names[j]);
  });
  lim.free();
});

test("lookAt without limits points the head's forward axis at the target", () => {
  const g = jl.fk(out.lookAt, sk.offsets.flat(), sk.parents);
  const h = data.rig.lookAt[data.rig.lookAt.length - 1];
  const P0 = out.fk[1];
  const tgt = [P0[3 * h] + 0.8, P0[3 * h + 1] + 0.1, P0[3 * h + 2] + 1.0];
  const hp = v3(g.positions, h), f = qrot(q4(g.rotations, h), data.rig.forward);
  const d = tgt.map((x, c) => x - hp[c]), n = Math.hypot(...d);
  const cos = (d[0] * f[0] + d[1] * f[1] + d[2] * f[2]) / n;
  assert.ok(Math.acos(Math.min(1, cos)) < 1e-6, "gaze off by " + Math.acos(Math.min(1, cos)));
});

test("swingTwist recomposes the rotation", () => {
  const [sw, tw] = out.swingTwist, pose = runCasesPose();
  for (let j = 0; j < J; j++) assert.ok(angle(qmul(q4(sw, j), q4(tw, j)), pose[j]) < 1e-12);
});

test("bad input gets a one-line error", () => {
  assert.throws(() => jl.loadLimits("{}"), /^Error: not a jointlimits limits file$/);
  assert.throws(() => jl.loadLimits("{nope"), /corrupt limits file/);
  const doc = JSON.parse(JSON.stringify(data.limitSets[Object.keys(data.limitSets)[0]]));
  const e = doc.joints.find((x) => x.enabled && x.compiled);
  e.compiled.a.code = 99;
  assert.throws(() => jl.loadLimits(doc), new RegExp("joint '" + e.name + "'.*unknown compiled shape code"));
  const lim = jl.loadLimits(data.limitSets[Object.keys(data.limitSets)[0]]);
  const bad = new Array(4 * J).fill(0);
  bad[1] = NaN;
  assert.throws(() => jl.project(lim, bad), /rotations: values must be finite/);
  assert.throws(() => jl.project(lim, [1, 0, 0, 0]), /rotations: expected frames \* 22 \* 4 numbers/);
  lim.free();
});
