/*
 * jointlimits-wasm: the jointlimits C++ core (cpp/include/jointlimits) compiled to WebAssembly,
 * for three.js games and web tools. Quaternions are (w, x, y, z), flat Float64Arrays (or plain
 * arrays) of 4 numbers per rotation; vectors 3 numbers. The numbers are the Python package's:
 * the same C++ computes them.
 *
 *   const jl = await JointLimitsWasm.load();           // browser: <script src="jointlimits.js">
 *   const jl = await require("jointlimits-wasm").load(); // Node
 *   const lim = jl.loadLimits(jsonTextOrObject);        // a limits file written by jointlimits
 *   const limited = jl.project(lim, pose);              // pose: J*4 numbers (or frames*J*4)
 *
 * Functions: loadLimits, project, projectJoint, projectShape, swingTwist, fk, twoBone, ccd,
 * lookAt (documented below and in README.md). Bad input throws an Error with a one-line message.
 * MIT licence (see the jointlimits repository's LICENSE).
 */
(function (root, factory) {
  if (typeof module === "object" && module.exports) module.exports = factory(root);
  else root.JointLimitsWasm = factory(root);
})(typeof globalThis !== "undefined" ? globalThis : this, function (root) {
  "use strict";

  const F64 = Float64Array;

  function flat(x, what) {
    if (x instanceof F64) return x;
    if (ArrayBuffer.isView(x)) return F64.from(x);
    if (!Array.isArray(x)) throw new Error(what + ": expected an array of numbers");
    const out = new F64(x.flat(Infinity));
    return out;
  }

  function finite(a, what) {
    for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i])) throw new Error(what + ": values must be finite");
    return a;
  }

  function sized(a, n, what) {
    if (a.length !== n) throw new Error(what + ": expected " + n + " numbers, got " + a.length);
    return a;
  }

  /** The record the C binding reads for one compiled shape object ({code, f, axes, mins, maxs, G, bnd}). */
  function shapeRecord(s, what) {
    if (!s || typeof s !== "object") throw new Error(what + ": expected an object");
    const out = [Number(s.code)];
    const f = flat(s.f, what + ".f");
    if (f.length !== 16) throw new Error(what + ".f: expected 16 numbers");
    out.push(...f);
    for (const k of ["axes", "mins", "maxs", "G", "bnd"]) {
      const a = flat(s[k] || [], what + "." + k);
      out.push(a.length, ...a);
    }
    return out;
  }

  /** The record of one compiled limit object (a limits file joint's "compiled"). */
  function limitRecord(c, what) {
    if (!c || typeof c !== "object") throw new Error(what + ": expected an object");
    if (c.version !== 1) throw new Error(what + ": unsupported compiled version");
    const r = sized(flat(c.reference, what + ".reference"), 4, what + ".reference");
    const t = sized(flat(c.twist_axis, what + ".twist_axis"), 3, what + ".twist_axis");
    const tw = sized(flat(c.twist, what + ".twist"), 2, what + ".twist");
    return [Number(c.mode), c.covers ? 1 : 0, ...r, ...t, ...tw, ...shapeRecord(c.a, what + ".a"), ...shapeRecord(c.b, what + ".b")];
  }

  function wrap(M) {
    const error = () => M.UTF8ToString(M._jl_error());

    /**
     * Call a C function with arrays: ins are Float64Arrays / Int32Arrays (or null), outs are
     * [type, length] pairs; returns [rc, ...outs]. Memory is freed before returning.
     */
    function call(fn, ins, outs, scalars) {
      const ptrs = [];
      try {
        const inP = ins.map((a) => {
          if (a === null) return 0;
          const p = M._malloc(Math.max(8, a.byteLength));
          ptrs.push(p);
          return p;
        });
        const outP = outs.map(([T, n]) => {
          const p = M._malloc(Math.max(8, n * T.BYTES_PER_ELEMENT));
          ptrs.push(p);
          return p;
        });
        ins.forEach((a, i) => {
          if (a === null) return;
          if (a instanceof Int32Array) M.HEAP32.set(a, inP[i] >> 2);
          else M.HEAPF64.set(a, inP[i] >> 3);
        });
        const rc = fn(...scalars(inP, outP));
        if (rc < 0) throw new Error(error());
        const res = outs.map(([T, n], i) =>
          T === Int32Array ? M.HEAP32.slice(outP[i] >> 2, (outP[i] >> 2) + n) : M.HEAPF64.slice(outP[i] >> 3, (outP[i] >> 3) + n)
        );
        return [rc, ...res];
      } finally {
        for (const p of ptrs) M._free(p);
      }
    }

    function record(fn, rec, pre) {
      const a = new F64(rec);
      const p = M._malloc(Math.max(8, a.byteLength));
      try {
        M.HEAPF64.set(a, p >> 3);
        const h = fn(...pre, p, a.length);
        if (h < 0) throw new Error(error());
        return h;
      } finally {
        M._free(p);
      }
    }

    /**
     * Parse a limits file (its JSON text or the parsed object). Returns a Limits object:
     * { names, parents, index(name), limited (joint indices with a limit), handle, free() }.
     * Joints whose limit has no compiled form are refused unless disabled, as the C++ reader does.
     */
    function loadLimits(json) {
      let d = json;
      if (typeof json === "string") {
        try {
          d = JSON.parse(json);
        } catch (e) {
          throw new Error("corrupt limits file: " + e.message);
        }
      }
      if (!d || typeof d !== "object" || d.schema !== "jointlimits/limits") throw new Error("not a jointlimits limits file");
      const sk = d.skeleton || {};
      const names = sk.names, parents = sk.parents;
      if (!Array.isArray(names) || !Array.isArray(parents) || names.length !== parents.length || names.length === 0)
        throw new Error("skeleton: names and parents must be arrays of the same, nonzero length");
      parents.forEach((p, j) => {
        if (j === 0 ? p !== -1 : !(Number.isInteger(p) && p >= 0 && p < j))
          throw new Error("skeleton: parents must list the root first (-1) and every parent before its child");
      });
      const h = M._jl_set_new(names.length);
      if (h < 0) throw new Error(error());
      const limited = [];
      try {
        const seen = new Set();
        for (const e of d.joints || []) {
          const j = names.indexOf(e.name);
          if (j < 0) throw new Error("joint '" + e.name + "' is not in the skeleton");
          if (seen.has(j)) throw new Error("joint '" + e.name + "' is listed twice");
          seen.add(j);
          if (!e.enabled) continue;
          if (!e.compiled) throw new Error("joint '" + e.name + "': its limit kind has no compiled form (disable it to skip)");
          try {
            record(M._jl_set_add, limitRecord(e.compiled, "joint '" + e.name + "'"), [h, j]);
          } catch (err) {
            throw new Error(err.message.startsWith("joint '") ? err.message : "joint '" + e.name + "': " + err.message);
          }
          limited.push(j);
        }
      } catch (err) {
        M._jl_set_free(h);
        throw err;
      }
      return {
        names: names.slice(),
        parents: parents.slice(),
        limited,
        handle: h,
        index: (name) => names.indexOf(name),
        free: () => M._jl_set_free(h),
      };
    }

    /**
     * Limit every limited joint of poses (frames*J*4 numbers, the skeleton's order) -> a new
     * Float64Array. options: {soft: false, falloff: 1, radius: 0.1} (softened projection when soft).
     */
    function project(limits, rotations, options = {}) {
      const J = limits.names.length;
      const q = finite(flat(rotations, "rotations"), "rotations");
      if (q.length % (4 * J) !== 0) throw new Error("rotations: expected frames * " + J + " * 4 numbers, got " + q.length);
      const frames = q.length / (4 * J);
      const soft = options.soft ? 1 : 0;
      return call(M._jl_set_project, [q], [[F64, q.length]], (i, o) => [limits.handle, i[0], frames, o[0], soft, options.falloff ?? 1.0, options.radius ?? 0.1])[1];
    }

    /** One joint's limit step on n rotations (n*4 numbers) -> a new Float64Array (unchanged if the joint has no limit). */
    function projectJoint(limits, joint, rotations) {
      const j = typeof joint === "string" ? limits.index(joint) : joint;
      if (!(j >= 0 && j < limits.names.length)) throw new Error("no joint " + joint);
      const q = flat(rotations, "rotations");
      if (q.length % 4) throw new Error("rotations: expected n * 4 numbers");
      return call(M._jl_joint_project, [q], [[F64, q.length]], (i, o) => [limits.handle, j, i[0], q.length / 4, o[0]])[1];
    }

    /** Closest points of a compiled shape object ({code, f, axes, ...}) to limit-space points (n*3). */
    function projectShape(shape, points) {
      const h = record(M._jl_shape_new, shapeRecord(shape, "shape"), []);
      try {
        const p = finite(flat(points, "points"), "points");
        if (p.length % 3) throw new Error("points: expected n * 3 numbers");
        return call(M._jl_shape_project, [p], [[F64, p.length]], (i, o) => [h, i[0], p.length / 3, o[0]])[1];
      } finally {
        M._jl_shape_free(h);
      }
    }

    /** Swing and twist of rotations (n*4) about a unit axis: {swing, twist}. */
    function swingTwist(rotations, axis) {
      const q = flat(rotations, "rotations");
      const r = call(M._jl_swing_twist, [q, sized(flat(axis, "axis"), 3, "axis")], [[F64, q.length], [F64, q.length]], (i, o) => [i[0], q.length / 4, i[1], o[0], o[1]]);
      return { swing: r[1], twist: r[2] };
    }

    /** Forward kinematics: local rotations (frames*J*4), offsets (frames*J*3), parents [J] -> {rotations, positions} (global). */
    function fk(rotations, offsets, parents) {
      const J = parents.length;
      const r = flat(rotations, "rotations"), p = flat(offsets, "offsets");
      const frames = r.length / (4 * J);
      if (!Number.isInteger(frames) || p.length !== frames * J * 3) throw new Error("fk: rotations and offsets must be frames * J * 4 and * 3 numbers");
      const res = call(M._jl_fk, [r, p, Int32Array.from(parents)], [[F64, r.length], [F64, p.length]], (i, o) => [i[0], i[1], i[2], frames, J, o[0], o[1]]);
      return { rotations: res[1], positions: res[2] };
    }

    /**
     * Geometric two-bone IK (jointlimits.ik.two_bone): {root, mid, end, target, pole?} global
     * positions, parentRotation (the root's parent, global), rootLocal, midLocal -> {rootLocal,
     * midLocal, knee, end, case} (case 0 reached, 1 too close, 2 too far).
     */
    function twoBone(a) {
      const v = (k) => sized(flat(a[k], k), 3, k), q = (k) => sized(flat(a[k], k), 4, k);
      const ins = [v("root"), v("mid"), v("end"), v("target"), a.pole ? v("pole") : null, q("parentRotation"), q("rootLocal"), q("midLocal")];
      const r = call(M._jl_two_bone, ins, [[F64, 4], [F64, 4], [F64, 3], [F64, 3], [F64, 1]], (i, o) => [...i, 1, ...o]);
      if (r[5][0] < 0) throw new Error("two-bone: zero-length bone");
      return { rootLocal: r[1], midLocal: r[2], knee: r[3], end: r[4], case: r[5][0] };
    }

    /**
     * CCD over a chain (jointlimits.ik.ccd): {baseRotation, basePosition (global, of the chain's
     * parent), offsets ((n+1)*3: each chain joint's offset, then the end's), target, rotations
     * (n*4 initial locals), limits?, joints? (skeleton index of each chain joint, for its limit),
     * tolerance = 0.001, maxIterations = 20, stallIterations = 5, stallRatio = 0.002} ->
     * {rotations, success, iterations, error}.
     */
    function ccd(a) {
      const init = flat(a.rotations, "rotations");
      const n = init.length / 4;
      if (!(n >= 1 && Number.isInteger(n))) throw new Error("ccd: rotations must be n * 4 numbers");
      const off = sized(flat(a.offsets, "offsets"), 3 * (n + 1), "offsets");
      const idx = Int32Array.from(a.joints || new Array(n).fill(-1));
      if (idx.length !== n) throw new Error("ccd: joints must list one index per chain joint");
      const opts = new F64([a.tolerance ?? 1e-3, a.maxIterations ?? 20, a.stallIterations ?? 5, a.stallRatio ?? 0.002]);
      const ins = [sized(flat(a.baseRotation, "baseRotation"), 4, "baseRotation"), sized(flat(a.basePosition, "basePosition"), 3, "basePosition"), off, idx, sized(flat(a.target, "target"), 3, "target"), finite(init, "rotations"), opts];
      const h = a.limits ? a.limits.handle : 0;
      const r = call(M._jl_ccd, ins, [[F64, 4 * n], [F64, 3]], (i, o) => [h, i[0], i[1], i[2], n, i[3], i[4], i[5], i[6], o[0], o[1]]);
      return { rotations: r[1], success: r[2][0] === 1, iterations: r[2][1], error: r[2][2] };
    }

    /**
     * Look-at over a chain (jointlimits.ik.look_at.look_at_chain, one pose): {rotations (J*4
     * locals), offsets (J*3), parents, chain (joint indices, lowest first, head last), target,
     * forward = [0, 0, 1] (the head's local gaze axis), limits?, iterations = 2, inner = 8} -> new
     * locals (J*4). With limits, lower joints use their range before the ones above turn.
     */
    function lookAt(a) {
      const J = a.parents.length;
      const r = sized(finite(flat(a.rotations, "rotations"), "rotations"), 4 * J, "rotations");
      const p = sized(flat(a.offsets, "offsets"), 3 * J, "offsets");
      const chain = Int32Array.from(a.chain);
      const ins = [r, p, Int32Array.from(a.parents), chain, sized(finite(flat(a.target, "target"), "target"), 3, "target"), sized(flat(a.forward || [0, 0, 1], "forward"), 3, "forward")];
      const h = a.limits ? a.limits.handle : 0;
      return call(M._jl_look_at, ins, [[F64, 4 * J]], (i, o) => [h, i[0], i[1], i[2], J, i[3], chain.length, i[4], i[5], a.iterations ?? 2, a.inner ?? 8, o[0]])[1];
    }

    return { module: M, shapeKinds: M._jl_shape_kinds(), loadLimits, project, projectJoint, projectShape, swingTwist, fk, twoBone, ccd, lookAt };
  }

  /**
   * Instantiate the core. options: {wasmBinary (ArrayBuffer/Uint8Array), locateFile (name ->
   * URL)}; without them the browser fetches dist/jlcore.wasm beside the page's script (or the
   * base64 copy root.JL_WASM_BASE64 when present) and Node reads dist/jlcore.wasm.
   */
  async function load(options = {}) {
    let factory = root.createJLCore;
    const opts = Object.assign({}, options);
    if (typeof module === "object" && module.exports && typeof require === "function") {
      const path = require("path");
      // the npm package keeps the core in dist/; the page's folder (and the Python package) beside this file
      const fs = require("fs");
      const dir = fs.existsSync(path.join(__dirname, "dist", "jlcore.js")) ? path.join(__dirname, "dist") : __dirname;
      factory = factory || require(path.join(dir, "jlcore.js"));
      if (!opts.wasmBinary && !opts.locateFile) opts.wasmBinary = fs.readFileSync(path.join(dir, "jlcore.wasm"));
    }
    if (!factory) throw new Error("jlcore.js is not loaded (include it before jointlimits.js)");
    if (!opts.wasmBinary && typeof root.JL_WASM_BASE64 === "string") {
      const s = root.atob(root.JL_WASM_BASE64);
      const b = new Uint8Array(s.length);
      for (let i = 0; i < s.length; i++) b[i] = s.charCodeAt(i);
      opts.wasmBinary = b;
    }
    return wrap(await factory(opts));
  }

  return { load, shapeRecord, limitRecord };
});
