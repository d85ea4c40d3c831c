// The runtime of an exported vyre kernel: plans each dispatch as the native
// backend does (src/dispatch/plan.cpp: buffers, sizes, the launch domain or
// grid, the default grid where it is proven safe, the widened shader where
// a dispatch allows it) and runs it on the page's GPUDevice. It reads the
// constant KERNEL, written before it by `vyre export web`.

const ARRAYS = {
  u32: Uint32Array, i32: Int32Array, f32: Float32Array, bool: Uint8Array, u8: Uint8Array, i8: Int8Array,
  u16: Uint16Array, i16: Int16Array, f16: Uint16Array,
};
const BYTES = {u32: 4, i32: 4, f32: 4, bool: 1, u8: 1, i8: 1, u16: 2, i16: 2, f16: 2};
const MAX_U32 = 0xffffffff;
const WIDE = 4;

function fail(message) {
  throw new Error(`vyre kernel '${KERNEL.name}': ${message}`);
}

function describe(b) {
  let s = `'${b.name}' (binding ${b.binding}, ${b.access} ${b.type}`;
  if (b.count !== 0) s += `[${b.count}]`;
  if (b.output) s += ", output";
  return s + ")";
}

function listBuffers() {
  return KERNEL.buffers.map(describe).join(", ") || "none";
}

function arrayName(type) {
  return ARRAYS[type].name;
}

function kindOf(value) {
  if (value === null) return "null";
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name}`;
  if (Array.isArray(value)) return "an Array";
  return `a ${typeof value === "object" ? value.constructor?.name ?? "object" : typeof value}`;
}

// The typed arrays a buffer takes: its own, and Uint32Array (its bits) for
// any buffer of 4-byte elements, as the C++ and Python APIs take u32 words.
// f16 travels as its bits in a Uint16Array (or a Float16Array where the
// browser has one).
function fitsType(value, b) {
  if (value instanceof ARRAYS[b.type]) return true;
  if (BYTES[b.type] === 4 && value instanceof Uint32Array) return true;
  return b.type === "f16" && typeof Float16Array !== "undefined" && value instanceof Float16Array;
}

function isCount(n) {
  return Number.isInteger(n) && n >= 0 && n <= MAX_U32;
}

// dim: n or [x], [x, y], [x, y, z]; grid: the same, in workgroups.
function readDim3(value, what) {
  const list = typeof value === "number" ? [value] : value;
  if (!Array.isArray(list) || list.length < 1 || list.length > 3 || !list.every(isCount))
    fail(`${what} must be a whole number or an array of one to three whole numbers below 2^32; got ` +
         `${JSON.stringify(value)}`);
  return [list[0], list[1] ?? 1, list[2] ?? 1];
}

function groupsFor(invocations, workgroup) {
  return Math.ceil(invocations / workgroup);
}

const LAUNCH_REMEDY = "give options.dim (the invocations to run, n or [x, y, z]) or options.grid (workgroups, " +
                      "[x, y, z])";

// The plan of one dispatch: per bound buffer, its element count and its
// contents (a typed array) or none (zero-filled); the domain and the grid.
function plan(inputs, options) {
  if (inputs === null || typeof inputs !== "object" || ArrayBuffer.isView(inputs) || Array.isArray(inputs))
    fail(`dispatch(inputs, options) takes an object of typed arrays by buffer name; got ${kindOf(inputs)}. Its ` +
         `buffers: ${listBuffers()}`);
  if (options === null || typeof options !== "object")
    fail(`dispatch's options must be an object ({sizes, dim, grid}); got ${kindOf(options)}`);
  for (const key of Object.keys(options))
    if (!["sizes", "dim", "grid"].includes(key))
      fail(`unknown dispatch option '${key}': the options are sizes ({name: elements}), dim and grid`);
  const sizes = options.sizes ?? {};
  if (sizes === null || typeof sizes !== "object" || Array.isArray(sizes))
    fail(`options.sizes must be an object of element counts by buffer name; got ${kindOf(sizes)}`);
  const byName = new Map(KERNEL.buffers.map((b, i) => [b.name, i]));
  const check = (name, what) => {
    if (KERNEL.workgroupBuffers.includes(name))
      fail(`'${name}' is a workgroup buffer: it lives on the GPU only and takes no ${what}`);
    if (!byName.has(name)) fail(`no buffer named '${name}' (given in ${what}); its buffers: ${listBuffers()}`);
  };
  for (const name of Object.keys(inputs)) check(name, "inputs");
  for (const name of Object.keys(sizes)) {
    check(name, "options.sizes");
    if (name in inputs)
      fail(`'${name}' is given both contents (inputs) and a size (options.sizes): give one`);
  }

  const buffers = KERNEL.buffers.map(b => {
    const value = inputs[b.name];
    if (value !== undefined) {
      if (!ArrayBuffer.isView(value) || value instanceof DataView || !fitsType(value, b)) {
        const also = BYTES[b.type] === 4 ? ` (or its bits as a Uint32Array)` : "";
        fail(`input for ${describe(b)} is ${kindOf(value)}; the buffer holds ${b.type}: give a ` +
             `${arrayName(b.type)}${also}, for example ${arrayName(b.type)}.from(values)`);
      }
      const elements = value.byteLength / BYTES[b.type];
      if (b.count !== 0 && elements !== b.count)
        fail(`input for ${describe(b)} has ${elements} elements; the program fixes ${b.count}`);
      return {elements, contents: value};
    }
    const size = sizes[b.name];
    if (b.access === "read" || b.access === "uniform")
      fail(`${size !== undefined ? "a size alone is not enough for" : "missing input for"} ${describe(b)}: give ` +
           `its contents as a ${arrayName(b.type)} (inputs.${b.name})`);
    if (size !== undefined) {
      if (!isCount(size)) fail(`options.sizes.${b.name} must be a whole number of elements below 2^32; got ` +
                               `${JSON.stringify(size)}`);
      if (b.count !== 0 && size !== b.count)
        fail(`size ${size} given for ${describe(b)}; the program fixes its count at ${b.count}`);
      return {elements: size, contents: null};
    }
    if (b.count === 0)
      fail(`runtime-sized ${b.output ? "output" : "buffer"} '${b.name}' needs a length: give its contents or a ` +
           `size (options.sizes = {${b.name}: n})`);
    return {elements: b.count, contents: null};
  });
  for (const [name, fixed] of Object.entries(KERNEL.fixedLengths)) {
    const i = byName.get(name);
    if (buffers[i].elements !== fixed)
      fail(`${describe(KERNEL.buffers[i])} has ${buffers[i].elements} elements; the shader was specialized for ` +
           `${fixed} (--fixed-length): dispatch it with that length, or export without the specialization`);
  }

  const workgroup = KERNEL.workgroup;
  let domain = options.dim === undefined || options.dim === null ? null : readDim3(options.dim, "options.dim");
  const givenGrid = options.grid === undefined || options.grid === null ? null : readDim3(options.grid, "options.grid");
  if (!domain && !givenGrid && KERNEL.domain !== null) {  // the declared domain
    const n = buffers[byName.get(KERNEL.domain)].elements;
    const shape = KERNEL.domainShape;
    domain = shape.length === 0 ? [n, 1, 1] : shape.length === 2 ? [shape[1], shape[0], 1] : [shape[2], shape[1], shape[0]];
  }
  let grid;
  if (domain) {
    if (givenGrid) fail("is given both a launch domain and a grid: give options.dim or options.grid, not both");
    grid = domain.map((d, a) => groupsFor(d, workgroup[a]));
  } else {
    grid = givenGrid ?? defaultGrid(buffers);
  }
  if (grid[0] * grid[1] * grid[2] > MAX_U32)
    fail(`grid ${grid.join("x")} has more than 4294967295 workgroups, the most one dispatch may have on any ` +
         "device. Use a larger workgroup size, several elements per invocation (a grid-stride loop), or several " +
         "dispatches.");
  return {buffers, domain, grid};
}

function defaultGrid(buffers) {
  const first = KERNEL.buffers.findIndex(b => b.output);
  if (first < 0) fail(`has no output buffer to size a default grid from: ${LAUNCH_REMEDY}`);
  const firstName = KERNEL.buffers[first].name;
  const proof = KERNEL.defaultGrid;
  const neither = "is given neither a launch domain nor a grid, and ";
  if (!proof.proven)
    fail(`${neither}one invocation per element of its first output '${firstName}' may leave part of its data ` +
         `undone: ${proof.whyNot}. To run every invocation it needs, ${LAUNCH_REMEDY}`);
  const grid = [groupsFor(buffers[first].elements, KERNEL.workgroup[0]), 1, 1];
  const runs = grid[0] * KERNEL.workgroup[0];
  const elements = name => buffers[KERNEL.buffers.findIndex(b => b.name === name)].elements;
  for (const checks of proof.storeChecks) {
    if (checks.some(name => elements(name) <= runs)) continue;
    const name = checks[checks.length - 1];
    fail(`${neither}the default grid (${runs} invocations, from its first output '${firstName}') stops before ` +
         `\`i < len(${name})\` does (${elements(name)} elements), so part of the data would be left undone. To ` +
         `run every invocation it needs, ${LAUNCH_REMEDY}`);
  }
  return grid;
}

// The grid on which the widened shader computes what the planned grid
// would, or null (src/dispatch/widened_grid.cpp).
function widenedGrid(planned) {
  const w = KERNEL.widening;
  if (!w) return null;
  const index = name => KERNEL.buffers.findIndex(b => b.name === name);
  const length = planned.buffers[index(w.guard)].elements;
  if (length === 0 || length % WIDE !== 0) return null;
  if (w.buffers.some(name => planned.buffers[index(name)].elements < length)) return null;
  const g = planned.grid;
  const group = KERNEL.workgroup[0];
  if (g[2] !== 1) return null;
  if (w.index === "x" && g[1] !== 1) return null;
  const invocations = g[0] * g[1] * group;
  if (invocations < length || invocations > MAX_U32) return null;
  const groups = Math.ceil(length / WIDE / group);
  if (w.index === "x") return [groups, 1, 1];
  const x = Math.min(groups, g[0]);
  return [x, Math.ceil(groups / x), 1];
}

function bindingBytes(shaderBinding, b, elements) {
  const bytes = shaderBinding.kind === "uniform" ? Math.ceil(elements / 4) * 16
                                                 : Math.ceil(elements * BYTES[b.type] / 4) * 4;
  return Math.max(bytes, 4);
}

function checkDeviceLimits(device) {
  const limits = device.limits;
  const wg = KERNEL.workgroup;
  const ask = (limit, need) => `request the device with requiredLimits: {${limit}: ${need}} (up to ` +
                               "adapter.limits." + limit + ")";
  const axes = ["maxComputeWorkgroupSizeX", "maxComputeWorkgroupSizeY", "maxComputeWorkgroupSizeZ"];
  for (let a = 0; a < 3; ++a)
    if (wg[a] > limits[axes[a]])
      fail(`its workgroup is ${wg.join("x")}, beyond this device's ${axes[a]} (${limits[axes[a]]}): ` +
           ask(axes[a], wg[a]));
  const invocations = wg[0] * wg[1] * wg[2];
  if (invocations > limits.maxComputeInvocationsPerWorkgroup)
    fail(`its workgroup runs ${invocations} invocations, beyond this device's maxComputeInvocationsPerWorkgroup ` +
         `(${limits.maxComputeInvocationsPerWorkgroup}): ${ask("maxComputeInvocationsPerWorkgroup", invocations)}, ` +
         "or export it with a smaller --workgroup");
  const storage = KERNEL.buffers.filter(b => b.access !== "uniform").length;
  if (storage > limits.maxStorageBuffersPerShaderStage)
    fail(`it binds ${storage} storage buffers, beyond this device's maxStorageBuffersPerShaderStage ` +
         `(${limits.maxStorageBuffersPerShaderStage}): ${ask("maxStorageBuffersPerShaderStage", storage)}`);
  if (KERNEL.workgroupBytes > limits.maxComputeWorkgroupStorageSize)
    fail(`its workgroup buffers take ${KERNEL.workgroupBytes} bytes, beyond this device's ` +
         `maxComputeWorkgroupStorageSize (${limits.maxComputeWorkgroupStorageSize}): ` +
         ask("maxComputeWorkgroupStorageSize", KERNEL.workgroupBytes));
  if (KERNEL.f16 && !device.features.has("shader-f16"))
    fail("it computes in f16, which needs the device feature shader-f16: where adapter.features.has(" +
         "\"shader-f16\"), request the device with requiredFeatures: [\"shader-f16\"]; else convert the data to " +
         "f32 and export an f32 program");
}

function checkPlanLimits(device, shader, planned) {
  const limits = device.limits;
  for (let a = 0; a < 3; ++a)
    if (planned.grid[a] > limits.maxComputeWorkgroupsPerDimension)
      fail(`grid ${planned.grid.join("x")} has ${planned.grid[a]} workgroups on axis ${"xyz"[a]}, beyond this ` +
           `device's maxComputeWorkgroupsPerDimension (${limits.maxComputeWorkgroupsPerDimension}). Give a smaller ` +
           "grid and have the program cover the elements in a grid-stride loop, spread the grid over y and z, or " +
           "use a larger workgroup size.");
  KERNEL.buffers.forEach((b, i) => {
    const bytes = bindingBytes(shader.bindings[i], b, planned.buffers[i].elements);
    const uniform = shader.bindings[i].kind === "uniform";
    const limit = uniform ? "maxUniformBufferBindingSize" : "maxStorageBufferBindingSize";
    const most = Math.min(limits[limit], limits.maxBufferSize);
    if (bytes > most)
      fail(`buffer '${b.name}' (${planned.buffers[i].elements} ${b.type} elements) needs ${bytes} bytes, beyond ` +
           `this device's ${bytes > limits[limit] ? limit : "maxBufferSize"} (${most} bytes). ` +
           (uniform ? "Declare it a read buffer instead of a uniform one." : "Split the data over several dispatches."));
  });
}

class Kernel {
  #device;
  #pipelines = new Map();  // by shader role: {shader, pipeline, layouts, bindGroups, key}
  #slots;                  // per bound buffer: {buffer, capacity}
  #lengths = null;         // the lengths uniform: {buffer, capacity}
  #staging;                // per bound buffer (outputs only): {buffer, capacity}
  #queue = Promise.resolve();
  #disposed = false;
  #stats = {dispatches: 0, pipelines: 0, buffers: 0, bindGroups: 0, shader: null};

  constructor(device) {
    this.#device = device;
    this.#slots = KERNEL.buffers.map(() => null);
    this.#staging = KERNEL.buffers.map(() => null);
  }

  get name() { return KERNEL.name; }
  get buffers() { return INFO.buffers; }
  // How many dispatches ran, how many pipelines, buffers and bind groups
  // they made (a dispatch whose sizes fit the last one's makes none), and
  // the shader the last one ran: "base", "wide" or "guard".
  get stats() { return {...this.#stats}; }

  async prepare(role) {
    const known = this.#pipelines.get(role);
    if (known) return known;
    const shader = KERNEL.shaders.find(s => s.role === role);
    const device = this.#device;
    device.pushErrorScope("validation");
    const module = device.createShaderModule({label: `vyre ${KERNEL.name} (${role})`, code: shader.wgsl});
    const info = await module.getCompilationInfo();
    const errors = info.messages.filter(m => m.type === "error").map(m => `${m.lineNum}:${m.linePos}: ${m.message}`);
    const groups = [];
    const entries = shader.bindings.map((s, i) => ({group: s.group, binding: s.binding, type: s.kind, index: i}));
    if (shader.lengthsBytes > 0) entries.push({group: 1, binding: 0, type: "uniform", index: -1});
    for (const e of entries) (groups[e.group] ??= []).push(e);
    for (let g = 0; g < groups.length; ++g) groups[g] ??= [];
    const layouts = groups.map(list => device.createBindGroupLayout({
      entries: list.map(e => ({binding: e.binding, visibility: GPUShaderStage.COMPUTE, buffer: {type: e.type}})),
    }));
    let pipeline = null;
    let failure = null;
    if (errors.length === 0) {
      try {
        pipeline = await device.createComputePipelineAsync({
          label: `vyre ${KERNEL.name} (${role})`,
          layout: device.createPipelineLayout({bindGroupLayouts: layouts}),
          compute: {module, entryPoint: "main"},
        });
      } catch (e) {
        failure = e.message;
      }
    }
    const scope = await device.popErrorScope();
    if (errors.length) fail(`this browser's WebGPU refused its WGSL (${role} shader): ${errors.join("; ")}`);
    if (failure || scope) fail(`this browser's WebGPU refused its pipeline (${role} shader): ${failure ?? scope.message}`);
    const prepared = {shader, pipeline, layouts, groups, bindGroups: [], bound: []};
    this.#pipelines.set(role, prepared);
    ++this.#stats.pipelines;
    return prepared;
  }

  dispatch(inputs, options = {}) {
    // One dispatch at a time: they share the kernel's buffers.
    const run = this.#queue.then(() => this.#dispatch(inputs, options));
    this.#queue = run.catch(() => {});
    return run;
  }

  #ensure(slot, bytes, usage) {
    if (slot && slot.capacity >= bytes) return slot;
    slot?.buffer.destroy();
    ++this.#stats.buffers;
    return {buffer: this.#device.createBuffer({label: `vyre ${KERNEL.name}`, size: bytes, usage}), capacity: bytes};
  }

  async #dispatch(inputs, options) {
    if (this.#disposed) fail("dispose() was called: create the kernel again (createKernel(device))");
    const planned = plan(inputs, options);
    let role = "base";
    if (planned.domain) {
      role = "guard";
    } else if (KERNEL.widening) {
      const wide = widenedGrid(planned);
      if (wide) {
        role = "wide";
        planned.grid = wide;
      }
    }
    const device = this.#device;
    const lost = await Promise.race([device.lost, Promise.resolve(null)]);
    if (lost) fail(`its GPUDevice was lost (${lost.message || lost.reason}): create a new device and kernel`);
    const prepared = await this.prepare(role);
    const shader = prepared.shader;
    checkPlanLimits(device, shader, planned);

    device.pushErrorScope("out-of-memory");
    device.pushErrorScope("validation");
    let reads;
    try {
      reads = this.#encode(prepared, planned);
    } finally {
      const validation = await device.popErrorScope();
      const memory = await device.popErrorScope();
      if (validation || memory) fail(`this browser's WebGPU failed the dispatch: ${(validation ?? memory).message}`);
    }

    const outputs = {};
    for (const {b, i, bytes, elementBytes} of reads) {
      const staging = this.#staging[i].buffer;
      await staging.mapAsync(GPUMapMode.READ, 0, bytes);
      const copy = new ArrayBuffer(elementBytes);
      new Uint8Array(copy).set(new Uint8Array(staging.getMappedRange(0, bytes), 0, elementBytes));
      staging.unmap();
      outputs[b.name] = new ARRAYS[b.type](copy);
    }
    ++this.#stats.dispatches;
    this.#stats.shader = role;
    return outputs;
  }

  // Records and submits one planned dispatch; returns the outputs to read.
  #encode(prepared, planned) {
    const device = this.#device;
    const shader = prepared.shader;
    const encoder = device.createCommandEncoder();
    const sizes = KERNEL.buffers.map((b, i) => bindingBytes(shader.bindings[i], b, planned.buffers[i].elements));
    KERNEL.buffers.forEach((b, i) => {
      const uniform = b.access === "uniform";
      const usage = uniform ? GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST
                            : GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
      this.#slots[i] = this.#ensure(this.#slots[i], sizes[i], usage);
      const buffer = this.#slots[i].buffer;
      const contents = planned.buffers[i].contents;
      if (!contents) {
        encoder.clearBuffer(buffer, 0, sizes[i]);
        return;
      }
      // The contents, then zeros to the binding's end (a reused buffer
      // holds the last dispatch's data there).
      const bytes = new Uint8Array(contents.buffer, contents.byteOffset, contents.byteLength);
      const whole = bytes.byteLength - bytes.byteLength % 4;
      if (whole > 0) device.queue.writeBuffer(buffer, 0, bytes, 0, whole);
      if (whole < sizes[i]) {
        const tail = new Uint8Array(sizes[i] - whole);
        tail.set(bytes.subarray(whole));
        device.queue.writeBuffer(buffer, whole, tail);
      }
    });
    if (shader.lengthsBytes > 0) {
      const words = new Uint32Array(shader.lengthsBytes / 4);
      shader.lengthSlots.forEach((name, s) => {
        words[s] = planned.buffers[KERNEL.buffers.findIndex(b => b.name === name)].elements;
      });
      if (shader.domainGuard) words.set(planned.domain, shader.lengthSlots.length);
      this.#lengths = this.#ensure(this.#lengths, shader.lengthsBytes, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
      device.queue.writeBuffer(this.#lengths.buffer, 0, words);
    }

    const pass = encoder.beginComputePass({label: `vyre ${KERNEL.name}`});
    pass.setPipeline(prepared.pipeline);
    prepared.groups.forEach((list, g) => {
      const resources = list.map(e => e.index < 0 ? {buffer: this.#lengths.buffer, size: shader.lengthsBytes}
                                                  : {buffer: this.#slots[e.index].buffer, size: sizes[e.index]});
      const same = prepared.bound[g] && prepared.bound[g].every((r, k) =>
          r.buffer === resources[k].buffer && r.size === resources[k].size);
      if (!same) {
        prepared.bindGroups[g] = device.createBindGroup({
          layout: prepared.layouts[g],
          entries: list.map((e, k) => ({binding: e.binding, resource: resources[k]})),
        });
        prepared.bound[g] = resources;
        ++this.#stats.bindGroups;
      }
      pass.setBindGroup(g, prepared.bindGroups[g]);
    });
    const [x, y, z] = planned.grid;
    if (x > 0 && y > 0 && z > 0) pass.dispatchWorkgroups(x, y, z);
    pass.end();

    const reads = [];
    KERNEL.buffers.forEach((b, i) => {
      if (!b.output) return;
      const elementBytes = planned.buffers[i].elements * BYTES[b.type];
      const bytes = Math.max(4, Math.ceil(elementBytes / 4) * 4);
      this.#staging[i] = this.#ensure(this.#staging[i], bytes, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
      encoder.copyBufferToBuffer(this.#slots[i].buffer, 0, this.#staging[i].buffer, 0, bytes);
      reads.push({b, i, bytes, elementBytes});
    });
    device.queue.submit([encoder.finish()]);
    return reads;
  }

  // Frees the kernel's GPU buffers; later dispatches are refused.
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const slot of [...this.#slots, ...this.#staging, this.#lengths]) slot?.buffer.destroy();
    this.#slots = this.#slots.map(() => null);
    this.#staging = this.#staging.map(() => null);
    this.#lengths = null;
    this.#pipelines.clear();
  }
}

// What the module holds: the program's name, identity and buffers, and
// the cache key of each shader.
export const INFO = Object.freeze({
  name: KERNEL.name,
  digest: KERNEL.digest,
  target: KERNEL.target,
  vyre: KERNEL.vyre,
  workgroup: KERNEL.workgroup,
  f16: KERNEL.f16,
  buffers: Object.freeze(KERNEL.buffers.map(b => Object.freeze({
    name: b.name, binding: b.binding, access: b.access, type: b.type, count: b.count, output: b.output,
    array: arrayName(b.type),
  }))),
  shaders: Object.freeze(KERNEL.shaders.map(s => Object.freeze({role: s.role, key: s.key}))),
});

// The kernel on `device` (a GPUDevice): its first shader compiled, ready to
// dispatch. Rejects with what to change when the device cannot run it.
export async function createKernel(device) {
  if (!device || typeof device.createComputePipelineAsync !== "function")
    fail(`createKernel(device) takes a GPUDevice (from (await navigator.gpu.requestAdapter()).requestDevice()); ` +
         `got ${kindOf(device)}`);
  checkDeviceLimits(device);
  const kernel = new Kernel(device);
  await kernel.prepare(KERNEL.shaders[0].role);
  return kernel;
}
