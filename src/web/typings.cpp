// kernel.d.ts: the module's TypeScript types, naming each buffer with the
// typed array it takes and gives.
#include <cctype>

#include "web/web_files.hpp"

namespace vyre::web {
namespace {

std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

// A property's name as TypeScript writes it: bare when it is an identifier.
std::string key(const std::string& s) {
  const auto identifier_char = [](char c, bool first) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
           (!first && std::isdigit(static_cast<unsigned char>(c)));
  };
  bool bare = !s.empty();
  for (size_t i = 0; i < s.size() && bare; ++i) bare = identifier_char(s[i], i == 0);
  return bare ? s : quoted(s);
}

// What an input of this buffer may be: its own typed array, and a
// Uint32Array of the bits for any 4-byte type (kernel_runtime.js, fitsType).
std::string input_types(ScalarType type) {
  std::string t = typed_array(type);
  if (element_bytes(type) == 4 && type != ScalarType::U32) t += " | Uint32Array";
  return t;
}

}  // namespace

std::string kernel_typings(const CheckedProgram& program) {
  const Program& p = program.program();
  std::string inputs, sizes, outputs, names;
  for (const Buffer* b : program.bound_buffers()) {
    const std::string comment = "  /** " + std::string(to_string(b->access)) + " " + std::string(to_string(b->type)) +
                                (b->count ? "[" + std::to_string(b->count) + "]" : std::string("[] (runtime-sized)")) +
                                ", binding " + std::to_string(*b->binding) + (b->output ? ", output" : "") + " */\n";
    const bool needs_contents = b->access == Access::Read || b->access == Access::Uniform;
    inputs += comment + "  readonly " + key(b->name) + (needs_contents ? "" : "?") + ": " + input_types(b->type) +
              ";\n";
    if (!needs_contents) sizes += "  readonly " + key(b->name) + "?: number;\n";
    if (b->output) outputs += comment + "  " + key(b->name) + ": " + typed_array(b->type) + ";\n";
    names += (names.empty() ? "" : " | ") + quoted(b->name);
  }
  if (names.empty()) names = "never";
  std::string out;
  out += "// Types of the vyre kernel '" + p.name + "' (kernel.js), written by `vyre export web`.\n\n";
  out += "declare global {\n"
         "  // WebGPU's device; merges with @webgpu/types' declaration where a project has them.\n"
         "  interface GPUDevice {}\n"
         "}\n\n";
  out += "/** Contents by buffer name. Read and uniform buffers are required; a read_write buffer takes contents\n"
         " *  or a size (DispatchOptions.sizes), or neither when the program fixes its count (zero-filled). */\n";
  out += "export interface Inputs {\n" + inputs + "}\n\n";
  out += "/** Element counts of read_write buffers given no contents (zero-filled). */\n";
  out += "export interface Sizes {\n" + sizes + "}\n\n";
  out += "/** The outputs a dispatch resolves to, by buffer name. */\n";
  out += "export interface Outputs {\n" + outputs + "}\n\n";
  out += "/** Invocations (dim) or workgroups (grid): n, or [x], [x, y], [x, y, z]. */\n"
         "export type Dim3 = number | [number] | [number, number] | [number, number, number];\n\n"
         "export interface DispatchOptions {\n"
         "  readonly sizes?: Sizes;\n"
         "  /** The launch domain: this many invocations; those outside it have no effect. */\n"
         "  readonly dim?: Dim3;\n"
         "  /** The grid in workgroups, instead of a domain. */\n"
         "  readonly grid?: Dim3;\n"
         "}\n\n"
         "export type BufferName = " + names + ";\n\n"
         "export interface BufferInfo {\n"
         "  readonly name: BufferName;\n"
         "  readonly binding: number;\n"
         "  readonly access: \"read\" | \"read_write\" | \"uniform\";\n"
         "  readonly type: string;\n"
         "  /** 0: runtime-sized. */\n"
         "  readonly count: number;\n"
         "  readonly output: boolean;\n"
         "  /** The typed array it takes and gives. */\n"
         "  readonly array: string;\n"
         "}\n\n"
         "export interface KernelStats {\n"
         "  readonly dispatches: number;\n"
         "  readonly pipelines: number;\n"
         "  readonly buffers: number;\n"
         "  readonly bindGroups: number;\n"
         "  /** The shader the last dispatch ran: one element an invocation, four (widened), or the domain's guard. */\n"
         "  readonly shader: \"base\" | \"wide\" | \"guard\" | null;\n"
         "}\n\n"
         "export interface Kernel {\n"
         "  readonly name: string;\n"
         "  readonly buffers: readonly BufferInfo[];\n"
         "  /** Pipelines, buffers and bind groups made so far: a dispatch whose sizes fit the last one's makes none. */\n"
         "  readonly stats: KernelStats;\n"
         "  /** Runs the kernel once; rejects with an Error saying what to change for inputs that do not fit. */\n"
         "  dispatch(inputs: Inputs, options?: DispatchOptions): Promise<Outputs>;\n"
         "  /** Frees the kernel's GPU buffers; later dispatches reject. */\n"
         "  dispose(): void;\n"
         "}\n\n"
         "export declare const INFO: {\n"
         "  readonly name: string;\n"
         "  /** SHA-256 of the program's canonical form: its identity. */\n"
         "  readonly digest: string;\n"
         "  readonly target: string;\n"
         "  readonly vyre: string;\n"
         "  readonly workgroup: readonly [number, number, number];\n"
         "  readonly f16: boolean;\n"
         "  readonly buffers: readonly BufferInfo[];\n"
         "  /** Each shader's AOT cache key. */\n"
         "  readonly shaders: readonly { readonly role: string; readonly key: string }[];\n"
         "};\n\n"
         "/** The kernel on a GPUDevice; rejects with what to change when the device cannot run it. */\n"
         "export declare function createKernel(device: GPUDevice): Promise<Kernel>;\n";
  return out;
}

}  // namespace vyre::web
