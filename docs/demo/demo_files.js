/*
 * The web demo's readers of dropped files and the rig of a dropped skeleton (findRig). Clips: BVH (text) and glTF / GLB (three's GLTFLoader, from
 * three-gltf.js), each as { skeleton: {names, parents, offsets}, clip: {fps, rotations, root} }
 * with local rotations (w, x, y, z) per frame. Used by demo.js (globalThis.jlDemoFiles).
 */
(function () {
  "use strict";
  const T = globalThis.THREE;
  const qmul = (a, b) => [
    a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
    a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
    a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
    a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
  ];
  const axisAngle = (ax, an) => { const s = Math.sin(an / 2); return [Math.cos(an / 2), ax[0] * s, ax[1] * s, ax[2] * s]; };
  const set4 = (a, j, q) => { for (let c = 0; c < 4; c++) a[4 * j + c] = q[c]; };

  function parseBVH(text) {
    const tok = text.split(/\s+/).filter((t) => t.length);
    let i = 0;
    const names = [], parents = [], offsets = [], channels = [];
    const stack = [];
    if (tok[i++] !== "HIERARCHY") throw new Error("not a BVH file");
    while (i < tok.length && tok[i] !== "MOTION") {
      const t = tok[i++];
      if (t === "ROOT" || t === "JOINT") {
        names.push(tok[i++]);
        parents.push(stack.length ? stack[stack.length - 1] : -1);
        offsets.push([0, 0, 0]);
        channels.push([]);
      } else if (t === "End") {
        i++; // Site: skipped with its block
        let depth = 0;
        do { const u = tok[i++]; if (u === "{") depth++; else if (u === "}") depth--; } while (depth > 0 && i < tok.length);
      } else if (t === "{") stack.push(names.length - 1);
      else if (t === "}") stack.pop();
      else if (t === "OFFSET") { offsets[names.length - 1] = [+tok[i], +tok[i + 1], +tok[i + 2]]; i += 3; }
      else if (t === "CHANNELS") { const n = +tok[i++]; channels[names.length - 1] = tok.slice(i, i + n); i += n; }
    }
    if (tok[i++] !== "MOTION" || tok[i++] !== "Frames:") throw new Error("BVH: no MOTION section");
    const F = +tok[i++];
    if (tok[i++] !== "Frame" || tok[i++] !== "Time:") throw new Error("BVH: no Frame Time");
    const dt = +tok[i++];
    const per = channels.reduce((a, c) => a + c.length, 0);
    if (!(F >= 0) || tok.length - i < F * per) throw new Error("BVH: fewer numbers than frames times channels");
    const rotations = [], root = [];
    for (let f = 0; f < F; f++) {
      const q = new Float64Array(4 * names.length);
      let rp = offsets[0].slice();
      for (let j = 0; j < names.length; j++) {
        let r = [1, 0, 0, 0];
        for (const c of channels[j]) {
          const v = +tok[i++];
          if (c[1] === "p") rp["XYZ".indexOf(c[0])] = v;
          else r = qmul(r, axisAngle(c[0] === "X" ? [1, 0, 0] : c[0] === "Y" ? [0, 1, 0] : [0, 0, 1], (v * Math.PI) / 180));
        }
        set4(q, j, r);
      }
      rotations.push(q);
      root.push(rp);
    }
    return { skeleton: { names, parents, offsets }, clip: { fps: dt > 0 ? 1 / dt : 30, rotations, root } };
  }

  /** A glTF / GLB file's first skin (bones, parents first) and its first animation sampled at
   *  30 frames/s (at most 600 frames): { skeleton, clip } as parseBVH returns. */
  function parseGLTF(buffer) {
    return new Promise((resolve, reject) => {
      const loader = new globalThis.THREE_GLTF.GLTFLoader();
      loader.parse(buffer, "", (gltf) => {
        try {
          let skin = null;
          gltf.scene.traverse((o) => { if (!skin && o.isSkinnedMesh) skin = o.skeleton; });
          let bones = skin ? skin.bones.slice() : [];
          if (!bones.length) gltf.scene.traverse((o) => { if (o.isBone) bones.push(o); });
          if (!bones.length) throw new Error("glTF: no skin or bones");
          const set = new Set(bones), roots = bones.filter((b) => !set.has(b.parent));
          if (roots.length !== 1) throw new Error("glTF: the bones have " + roots.length + " roots; one is needed");
          const order = [];
          (function walk(b) { order.push(b); for (const c of b.children) if (set.has(c)) walk(c); })(roots[0]);
          const index = new Map(order.map((b, i) => [b, i]));
          const names = order.map((b, i) => b.name || "joint" + i);
          const parents = order.map((b) => (index.has(b.parent) ? index.get(b.parent) : -1));
          const offsets = order.map((b) => [b.position.x, b.position.y, b.position.z]);
          const anim = gltf.animations[0];
          const fps = 30, F = anim ? Math.max(1, Math.min(600, Math.round(anim.duration * fps) + 1)) : 1;
          let mixer = null;
          if (anim) { mixer = new T.AnimationMixer(gltf.scene); mixer.clipAction(anim).play(); }
          const rotations = [], root = [];
          for (let f = 0; f < F; f++) {
            if (mixer) mixer.setTime(f / fps);
            const q = new Float64Array(4 * order.length);
            order.forEach((b, j) => set4(q, j, [b.quaternion.w, b.quaternion.x, b.quaternion.y, b.quaternion.z]));
            rotations.push(q);
            root.push([order[0].position.x, order[0].position.y, order[0].position.z]);
          }
          resolve({ skeleton: { names, parents, offsets }, clip: { fps, rotations, root } });
        } catch (e) {
          reject(e);
        }
      }, (e) => reject(new Error("glTF: " + (e && e.message ? e.message : e))));
    });
  }

  function findRig(names, parents) {
    // the Python side's demo_rig by names, for a dropped clip: head, left and right hands
    const isEnd = (n) => /(end|site|top)/i.test(n);
    const side = (n) => (/(^left|^l[_.\-]|[_.\-]l$|left)/i.test(n) || /^l(?=[A-Z])/.test(n) ? "left" : /(^right|^r[_.\-]|[_.\-]r$|right)/i.test(n) || /^r(?=[A-Z])/.test(n) ? "right" : "");
    const find = (re, sd) => names.findIndex((n) => re.test(n) && !isEnd(n) && (sd === undefined || side(n) === sd));
    const head = find(/head/i), lh = find(/(hand|wrist)/i, "left"), rh = find(/(hand|wrist)/i, "right");
    if (head < 0 || lh < 0 || rh < 0) return null;
    const up = (j, n) => { const o = [j]; while (o.length < n && parents[o[o.length - 1]] > 0) o.push(parents[o[o.length - 1]]); return o.reverse(); };
    const arm = up(lh, 3), ch = up(rh, 4), look = up(head, names.length);
    if (arm.length < 3 || ch.length < 3) return null;
    return { twoBone: arm, ccd: ch.slice(0, -1), ccdEnd: ch[ch.length - 1], lookAt: look, forward: [0, 0, 1] };
  }

  globalThis.jlDemoFiles = { parseBVH, parseGLTF, findRig };
})();
