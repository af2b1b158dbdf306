/*
 * The jointlimits web demo (docs/demo, or `jointlimits view LIMITS.json --demo -o DIR`): a character
 * posed by two-bone IK, CCD and look-at with its joint limits on or off, every number computed by
 * the WebAssembly core through jointlimits.js. data.js (JL_DEMO_DATA) holds the skeleton, the limits
 * documents, the joints the page drives and a clip. window.jlDemo is the page's state and the hooks
 * its tests call (tests/viz/test_web_demo.py).
 */
(function () {
  "use strict";
  const T = globalThis.THREE;
  const D = globalThis.JL_DEMO_DATA;
  const $ = (id) => document.getElementById(id);
  const OUTSIDE_RAD = 1e-5; // a joint whose projection moves it further than this is outside its limit

  // ---------------------------------------------------------------- quaternion helpers (w, x, y, z)
  const qmul = (a, b) => [
    a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
    a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
    a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
    a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
  ];
  const qconj = (a) => [a[0], -a[1], -a[2], -a[3]];
  const qrot = (q, v) => {
    const r = qmul(qmul(q, [0, v[0], v[1], v[2]]), qconj(q));
    return [r[1], r[2], r[3]];
  };
  const qangle = (a, b) => {
    const q = qmul(qconj(a), b);
    return 2 * Math.atan2(Math.hypot(q[1], q[2], q[3]), Math.abs(q[0]));
  };
  const get4 = (a, j) => [a[4 * j], a[4 * j + 1], a[4 * j + 2], a[4 * j + 3]], get3 = (a, j) => [a[3 * j], a[3 * j + 1], a[3 * j + 2]];
  const set4 = (a, j, q) => { for (let c = 0; c < 4; c++) a[4 * j + c] = q[c]; };
  const axisAngle = (ax, an) => { const s = Math.sin(an / 2); return [Math.cos(an / 2), ax[0] * s, ax[1] * s, ax[2] * s]; };
  const norm3 = (v) => { const n = Math.hypot(v[0], v[1], v[2]) || 1; return [v[0] / n, v[1] / n, v[2] / n]; };
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];

  // ---------------------------------------------------------------- state
  const S = {
    jl: null, ready: false, error: null,
    skeleton: null, J: 0, offsets: null, rig: null, scale: 1,
    sets: {}, shape: null, limits: null, limitsOn: true, drawLimits: true,
    base: null, pose: null, raw: null, clip: null, clipMode: false, frame: 0,
    targets: {}, outside: [], updates: 0, loops: {},
  };

  function status(lines) {
    const el = $("status");
    el.textContent = "";
    for (const [text, isBad] of lines) {
      const d = el.appendChild(document.createElement("div"));
      d.textContent = text;
      if (isBad) d.className = "bad";
    }
  }

  // ---------------------------------------------------------------- character
  const scene = new T.Scene();
  const camera = new T.PerspectiveCamera(40, 1, 0.01, 1000);
  const renderer = new T.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  const view = { yaw: 0.45, pitch: 0.12, dist: 4, center: new T.Vector3(0, 1, 0) };
  let G = null, restGlobal = []; // the three.js objects of the current character, its rest positions

  function setCamera() {
    const c = Math.cos(view.pitch);
    camera.position.set(view.center.x + view.dist * c * Math.sin(view.yaw), view.center.y + view.dist * Math.sin(view.pitch), view.center.z + view.dist * c * Math.cos(view.yaw));
    camera.lookAt(view.center);
  }

  function buildCharacter(skeleton, rig) {
    if (G) scene.remove(G.root);
    const J = skeleton.names.length;
    S.skeleton = skeleton;
    S.J = J;
    S.offsets = Float64Array.from(skeleton.offsets.flat());
    S.rig = rig;
    const lens = [];
    for (let j = 1; j < J; j++) lens.push(Math.hypot(...get3(S.offsets, j)));
    S.scale = lens.reduce((a, b) => a + b, 0) / Math.max(1, lens.length) || 1;
    const root = new T.Group();
    // bones and a skinned mesh: one tapered tube per bone, skinned to the bone's parent joint
    const bones = skeleton.names.map((n) => { const b = new T.Bone(); b.name = n; return b; });
    for (let j = 0; j < J; j++) {
      bones[j].position.set(...get3(S.offsets, j));
      if (j > 0) bones[skeleton.parents[j]].add(bones[j]);
    }
    const pos = [], idx = [], si = [], sw = [];
    const r = S.scale * 0.22, seg = 10;
    for (let j = 1; j < J; j++) {
      const p = skeleton.parents[j];
      const o = get3(S.offsets, j), L = Math.hypot(...o);
      if (L < 1e-9) continue;
      const d = norm3(o), a = norm3(cross(d, Math.abs(d[1]) < 0.9 ? [0, 1, 0] : [1, 0, 0])), b = cross(d, a);
      // rest positions are global at the rest pose: the parent's global position plus the offset
      const start = restGlobal[p], v0 = pos.length / 3;
      for (let ring = 0; ring < 2; ring++) {
        const rr = ring ? r * 0.7 : r;
        for (let k = 0; k < seg; k++) {
          const t = (2 * Math.PI * k) / seg, ca = Math.cos(t) * rr, sa = Math.sin(t) * rr;
          pos.push(start[0] + ring * o[0] + ca * a[0] + sa * b[0], start[1] + ring * o[1] + ca * a[1] + sa * b[1], start[2] + ring * o[2] + ca * a[2] + sa * b[2]);
          si.push(ring ? j : p, ring ? p : 0, 0, 0);
          sw.push(ring ? 0.5 : 1, ring ? 0.5 : 0, 0, 0);
        }
      }
      for (let k = 0; k < seg; k++) {
        const k2 = (k + 1) % seg;
        idx.push(v0 + k, v0 + k2, v0 + seg + k, v0 + k2, v0 + seg + k2, v0 + seg + k);
      }
    }
    const geo = new T.BufferGeometry();
    geo.setAttribute("position", new T.Float32BufferAttribute(pos, 3));
    geo.setAttribute("skinIndex", new T.Uint16BufferAttribute(si, 4));
    geo.setAttribute("skinWeight", new T.Float32BufferAttribute(sw, 4));
    geo.setIndex(idx);
    geo.computeVertexNormals();
    const mesh = new T.SkinnedMesh(geo, new T.MeshLambertMaterial({ color: 0xb8c4d6, side: T.DoubleSide }));
    mesh.frustumCulled = false;
    mesh.add(bones[0]);
    mesh.bind(new T.Skeleton(bones));
    root.add(mesh);
    const ball = new T.SphereGeometry(S.scale * 0.08, 12, 8);
    const joints = skeleton.names.map(() => { const m = new T.Mesh(ball, new T.MeshBasicMaterial({ color: 0x445566 })); root.add(m); return m; });
    const K = 32;
    const loops = skeleton.names.map(() => {
      const g = new T.BufferGeometry();
      g.setAttribute("position", new T.Float32BufferAttribute(new Float32Array(3 * K), 3));
      const l = new T.LineLoop(g, new T.LineBasicMaterial({ color: 0x69db7c }));
      l.visible = false;
      root.add(l);
      return l;
    });
    const cur = skeleton.names.map(() => {
      const g = new T.BufferGeometry();
      g.setAttribute("position", new T.Float32BufferAttribute(new Float32Array(6), 3));
      const l = new T.LineSegments(g, new T.LineBasicMaterial({ color: 0xffe066 }));
      l.visible = false;
      root.add(l);
      return l;
    });
    const ghostGeo = new T.BufferGeometry();
    ghostGeo.setAttribute("position", new T.Float32BufferAttribute(new Float32Array(6 * J), 3));
    const ghost = new T.LineSegments(ghostGeo, new T.LineBasicMaterial({ color: 0xff6b6b }));
    ghost.visible = false;
    root.add(ghost);
    scene.add(root);
    G = { root, mesh, bones, joints, loops, cur, ghost, K };
    // the rest pose's size (its largest extent: some rigs rest lying down)
    S.extent = [0, 1, 2].map((c) => Math.max(...restGlobal.map((p) => p[c])) - Math.min(...restGlobal.map((p) => p[c])));
    const h = Math.max(...S.extent);
    view.center.set(restGlobal[0][0], (Math.max(...restGlobal.map((p) => p[1])) + Math.min(...restGlobal.map((p) => p[1]))) / 2, restGlobal[0][2]);
    view.dist = 2.5 * (h || 1);
    S.centerOffset = [view.center.x - restGlobal[0][0], view.center.y - restGlobal[0][1], view.center.z - restGlobal[0][2]];
    setCamera();
  }

  // ---------------------------------------------------------------- limits
  const shapeNames = () => Object.keys(S.sets);
  function useShape(name) {
    if (!(name in S.sets)) throw new Error("no limits named " + name);
    let L = S.sets[name];
    if (!L.handle) {
      if (L.doc.skeleton.names.join("\n") !== S.skeleton.names.join("\n")) throw new Error("the limits file's joints differ from the character's");
      L = S.sets[name] = Object.assign(S.jl.loadLimits(L.doc), { doc: L.doc });
    }
    S.shape = name;
    S.limits = L;
    S.loops = {};
    // the start pose: each limited joint at its limit's reference rotation (inside its range)
    S.base = new Float64Array(4 * S.J);
    for (let j = 0; j < S.J; j++) S.base[4 * j] = 1;
    // the arms at their limits' references (elbows bent the way they bend), the body at rest
    // unless rest is outside a joint's limit (a rig resting in no standing pose): its reference
    const arms = new Set([...S.rig.twoBone, ...S.rig.ccd]), out = new Set(violations(S.base).map((v) => v[0]));
    for (const e of L.doc.joints) {
      const j = S.skeleton.names.indexOf(e.name);
      if ((arms.has(j) || out.has(e.name)) && e.enabled && e.compiled) set4(S.base, j, e.compiled.reference);
    }
    // a rig resting lying down (Y-up, its rest pose lower than long): its root as the clip starts
    if (S.clip && S.extent[1] < 0.5 * Math.max(...S.extent)) set4(S.base, 0, get4(S.clip.rotations[0], 0));
    $("shape").value = name;
  }

  function addLimits(name, doc) {
    S.sets[name] = { doc };
    const o = document.createElement("option");
    o.value = o.textContent = name;
    $("shape").appendChild(o);
  }

  /** Per joint: how far (rad) its limit moves it (0 inside), for a pose of J rotations. */
  function violations(pose) {
    if (!S.limits) return [];
    const p = S.jl.project(S.limits, pose);
    const out = [];
    for (const j of S.limits.limited) {
      const a = qangle(get4(pose, j), get4(p, j));
      if (a > OUTSIDE_RAD) out.push([S.skeleton.names[j], a]);
    }
    return out;
  }

  // ---------------------------------------------------------------- the IK + limits update
  function globals(pose) {
    return S.jl.fk(pose, S.offsets, S.skeleton.parents);
  }

  function defaultTargets() {
    // within reach: in front of each shoulder, at fractions of the arm's length
    const g = globals(S.base).positions, rig = S.rig;
    const reach = (chain, end) => {
      const sh = get3(g, chain[chain.length - 2]), hand = get3(g, end);
      const L = Math.hypot(...get3(S.offsets, chain[chain.length - 1])) + Math.hypot(...get3(S.offsets, end));
      return { sh, L, side: Math.sign(hand[0] - sh[0]) || 1 };
    };
    const l = reach(rig.twoBone.slice(0, 2), rig.twoBone[2]);
    const r = reach(rig.ccd, rig.ccdEnd);
    const head = get3(g, rig.lookAt[rig.lookAt.length - 1]);
    return {
      twoBone: [l.sh[0] + l.side * 0.35 * l.L, l.sh[1] - 0.3 * l.L, l.sh[2] + 0.6 * l.L],
      ccd: [r.sh[0] + r.side * 0.4 * r.L, r.sh[1] + 0.35 * r.L, r.sh[2] + 0.55 * r.L],
      lookAt: [head[0] + l.side * 1.2 * l.L, head[1] + 0.3 * l.L, head[2] + 2.5 * l.L],
    };
  }

  function solve(tg, limitsOn) {
    const rig = S.rig, L = limitsOn ? S.limits : null;
    const pose = Float64Array.from(S.base);
    // look-at over the spine and head (each joint projected into its limit, lowest first)
    const look = S.jl.lookAt({ rotations: pose, offsets: S.offsets, parents: S.skeleton.parents, chain: rig.lookAt, target: tg.lookAt, forward: rig.forward, limits: L });
    pose.set(look);
    // two-bone on the left arm, then the limits of its two joints
    let g = globals(pose);
    const [a, b, c] = rig.twoBone, pa = S.skeleton.parents[a];
    const tb = S.jl.twoBone({ root: get3(g.positions, a), mid: get3(g.positions, b), end: get3(g.positions, c), target: tg.twoBone, parentRotation: get4(g.rotations, pa), rootLocal: get4(pose, a), midLocal: get4(pose, b) });
    set4(pose, a, tb.rootLocal);
    set4(pose, b, tb.midLocal);
    // CCD on the right arm with the limits inside the solver
    g = globals(pose);
    const ch = rig.ccd, base = S.skeleton.parents[ch[0]];
    const off = [];
    for (const j of ch) off.push(...get3(S.offsets, j));
    off.push(...get3(S.offsets, rig.ccdEnd));
    const init = [];
    for (const j of ch) init.push(...get4(pose, j));
    const r = S.jl.ccd({ baseRotation: get4(g.rotations, base), basePosition: get3(g.positions, base), offsets: off, target: tg.ccd, rotations: init, limits: L, joints: ch, tolerance: 1e-3 * S.scale, maxIterations: 12 });
    ch.forEach((j, k) => set4(pose, j, get4(r.rotations, k)));
    return L ? S.jl.project(L, pose) : pose;
  }

  function update() {
    if (S.clipMode && S.clip) {
      const f = Math.min(S.frame, S.clip.rotations.length - 1);
      S.raw = Float64Array.from(S.clip.rotations[f]);
      S.offsets.set(S.clip.root[f], 0);
      S.pose = S.limitsOn && S.limits ? S.jl.project(S.limits, S.raw) : S.raw;
    } else {
      S.offsets.set(S.skeleton.offsets[0], 0);
      S.pose = solve(S.targets, S.limitsOn);
      S.raw = null;
    }
    S.outside = violations(S.pose);
    S.updates++;
    return S.pose;
  }

  // ---------------------------------------------------------------- drawing
  function draw() {
    const pose = S.pose, g = globals(pose);
    for (let j = 0; j < S.J; j++) {
      const q = get4(pose, j);
      G.bones[j].quaternion.set(q[1], q[2], q[3], q[0]);
      G.bones[j].position.set(...get3(S.offsets, j));
    }
    G.mesh.updateMatrixWorld(true);
    const bad = new Set(S.outside.map((v) => v[0]));
    const limited = new Set(S.limits ? S.limits.limited : []);
    const kids = S.skeleton.names.map(() => -1);
    for (let j = S.J - 1; j > 0; j--) kids[S.skeleton.parents[j]] = j;
    for (let j = 0; j < S.J; j++) {
      G.joints[j].position.set(...get3(g.positions, j));
      G.joints[j].material.color.setHex(bad.has(S.skeleton.names[j]) ? 0xff4040 : limited.has(j) ? 0x69db7c : 0x445566);
      const show = S.drawLimits && limited.has(j) && kids[j] > 0 && j > 0;
      G.loops[j].visible = G.cur[j].visible = show;
      if (show) drawLimit(j, kids[j], g);
    }
    if (S.raw) {
      const gr = globals(S.raw).positions, a = G.ghost.geometry.attributes.position.array;
      for (let j = 1; j < S.J; j++) {
        a.set(get3(gr, S.skeleton.parents[j]), 6 * j);
        a.set(get3(gr, j), 6 * j + 3);
      }
      G.ghost.geometry.attributes.position.needsUpdate = true;
    }
    G.ghost.visible = !!S.raw;
    // the camera follows the root: a clip may walk away from where the skeleton rests
    const r0 = get3(g.positions, 0), c = S.centerOffset;
    view.center.set(r0[0] + c[0], r0[1] + c[1], r0[2] + c[2]);
    setCamera();
    for (const k in S.targets) { markers[k].position.set(...S.targets[k]); markers[k].visible = !S.clipMode; }
  }

  /** The limit of joint j drawn as where its child bone can point, in j's parent's frame: swings
   *  of 170 degrees about K axes perpendicular to the bone, each projected into the limit (onto
   *  its boundary). Depends only on the limits: computed once per limits set and joint. */
  function limitLoop(j, kid) {
    const key = S.shape + ":" + j;
    if (S.loops[key]) return S.loops[key];
    const K = G.K, o = get3(S.offsets, kid);
    const ref = get4(S.base, j), d = norm3(qrot(ref, o));
    const a = norm3(cross(d, Math.abs(d[1]) < 0.9 ? [0, 1, 0] : [1, 0, 0])), b = cross(d, a);
    const qs = new Float64Array(4 * K);
    for (let k = 0; k < K; k++) {
      const t = (2 * Math.PI * k) / K, ax = norm3([Math.cos(t) * a[0] + Math.sin(t) * b[0], Math.cos(t) * a[1] + Math.sin(t) * b[1], Math.cos(t) * a[2] + Math.sin(t) * b[2]]);
      set4(qs, k, qmul(axisAngle(ax, 2.97), ref));
    }
    const p = S.jl.projectJoint(S.limits, j, qs), out = [];
    for (let k = 0; k < K; k++) out.push(norm3(qrot(get4(p, k), o)));
    return (S.loops[key] = out);
  }

  function drawLimit(j, kid, g) {
    const K = G.K, par = get4(g.rotations, S.skeleton.parents[j]), o = get3(S.offsets, kid), len = Math.hypot(...o) * 0.6;
    const loop = limitLoop(j, kid), at = get3(g.positions, j);
    const arr = G.loops[j].geometry.attributes.position.array;
    for (let k = 0; k < K; k++) {
      const v = qrot(par, loop[k]);
      arr[3 * k] = at[0] + v[0] * len, arr[3 * k + 1] = at[1] + v[1] * len, arr[3 * k + 2] = at[2] + v[2] * len;
    }
    G.loops[j].geometry.attributes.position.needsUpdate = true;
    const v = norm3(qrot(get4(g.rotations, j), o));
    G.cur[j].geometry.attributes.position.array.set([...at, at[0] + v[0] * len * 1.3, at[1] + v[1] * len * 1.3, at[2] + v[2] * len * 1.3]);
    G.cur[j].geometry.attributes.position.needsUpdate = true;
  }

  function report() {
    const lines = [[`${S.clipMode ? "clip frame " + S.frame : "IK + look-at"}, limits ${S.limitsOn ? "on" : "off"} (${S.shape})`]];
    if (S.outside.length === 0) lines.push(["0 joints outside their limits"]);
    else {
      lines.push([`${S.outside.length} joint(s) outside their limits:`, true]);
      for (const [n, a] of S.outside.slice(0, 8)) lines.push([`  ${n} by ${((a * 180) / Math.PI).toFixed(1)} deg`, true]);
    }
    if (S.rate) lines.push([`${S.rate.toFixed(0)} updates/s (IK + limits + skinning)`]);
    status(lines);
  }

  let dirty = true;
  function frame() {
    if (dirty) {
      update();
      draw();
      report();
      dirty = false;
    }
    renderer.render(scene, camera);
    requestAnimationFrame(frame);
  }

  // ---------------------------------------------------------------- targets and the mouse
  const markers = {};
  function makeMarkers() {
    for (const [k, c] of [["twoBone", 0x4da3ff], ["ccd", 0xffa94d], ["lookAt", 0x69db7c]]) {
      if (markers[k]) scene.remove(markers[k]);
      markers[k] = new T.Mesh(new T.SphereGeometry(S.scale * (k === "lookAt" ? 0.16 : 0.12), 16, 12), new T.MeshBasicMaterial({ color: c }));
      markers[k].userData.target = k;
      scene.add(markers[k]);
    }
  }

  const ray = new T.Raycaster();
  let drag = null;
  function pointer(e) {
    const r = renderer.domElement.getBoundingClientRect();
    return new T.Vector2(((e.clientX - r.left) / r.width) * 2 - 1, -((e.clientY - r.top) / r.height) * 2 + 1);
  }
  function onDown(e) {
    ray.setFromCamera(pointer(e), camera);
    const hit = S.clipMode ? [] : ray.intersectObjects(Object.values(markers));
    if (hit.length) {
      const k = hit[0].object.userData.target;
      const n = new T.Vector3();
      camera.getWorldDirection(n);
      drag = { kind: "target", k, plane: new T.Plane().setFromNormalAndCoplanarPoint(n, hit[0].object.position.clone()) };
    } else drag = { kind: "view", x: e.clientX, y: e.clientY };
  }
  function onMove(e) {
    if (!drag) return;
    if (drag.kind === "target") {
      ray.setFromCamera(pointer(e), camera);
      const p = new T.Vector3();
      if (ray.ray.intersectPlane(drag.plane, p)) { S.targets[drag.k] = [p.x, p.y, p.z]; dirty = true; }
    } else {
      view.yaw -= (e.clientX - drag.x) * 0.01;
      view.pitch = Math.max(-1.4, Math.min(1.4, view.pitch + (e.clientY - drag.y) * 0.01));
      drag.x = e.clientX, drag.y = e.clientY;
      setCamera();
    }
  }

  /** A target's position on the screen (CSS pixels), for tests that drag it with the mouse. */
  function screenOf(k) {
    return screenOfPoint(S.targets[k]);
  }
  /** A world point's position on the screen (CSS pixels). */
  function screenOfPoint(p) {
    const v = new T.Vector3(...p).project(camera), r = renderer.domElement.getBoundingClientRect();
    return [r.left + ((v.x + 1) / 2) * r.width, r.top + ((1 - v.y) / 2) * r.height];
  }

  // ---------------------------------------------------------------- dropped files
  function loadClip(skeleton, clip, message) {
    const same = S.skeleton && skeleton.names.join("\n") === S.skeleton.names.join("\n");
    if (!same) {
      const rig = jlDemoFiles.findRig(skeleton.names, skeleton.parents);
      if (!rig) throw new Error("the clip's skeleton has no head and two hands the page can drive");
      setCharacter(skeleton, rig);
      S.sets = {};
      $("shape").textContent = "";
      S.limits = null;
      S.shape = "none";
    }
    S.clip = clip;
    $("frame").max = String(clip.rotations.length - 1);
    $("frame").value = "0";
    S.frame = 0;
    S.clipMode = $("clipMode").checked = true;
    dirty = true;
    return message + (same ? "" : " (no limits for its skeleton: drop a limits file fitted on it)");
  }

  function setCharacter(skeleton, rig) {
    S.J = skeleton.names.length;
    const off = Float64Array.from(skeleton.offsets.flat());
    restGlobal = [];
    for (let j = 0; j < S.J; j++) {
      const p = skeleton.parents[j], o = get3(off, j);
      restGlobal.push(p < 0 ? o : [restGlobal[p][0] + o[0], restGlobal[p][1] + o[1], restGlobal[p][2] + o[2]]);
    }
    buildCharacter(skeleton, rig);
    S.base = new Float64Array(4 * S.J);
    for (let j = 0; j < S.J; j++) S.base[4 * j] = 1;
    makeMarkers();
    S.targets = defaultTargets();
  }

  async function onDrop(file) {
    const text = await file.text();
    let msg;
    try {
      if (/\.json$/i.test(file.name)) {
        const doc = JSON.parse(text);
        const L = S.jl.loadLimits(doc); // validates it (one-line error)
        L.free();
        if (doc.skeleton.names.join("\n") !== S.skeleton.names.join("\n")) {
          if (!Array.isArray(doc.skeleton.offsets)) throw new Error("the limits file's joints differ from the character's");
          const rig = jlDemoFiles.findRig(doc.skeleton.names, doc.skeleton.parents);
          if (!rig) throw new Error("the limits file's skeleton has no head and two hands the page can drive");
          setCharacter({ names: doc.skeleton.names, parents: doc.skeleton.parents, offsets: doc.skeleton.offsets }, rig);
          S.sets = {};
          $("shape").textContent = "";
          S.clip = null;
        }
        addLimits(file.name, doc);
        useShape(file.name);
        S.targets = defaultTargets();
        msg = "loaded limits " + file.name;
      } else if (/\.bvh$/i.test(file.name)) {
        const { skeleton, clip } = jlDemoFiles.parseBVH(text);
        msg = loadClip(skeleton, clip, "loaded clip " + file.name + " (" + clip.rotations.length + " frames)");
      } else if (/\.(glb|gltf)$/i.test(file.name)) {
        const { skeleton, clip } = await jlDemoFiles.parseGLTF(/\.glb$/i.test(file.name) ? await file.arrayBuffer() : text);
        msg = loadClip(skeleton, clip, "loaded clip " + file.name + " (" + clip.rotations.length + " frames)");
      } else throw new Error(file.name + ": drop a limits file (.json) or a clip (.bvh, .glb, .gltf)");
      $("title").textContent = "dropped: " + file.name;
      dirty = true;
      update();
      draw();
      report();
      status([[msg], ...[...$("status").children].map((c) => [c.textContent, c.className === "bad"])]);
    } catch (e) {
      status([[file.name + ": " + e.message, true]]);
    }
  }

  // ---------------------------------------------------------------- speed, measured in the page
  /** Updates per second of the whole loop (IK, look-at, limits, then the skinned mesh's bone
   *  matrices and its vertices skinned on the CPU) over `ms` milliseconds, targets moving. */
  function benchmark(ms = 2000) {
    const t0 = performance.now(), base = Object.assign({}, S.targets);
    const v = new T.Vector3(), n = G.mesh.geometry.attributes.position.count;
    let k = 0, sink = 0;
    while (performance.now() - t0 < ms) {
      const a = k * 0.05, s = S.scale * 0.5;
      S.targets = {
        twoBone: [base.twoBone[0] + s * Math.cos(a), base.twoBone[1] + s * Math.sin(a), base.twoBone[2]],
        ccd: [base.ccd[0], base.ccd[1] + s * Math.sin(a), base.ccd[2] + s * Math.cos(a)],
        lookAt: [base.lookAt[0] + 4 * s * Math.sin(a), base.lookAt[1], base.lookAt[2]],
      };
      update();
      draw();
      G.mesh.skeleton.update();
      for (let i = 0; i < n; i++) { v.fromBufferAttribute(G.mesh.geometry.attributes.position, i); G.mesh.applyBoneTransform(i, v); sink += v.x; }
      k++;
    }
    const rate = (k * 1000) / (performance.now() - t0);
    S.targets = base;
    S.rate = rate;
    dirty = true;
    return { updates: k, rate, joints: S.J, vertices: n, sink };
  }

  /** Rendered frames per second over `ms` (requestAnimationFrame, the targets moving). */
  function renderRate(ms = 2000) {
    return new Promise((resolve) => {
      const t0 = performance.now(), base = Object.assign({}, S.targets);
      let k = 0;
      function step() {
        const a = k * 0.05, s = S.scale * 0.5;
        S.targets = Object.assign({}, base, { twoBone: [base.twoBone[0] + s * Math.cos(a), base.twoBone[1] + s * Math.sin(a), base.twoBone[2]] });
        dirty = true;
        k++;
        if (performance.now() - t0 < ms) requestAnimationFrame(step);
        else { S.targets = base; dirty = true; resolve((k * 1000) / (performance.now() - t0)); }
      }
      requestAnimationFrame(step);
    });
  }

  // ---------------------------------------------------------------- start
  async function start() {
    const t0 = performance.now(), marks = (S.marks = { start: t0 });
    if (location.protocol === "file:" && !globalThis.JL_WASM_BASE64) {
      // a page opened from disk cannot fetch the .wasm: its base64 copy comes as a classic script
      await new Promise((ok, no) => { const s = document.createElement("script"); s.src = "jlcore.wasm.js"; s.onload = ok; s.onerror = () => no(new Error("jlcore.wasm.js is missing")); document.head.appendChild(s); });
    }
    S.jl = await JointLimitsWasm.load();
    marks.wasm = performance.now();
    $("view").appendChild(renderer.domElement);
    renderer.setPixelRatio(window.devicePixelRatio || 1);
    renderer.setClearColor(0x1d2127);
    const resize = () => { renderer.setSize(window.innerWidth, window.innerHeight); camera.aspect = window.innerWidth / window.innerHeight; camera.updateProjectionMatrix(); dirty = true; };
    window.addEventListener("resize", resize);
    resize();
    scene.add(new T.HemisphereLight(0xffffff, 0x404050, 2.2));
    const sun = scene.add(new T.DirectionalLight(0xffffff, 1.5)).children.at(-1);
    sun.position.set(2, 4, 3);
    const grid = scene.add(new T.GridHelper(20, 40, 0x3a4048, 0x2a3038)).children.at(-1);
    $("title").textContent = D.title || "";
    setCharacter(D.skeleton, D.rig);
    grid.scale.setScalar(Math.max(0.01, S.scale * 2));
    const sets = D.limitSets || { [D.limitsName || "limits"]: D.limits };
    if (D.clip) {
      S.clip = { fps: D.clip.fps, rotations: D.clip.rotations, root: D.clip.root };
      $("frame").max = String(D.clip.rotations.length - 1);
    }
    for (const k in sets) addLimits(k, sets[k]);
    useShape(Object.keys(sets)[0]);
    S.targets = defaultTargets();
    $("limits").onchange = (e) => { S.limitsOn = e.target.checked; dirty = true; };
    $("drawLimits").onchange = (e) => { S.drawLimits = e.target.checked; dirty = true; };
    $("clipMode").onchange = (e) => { S.clipMode = e.target.checked && !!S.clip; dirty = true; };
    $("frame").oninput = (e) => { S.frame = +e.target.value; S.clipMode = $("clipMode").checked = !!S.clip; dirty = true; };
    $("shape").onchange = (e) => { try { useShape(e.target.value); dirty = true; } catch (err) { status([[err.message, true]]); } };
    $("reset").onclick = () => { S.targets = defaultTargets(); dirty = true; };
    const el = renderer.domElement;
    el.addEventListener("pointerdown", onDown);
    window.addEventListener("pointermove", onMove);
    window.addEventListener("pointerup", () => { drag = null; });
    el.addEventListener("wheel", (e) => { view.dist *= Math.exp(e.deltaY * 0.001); setCamera(); e.preventDefault(); }, { passive: false });
    window.addEventListener("dragover", (e) => { e.preventDefault(); $("drop").style.display = "block"; });
    window.addEventListener("dragleave", () => { $("drop").style.display = "none"; });
    window.addEventListener("drop", (e) => { e.preventDefault(); $("drop").style.display = "none"; for (const f of e.dataTransfer.files) onDrop(f); });
    S.marks.built = performance.now();
    update();
    S.marks.updated = performance.now();
    draw();
    report();
    S.marks.posed = performance.now();
    renderer.render(scene, camera);
    S.marks.rendered = performance.now();
    S.loadMs = performance.now() - t0;
    S.readyAt = performance.now(); // since the navigation started
    S.ready = true;
    requestAnimationFrame(frame);
  }

  globalThis.jlDemo = {
    state: S,
    start,
    update, solve, violations, benchmark, renderRate, screenOf, screenOfPoint, camera, loadClip, onDrop, useShape, shapeNames,
    setLimits(on) { S.limitsOn = $("limits").checked = !!on; dirty = true; update(); report(); return S.outside; },
    setTarget(k, p) { S.targets[k] = p.slice(); dirty = true; update(); report(); return S.outside; },
    setClip(on, f) {
      S.clipMode = $("clipMode").checked = !!on && !!S.clip;
      if (f !== undefined) S.frame = f, $("frame").value = String(f);
      return (dirty = true), update(), report(), S.outside;
    },
    globals: (pose) => globals(pose || S.pose),
  };
  start().catch((e) => { S.error = e.message; status([["the demo could not start: " + e.message, true]]); });
})();
