// index.html: a page that opens the browser's WebGPU, runs the kernel on
// example inputs (a run file's when given) and shows the inputs, the
// outputs and the time of each dispatch.
#include "web/web_files.hpp"

namespace vyre::web {

std::string html_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

// JSON inside a <script>: no "</" can end it early.
std::string script_json(const nlohmann::json& j) {
  std::string text = j.dump(1);
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

constexpr const char* kStyle = R"css(
    body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem;
           color: #1d2330; background: #f6f7fb; }
    h1 { font-size: 1.6rem; margin-bottom: .2rem; }
    h1 small { font-weight: normal; color: #5b6477; font-size: .9rem; }
    h2 { font-size: 1.1rem; margin-top: 1.6rem; border-bottom: 2px solid #3d5afe; padding-bottom: .2rem; }
    table { border-collapse: collapse; width: 100%; background: #fff; }
    th, td { text-align: left; vertical-align: top; padding: .35rem .6rem; border: 1px solid #d8dcea; }
    th { background: #e8ebfa; white-space: nowrap; }
    td.values { font-family: ui-monospace, monospace; font-size: .85rem; word-break: break-all; }
    #status { padding: .6rem .8rem; border-radius: 4px; background: #fff3cd; }
    #status[data-state="done"] { background: #d9f5e1; }
    #status[data-state="error"] { background: #fbdada; }
    .match { color: #11772f; } .differ { color: #b3261e; }
)css";

constexpr const char* kScript = R"js(
import { createKernel, INFO } from "./kernel.js";

const SHOWN = 256;  // values shown per buffer
const LIMITS = ["maxComputeInvocationsPerWorkgroup", "maxComputeWorkgroupSizeX", "maxComputeWorkgroupSizeY",
                "maxComputeWorkgroupSizeZ", "maxComputeWorkgroupStorageSize", "maxStorageBufferBindingSize",
                "maxBufferSize", "maxComputeWorkgroupsPerDimension", "maxStorageBuffersPerShaderStage"];
const $ = id => document.getElementById(id);

function decode(entry) {
  const bytes = Uint8Array.from(atob(entry.base64), c => c.charCodeAt(0));
  return new globalThis[entry.array](bytes.buffer);
}

function shown(values) {
  const list = Array.from(values.subarray(0, SHOWN), String).join(", ");
  return values.length > SHOWN ? `${list}, … (${values.length} values)` : list;
}

function textRow(table, name, kind, text, extra) {
  const tr = document.createElement("tr");
  const cells = [document.createElement("th"), document.createElement("td"), document.createElement("td")];
  cells[0].textContent = name;
  cells[1].textContent = kind;
  cells[2].className = "values";
  cells[2].dataset.buffer = name;
  cells[2].textContent = text;
  tr.append(...cells);
  if (extra) tr.append(extra);
  $(table).append(tr);
}

function row(table, name, values, extra) {
  textRow(table, name, `${values.constructor.name}[${values.length}]`, shown(values), extra);
}

// The run file's expected values, within its tolerance for floats.
function check(name, got) {
  const want = EXAMPLE.expect[name];
  const td = document.createElement("td");
  if (!want) return null;
  const expected = decode(want);
  const float = ["f32", "f16"].includes(INFO.buffers.find(b => b.name === name).type);
  const tolerance = EXAMPLE.tolerance[name] ?? {abs: 0, rel: 0};
  let differs = expected.length !== got.length ? 0 : -1;
  for (let k = 0; differs < 0 && k < got.length; ++k) {
    const a = got[k], b = expected[k];
    const same = float ? (Number.isNaN(a) && Number.isNaN(b)) || Math.abs(a - b) <= tolerance.abs + tolerance.rel * Math.abs(b)
                       : a === b;
    if (!same) differs = k;
  }
  td.className = differs < 0 ? "match" : "differ";
  td.dataset.check = differs < 0 ? "match" : "differ";
  td.textContent = differs < 0 ? "✓ as the run file expects"
                   : `✗ element ${differs}: ${got[differs]}, the run file expects ${expected[differs]}`;
  return td;
}

async function main() {
  const status = $("status");
  try {
    if (!navigator.gpu)
      throw new Error("this browser has no WebGPU (navigator.gpu is missing): open the page in a browser with WebGPU, " +
                      "served over http(s) or from localhost");
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) throw new Error("the browser offers no WebGPU adapter");
    const requiredFeatures = [];
    if (INFO.f16) {
      if (!adapter.features.has("shader-f16"))
        throw new Error("this kernel computes in f16, and this browser's adapter has no shader-f16 feature");
      requiredFeatures.push("shader-f16");
    }
    const requiredLimits = {};
    for (const name of LIMITS) requiredLimits[name] = adapter.limits[name];
    const device = await adapter.requestDevice({requiredFeatures, requiredLimits});
    const info = adapter.info ?? {};
    $("adapter").textContent = [info.vendor, info.architecture, info.description].filter(Boolean).join(" ") || "unnamed";
    const kernel = await createKernel(device);
    const inputs = {};
    for (const [name, entry] of Object.entries(EXAMPLE.inputs)) {
      inputs[name] = decode(entry);
      row("inputs", name, inputs[name]);
    }
    for (const [name, size] of Object.entries(EXAMPLE.options.sizes ?? {}))
      textRow("inputs", name, "size", `${size} elements, zero-filled`);
    $("launch").textContent = JSON.stringify(EXAMPLE.options);
    let outputs;
    for (let run = 1; run <= 3; ++run) {
      const start = performance.now();
      outputs = await kernel.dispatch(inputs, EXAMPLE.options);
      const ms = performance.now() - start;
      const li = document.createElement("li");
      li.textContent = `dispatch ${run}: ${ms.toFixed(2)} ms` + (run === 1 ? " (the first: buffers made)" : "");
      li.dataset.ms = String(ms);
      $("times").append(li);
    }
    for (const [name, values] of Object.entries(outputs)) row("outputs", name, values, check(name, values));
    const stats = kernel.stats;
    $("stats").textContent = `${stats.dispatches} dispatches made ${stats.pipelines} pipeline(s), ` +
                             `${stats.buffers} buffer(s) and ${stats.bindGroups} bind group(s)`;
    kernel.dispose();
    status.textContent = "Done";
    status.dataset.state = "done";
  } catch (e) {
    status.textContent = `Error: ${e.message}`;
    status.dataset.state = "error";
  }
}
main();
)js";

}  // namespace

std::string demo_page(const CheckedProgram& program, const nlohmann::json& example) {
  const std::string name = html_escape(program.name());
  std::string out;
  out += "<!doctype html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\">\n";
  out += "  <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "  <title>vyre kernel " + name + "</title>\n  <style>" + std::string(kStyle) + "  </style>\n</head>\n<body>\n";
  out += "  <h1>" + name + " <small>a vyre kernel on WebGPU</small></h1>\n";
  out += "  <p>Adapter: <span id=\"adapter\">…</span>. Inputs: " +
         html_escape(example.value("source", std::string("made up"))) + ". Launch: <code id=\"launch\"></code></p>\n";
  out += "  <p id=\"status\" data-state=\"running\">Running…</p>\n";
  out += "  <h2>Inputs</h2>\n  <table id=\"inputs\"></table>\n";
  out += "  <h2>Outputs</h2>\n  <table id=\"outputs\"></table>\n";
  out += "  <h2>Dispatches</h2>\n  <ol id=\"times\"></ol>\n  <p id=\"stats\"></p>\n";
  out += "  <script type=\"module\">\nconst EXAMPLE = " + script_json(example) + ";\n" + kScript + "  </script>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace vyre::web
