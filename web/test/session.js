// The body of tests/viz/test_web_demo.py's browser session (run by page_eval.cjs in Node, with
// `page` and the test's inputs IN): every check computed in the page, returned as one object.
const R = {};
R.readyAt = await page.evaluate(() => jlDemo.state.readyAt);
// projections in the page: golden points on a shape of every kind, poses through every limits set
R.shapes = await page.evaluate((IN) => {
  const out = {};
  for (const k in IN.shapes) out[k] = Array.from(jlDemo.state.jl.projectShape(IN.shapes[k], IN.points));
  return out;
}, IN);
R.poses = await page.evaluate((IN) => {
  const out = {}, jl = jlDemo.state.jl;
  for (const k in JL_DEMO_DATA.limitSets) {
    const L = jl.loadLimits(JL_DEMO_DATA.limitSets[k]);
    out[k] = Array.from(jl.project(L, IN.poses));
    L.free();
  }
  return out;
}, IN);
// the same cases as under Node
await page.addScriptTag({ path: require("path").join(process.cwd(), "test", "cases.js") });
R.cases = await page.evaluate(() => jlCases.runCases(jlDemo.state.jl, JL_DEMO_DATA));
// the limits toggle: drag the two-bone target (left hand) onto the left shoulder with the mouse
const drag = await page.evaluate(() => {
  const S = jlDemo.state, g = jlDemo.globals(S.base).positions, a = S.rig.twoBone[0];
  // the goal: just below and in front of the shoulder, which folds the elbow past its flexion
  const side = Math.sign(g[3 * S.rig.twoBone[2]] - g[3 * a]) || 1;
  const sh = [g[3 * a] + 0.05 * side, g[3 * a + 1] - 0.1, g[3 * a + 2] + 0.05];
  // start the target beside the goal, in the view plane through it (the drag's plane)
  const cam = jlDemo.camera, right = [cam.matrixWorld.elements[0], cam.matrixWorld.elements[1], cam.matrixWorld.elements[2]];
  const start = sh.map((x, c) => x + right[c] * 0.4);
  jlDemo.setTarget("twoBone", start);
  return { shoulder: sh, from: jlDemo.screenOf("twoBone"), to: jlDemo.screenOfPoint(sh), scale: S.scale };
});
await page.mouse.move(drag.from[0], drag.from[1]);
await page.mouse.down();
for (let i = 1; i <= 10; i++) await page.mouse.move(drag.from[0] + ((drag.to[0] - drag.from[0]) * i) / 10, drag.from[1] + ((drag.to[1] - drag.from[1]) * i) / 10);
await page.mouse.up();
await page.waitForTimeout(300);
const statusText = () => page.evaluate(() => document.getElementById("status").innerText);
const t = await page.evaluate((d) => {
  const p = jlDemo.state.targets.twoBone;
  return { dragged: Math.hypot(p[0] - d.shoulder[0], p[1] - d.shoulder[1], p[2] - d.shoulder[2]), scale: d.scale, onOutside: jlDemo.state.outside.map((v) => v[0]) };
}, drag);
t.on = await statusText();
await page.click("#limits");
await page.waitForTimeout(300);
t.off = await statusText();
t.offOutside = await page.evaluate(() => jlDemo.state.outside.map((v) => v[0]));
await page.click("#limits");
await page.click("#reset");
R.toggle = t;
// look-at: the gaze target swept round the head; each chain joint's turn from the start pose
R.look = await page.evaluate(() => {
  const S = jlDemo.state, rig = S.rig, g = jlDemo.globals(S.base).positions, h = rig.lookAt[rig.lookAt.length - 1];
  const hp = Array.from(g.slice(3 * h, 3 * h + 3));
  const ang = (a, b) => 2 * Math.acos(Math.min(1, Math.abs(a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3])));
  const out = { chain: rig.lookAt.map((j) => S.skeleton.names[j]), on: {}, off: {} };
  for (const on of [true, false]) {
    jlDemo.setLimits(on);
    for (const deg of [5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]) {
      const a = (deg * Math.PI) / 180;
      jlDemo.setTarget("lookAt", [hp[0] + 2 * Math.sin(a), hp[1], hp[2] + 2 * Math.cos(a)]);
      out[on ? "on" : "off"][deg] = rig.lookAt.map((j) => ang(S.base.slice(4 * j, 4 * j + 4), S.pose.slice(4 * j, 4 * j + 4)));
    }
  }
  jlDemo.setLimits(true);
  return out;
});
await page.click("#reset");
// every shape of the choice, through the page's select: 0 joints outside with limits on
R.shapesOutside = {};
for (const name of await page.evaluate(() => jlDemo.shapeNames())) {
  await page.selectOption("#shape", name);
  R.shapesOutside[name] = await page.evaluate(() => [jlDemo.state.shape, jlDemo.setLimits(true).length, jlDemo.setLimits(false).length]);
}
await page.evaluate(() => jlDemo.setLimits(true));
R.bench = await page.evaluate(() => jlDemo.benchmark(200));
// the page `jointlimits view --demo` wrote, from file://, with BVH and GLB clips dropped on it
const p2 = await page.context().browser().newPage();
await p2.goto(IN.fileUrl);
await p2.waitForFunction(() => globalThis.jlDemo && (jlDemo.state.ready || jlDemo.state.error), null, { timeout: 20000, polling: 20 });
R.file = await p2.evaluate(async (files) => {
  const S = jlDemo.state, out = { error: S.error, status: document.getElementById("status").innerText, shapes: jlDemo.shapeNames() };
  for (const n in files) {
    const b = Uint8Array.from(atob(files[n]), (c) => c.charCodeAt(0));
    await jlDemo.onDrop(new File([b], n));
    out[n] = { status: document.getElementById("status").innerText, frames: S.clip.rotations.length, names: S.skeleton.names, first: Array.from(S.clip.rotations[0]) };
    jlDemo.setClip(true, 5);
    out[n].limitedOutside = S.outside.length;
    jlDemo.setLimits(false);
    out[n].rawOutside = S.outside.map((v) => v[0]);
    jlDemo.setLimits(true);
  }
  return out;
}, IN.files);
return R;
