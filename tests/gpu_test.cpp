// The GPU backend on wgpu-native: adapters and fingerprints, the pipeline
// layer with handwritten WGSL, limits, errors and buffer reuse.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "dispatch/plan.hpp"
#include "gpu/adapter_selection.hpp"
#include "gpu/compute_pipeline.hpp"
#include "gpu/device.hpp"
#include "gpu/dispatcher.hpp"
#include "gpu/instance.hpp"
#include "support/programs.hpp"
#include "support/gpu_test_support.hpp"
#include "support/test_support.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/reference.hpp"

namespace vyre::gpu {
namespace {

using build::ProgramBuilder;

// Sets (or, with nullopt, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

using vyre::test::contains;
using vyre::test::error_of;
using vyre::test::no_disk_cache;

std::shared_ptr<DeviceContext> open_default_device() {
  const BackendOptions environment = BackendOptions::from_environment();
  const BackendChoice backends = choose_backends(std::nullopt, environment.backend);
  auto adapters = find_adapters(backends);
  const size_t chosen = select_adapter(adapters, backends, std::nullopt, environment.adapter);
  return DeviceContext::open(std::move(adapters[chosen]));
}

// ---- adapters, fingerprints, selection ------------------------------------

TEST(GpuAdapters, EnumerateWithFingerprintsOfTheDocumentedShape) {
  const auto adapters = enumerate_adapters();
  ASSERT_FALSE(adapters.empty()) << "this machine has lavapipe; no adapter means the backend is broken";
  const std::regex shape(
      R"(wgpu-native=\d+\.\d+\.\d+\.\d+;backend=(vulkan|gl|metal|dx12|dx11|webgpu|null|unknown);)"
      R"(vendor=0x[0-9a-f]+;device=0x[0-9a-f]{4,};name=[^;]*;driver=.*)");
  for (size_t i = 0; i < adapters.size(); ++i) {
    const AdapterInfo& a = adapters[i];
    EXPECT_EQ(a.index, i);
    EXPECT_FALSE(a.name.empty());
    EXPECT_TRUE(std::regex_match(a.fingerprint, shape)) << a.fingerprint;
    EXPECT_TRUE(contains(a.fingerprint, "wgpu-native=" + wgpu_native_version() + ";")) << a.fingerprint;
    EXPECT_TRUE(contains(a.fingerprint, ";name=" + a.name + ";driver=" + a.driver)) << a.fingerprint;
  }
}

TEST(GpuAdapters, WgpuNativeVersionHasFourParts) {
  EXPECT_TRUE(std::regex_match(wgpu_native_version(), std::regex(R"(\d+\.\d+\.\d+\.\d+)"))) << wgpu_native_version();
}

TEST(GpuAdapters, FingerprintOverrideReplacesTheBackendFingerprintOnly) {
  std::string real;
  {
    ScopedEnv unset("VYRE_BACKEND_FINGERPRINT_OVERRIDE", std::nullopt);
    Backend backend(no_disk_cache());
    real = backend.fingerprint();
    EXPECT_EQ(real, backend.adapter().fingerprint);
  }
  {
    ScopedEnv set("VYRE_BACKEND_FINGERPRINT_OVERRIDE", "shared-ci-fleet");
    Backend backend(no_disk_cache());
    EXPECT_EQ(backend.fingerprint(), "shared-ci-fleet");
    EXPECT_EQ(backend.adapter().fingerprint, real);
  }
  {
    ScopedEnv empty("VYRE_BACKEND_FINGERPRINT_OVERRIDE", "");
    EXPECT_EQ(Backend(no_disk_cache()).fingerprint(), real);
  }
}

TEST(GpuAdapters, AdapterIsChosenByIndexOrCaseInsensitiveNamePart) {
  const auto adapters = enumerate_adapters();
  ASSERT_FALSE(adapters.empty());
  const AdapterInfo& last = adapters.back();

  BackendOptions by_index = no_disk_cache();
  by_index.adapter = std::to_string(last.index);
  EXPECT_EQ(Backend(by_index).adapter().fingerprint, last.fingerprint);

  std::string upper = last.name.substr(0, 4);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ScopedEnv env("VYRE_WGPU_ADAPTER", upper);
  EXPECT_TRUE(contains(Backend(no_disk_cache()).adapter().name, last.name.substr(0, 4)));

  // Digits that are no adapter's index match by name ("3090" in "RTX 3090").
  std::smatch digits;
  if (std::regex_search(last.name, digits, std::regex(R"(\d{2,})")) && std::stoul(digits.str()) >= adapters.size()) {
    ScopedEnv by_digits("VYRE_WGPU_ADAPTER", digits.str());
    EXPECT_TRUE(contains(Backend(no_disk_cache()).adapter().name, digits.str()));
  }
}

TEST(GpuAdapters, AnAdapterMatchingNothingIsNoAdapterListingWhatIsVisible) {
  BackendOptions options = no_disk_cache();
  options.adapter = "nonexistent";
  std::string msg = error_of(ErrorKind::no_adapter, [&] { Backend b(options); });
  EXPECT_TRUE(contains(msg, "'nonexistent'")) << msg;
  EXPECT_TRUE(contains(msg, "[0] " + enumerate_adapters().at(0).name)) << msg;

  options.adapter = "99";
  msg = error_of(ErrorKind::no_adapter, [&] { Backend b(options); });
  EXPECT_TRUE(contains(msg, "'99'")) << msg;

  ScopedEnv env("VYRE_WGPU_ADAPTER", "nonexistent");
  msg = error_of(ErrorKind::no_adapter, [&] { Backend b(no_disk_cache()); });
  EXPECT_TRUE(contains(msg, "VYRE_WGPU_ADAPTER='nonexistent'")) << msg;
}

TEST(GpuAdapters, ABackendWithoutAdaptersIsNoAdapterSayingWhatToDo) {
  BackendOptions options = no_disk_cache();
  options.backend = "metal";  // never present on Linux
  std::string msg = error_of(ErrorKind::no_adapter, [&] { Backend b(options); });
  EXPECT_TRUE(contains(msg, "no GPU adapter found (backend: metal)")) << msg;
  EXPECT_TRUE(contains(msg, "`vyre devices`")) << msg;

  ScopedEnv env("WGPU_BACKEND", "DX12");
  msg = error_of(ErrorKind::no_adapter, [&] { Backend b(no_disk_cache()); });
  EXPECT_TRUE(contains(msg, "(backend: dx12)")) << msg;
  EXPECT_TRUE(enumerate_adapters().empty());
}

TEST(GpuAdapters, AnUnknownBackendNameIsRefused) {
  BackendOptions options = no_disk_cache();
  options.backend = "vulcan";
  const std::string msg = error_of(ErrorKind::no_adapter, [&] { Backend b(options); });
  EXPECT_TRUE(contains(msg, "unknown GPU backend 'vulcan'")) << msg;
}

// Run by the next test in a child process whose Vulkan loader finds no driver.
TEST(GpuAdaptersChild, DISABLED_NoVulkanDriver) {
  const std::string msg = error_of(ErrorKind::no_adapter, [] { Backend b(no_disk_cache()); });
  EXPECT_EQ(msg,
            "no GPU adapter found (backend: vulkan). The Vulkan loader is installed but no Vulkan driver is: `apt "
            "install mesa-vulkan-drivers` gives lavapipe, a CPU Vulkan device; or install your GPU vendor's driver. "
            "`vyre devices` lists what is visible.");
}

TEST(GpuAdapters, AMissingVulkanDriverIsNoAdapterNotACrash) {
  test::TempDir dir;
  const auto empty_icd = dir / "no-driver.json";
  test::write_file(empty_icd, "");
  const auto result = test::run_process(
      {std::filesystem::read_symlink("/proc/self/exe").string(), "--gtest_also_run_disabled_tests",
       "--gtest_filter=GpuAdaptersChild.DISABLED_NoVulkanDriver"},
      {{"VK_ICD_FILENAMES", empty_icd.string()}, {"VK_DRIVER_FILES", empty_icd.string()}, {"WGPU_BACKEND", "vulkan"},
       {"VYRE_WGPU_ADAPTER", ""}});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_TRUE(contains(result.out, "[  PASSED  ] 1 test")) << result.out;
}

// ---- the pipeline layer with handwritten WGSL -------------------------------

ShaderBinding bind(std::string buffer, uint32_t binding, BindingKind kind, ScalarType type, uint32_t count = 0,
                   bool output = false) {
  ShaderBinding b;
  b.buffer = std::move(buffer);
  b.binding = binding;
  b.kind = kind;
  b.type = type;
  b.count = count;
  b.output = output;
  return b;
}

ShaderInterface interface_of(Dim3 workgroup, std::vector<ShaderBinding> bindings, std::vector<std::string> lengths = {}) {
  ShaderInterface iface;
  iface.workgroup_size = workgroup;
  iface.bindings = std::move(bindings);
  iface.length_slots = std::move(lengths);
  for (const std::string& name : iface.length_slots)
    for (uint32_t i = 0; i < iface.bindings.size(); ++i)
      if (iface.bindings[i].buffer == name) iface.length_bindings.push_back(i);
  return iface;
}

// One invocation per element of the first output: the grid these tests'
// hand-written shaders are dispatched with when they give none (their
// programs have no body, so no default grid is proven for them).
Dim3 one_per_first_output(const CheckedProgram& program, const Inputs& inputs) {
  const DispatchPlan plan = plan_dispatch(program, {}, inputs, Dim3{1, 1, 1});
  for (const BufferPlan& b : plan.buffers)
    if (b.buffer->output) return {(b.elements + plan.workgroup_size[0] - 1) / plan.workgroup_size[0], 1, 1};
  return {1, 1, 1};
}

// One dispatch of handwritten WGSL, every output read back: the steps of
// Pipeline::dispatch on a bare Dispatcher.
Outputs run_once(Dispatcher& dispatcher, const CheckedProgram& program, const Inputs& inputs,
                 std::optional<Dim3> grid = std::nullopt, DispatchReport* report = nullptr) {
  DispatchJob job;
  job.plan = plan_dispatch(program, {}, inputs, grid ? *grid : one_per_first_output(program, inputs));
  job.reset_destinations();
  std::vector<std::vector<uint8_t>> data = read_back_every_output(job);
  std::lock_guard lock(dispatcher.mutex());
  dispatcher.run(job, report, true);
  return outputs_by_name(job.plan, data);
}

class GpuPipeline : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { device_ = open_default_device(); }
  static void TearDownTestSuite() { device_.reset(); }

  static std::shared_ptr<const ComputePipeline> pipeline(std::string_view wgsl, ShaderInterface iface) {
    return std::make_shared<const ComputePipeline>(device_, wgsl, std::move(iface));
  }
  static Outputs run(Dispatcher& dispatcher, const CheckedProgram& program, const Inputs& inputs,
                     std::optional<Dim3> grid = std::nullopt, DispatchReport* report = nullptr) {
    return run_once(dispatcher, program, inputs, grid, report);
  }

  static inline std::shared_ptr<DeviceContext> device_;
};

constexpr const char* kXorWgsl = R"(
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(1) @binding(0) var<uniform> lengths: array<vec4<u32>, 1>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i < lengths[0].x) { out[i] = a[i] ^ b[i]; }
}
)";

// Buffers only: the WGSL is handwritten.
Program xor_buffers() {
  return ProgramBuilder("xor")
      .workgroup_size(64)
      .input("a", 0, ScalarType::U32)
      .input("b", 1, ScalarType::U32)
      .output("out", 2, ScalarType::U32)
      .unchecked();
}

ShaderInterface xor_interface() {
  return interface_of({64, 1, 1},
                      {bind("a", 0, BindingKind::StorageRead, ScalarType::U32),
                       bind("b", 1, BindingKind::StorageRead, ScalarType::U32),
                       bind("out", 2, BindingKind::StorageReadWrite, ScalarType::U32, 0, true)},
                      {"out"});
}

Inputs xor_inputs(uint32_t n, uint32_t seed, std::vector<uint32_t>* expected) {
  std::vector<uint32_t> a(n), b(n);
  expected->resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = i * 2654435761u + seed;
    b[i] = ~i ^ (seed << 7);
    (*expected)[i] = a[i] ^ b[i];
  }
  Inputs in;
  in.set<uint32_t>("a", a).set<uint32_t>("b", b).size("out", n);
  return in;
}

TEST_F(GpuPipeline, XorOfRuntimeSizedBuffers) {
  Dispatcher dispatcher(pipeline(kXorWgsl, xor_interface()));
  std::vector<uint32_t> expected;
  const Outputs out = run(dispatcher, xor_buffers(), xor_inputs(1000, 3, &expected));  // not a multiple of 64
  EXPECT_EQ(out.get<uint32_t>("out"), expected);
  EXPECT_EQ(out.all().size(), 1u);  // inputs are not read back
}

TEST_F(GpuPipeline, SaxpyOnF32WithAUniformScalar) {
  const char* wgsl = R"(
@group(0) @binding(0) var<uniform> params: array<vec4<f32>, 1>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(1) @binding(0) var<uniform> lengths: array<vec4<u32>, 1>;
@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i < lengths[0].x) { y[i] = params[0].x * x[i] + y[i]; }
}
)";
  const Program program = ProgramBuilder("saxpy")
                              .workgroup_size(32)
                              .uniform("params", 0, ScalarType::F32, 1)
                              .input("x", 1, ScalarType::F32)
                              .output("y", 2, ScalarType::F32)
                              .unchecked();
  Dispatcher dispatcher(pipeline(wgsl, interface_of({32, 1, 1},
                                                    {bind("params", 0, BindingKind::Uniform, ScalarType::F32, 1),
                                                     bind("x", 1, BindingKind::StorageRead, ScalarType::F32),
                                                     bind("y", 2, BindingKind::StorageReadWrite, ScalarType::F32, 0, true)},
                                                    {"y"})));
  const uint32_t n = 1000;
  std::vector<float> x(n), y(n), expected(n);
  for (uint32_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 0.5f * static_cast<float>(i);
    expected[i] = 3.0f * static_cast<float>(i);  // 2.5 i + 0.5 i, exact in f32 with or without fma
  }
  Inputs in;
  in.set<float>("params", {2.5f}).set<float>("x", x).set<float>("y", y);
  EXPECT_EQ(run(dispatcher, program, in).get<float>("y"), expected);
}

TEST_F(GpuPipeline, FixedCountBuffersWithoutALengthsUniform) {
  const char* wgsl = R"(
@group(0) @binding(0) var<storage, read> table: array<u32, 8>;
@group(0) @binding(1) var<storage, read_write> out: array<u32, 16>;
@compute @workgroup_size(16)
fn main(@builtin(local_invocation_index) i: u32) {
  out[i] = table[i % 8u] * 2u + i;
}
)";
  const Program program = ProgramBuilder("fixed")
                              .workgroup_size(16)
                              .input("table", 0, ScalarType::U32, 8)
                              .output("out", 1, ScalarType::U32, 16)
                              .unchecked();
  Dispatcher dispatcher(pipeline(wgsl, interface_of({16, 1, 1},
                                                    {bind("table", 0, BindingKind::StorageRead, ScalarType::U32, 8),
                                                     bind("out", 1, BindingKind::StorageReadWrite, ScalarType::U32, 16,
                                                          true)})));
  Inputs in;
  in.set<uint32_t>("table", {1, 2, 3, 4, 5, 6, 7, 8});
  std::vector<uint32_t> expected;
  for (uint32_t i = 0; i < 16; ++i) expected.push_back((i % 8 + 1) * 2 + i);
  EXPECT_EQ(run(dispatcher, program, in).get<uint32_t>("out"), expected);
}

TEST_F(GpuPipeline, UniformArrayOfFiveIsPackedFourToARowAndPaddedWithZeros) {
  const char* wgsl = R"(
@group(0) @binding(0) var<uniform> u: array<vec4<u32>, 2>;
@group(0) @binding(1) var<storage, read_write> out: array<u32, 8>;
@compute @workgroup_size(8)
fn main(@builtin(local_invocation_index) i: u32) {
  out[i] = u[i / 4u][i % 4u];
}
)";
  const Program program = ProgramBuilder("rows")
                              .workgroup_size(8)
                              .uniform("u", 0, ScalarType::U32, 5)
                              .output("out", 1, ScalarType::U32, 8)
                              .unchecked();
  Dispatcher dispatcher(pipeline(wgsl, interface_of({8, 1, 1},
                                                    {bind("u", 0, BindingKind::Uniform, ScalarType::U32, 5),
                                                     bind("out", 1, BindingKind::StorageReadWrite, ScalarType::U32, 8,
                                                          true)})));
  Inputs in;
  in.set<uint32_t>("u", {10, 11, 12, 13, 14});
  EXPECT_EQ(run(dispatcher, program, in).get<uint32_t>("out"), (std::vector<uint32_t>{10, 11, 12, 13, 14, 0, 0, 0}));
}

TEST_F(GpuPipeline, ZeroLengthBuffersAreBoundAndHaveLengthZero) {
  const char* wgsl = R"(
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32, 2>;
@group(0) @binding(2) var<storage, read_write> empty: array<u32>;
@group(1) @binding(0) var<uniform> lengths: array<vec4<u32>, 1>;
@compute @workgroup_size(1)
fn main() {
  out[0] = lengths[0].x + 100u;
  out[1] = lengths[0].y + 200u;
  if (lengths[0].x > 0u) { out[0] = a[0]; empty[0] = 1u; }
}
)";
  const Program program = ProgramBuilder("empty")
                              .input("a", 0, ScalarType::U32)
                              .output("out", 1, ScalarType::U32, 2)
                              .output("empty", 2, ScalarType::U32)
                              .unchecked();
  Dispatcher dispatcher(pipeline(
      wgsl, interface_of({1, 1, 1},
                         {bind("a", 0, BindingKind::StorageRead, ScalarType::U32),
                          bind("out", 1, BindingKind::StorageReadWrite, ScalarType::U32, 2, true),
                          bind("empty", 2, BindingKind::StorageReadWrite, ScalarType::U32, 0, true)},
                         {"a", "empty"})));
  Inputs in;
  in.set<uint32_t>("a", {}).size("empty", 0);
  const Outputs out = run(dispatcher, program, in);
  EXPECT_EQ(out.get<uint32_t>("out"), (std::vector<uint32_t>{100, 200}));
  ASSERT_TRUE(out.has("empty"));
  EXPECT_TRUE(out.bytes("empty").empty());
}

TEST_F(GpuPipeline, AnEmptyGridRunsNothingAndReadsBackWhatWasGiven) {
  Dispatcher dispatcher(pipeline(kXorWgsl, xor_interface()));
  Inputs in;
  in.set<uint32_t>("a", {}).set<uint32_t>("b", {}).set<uint32_t>("out", {});
  const Outputs out = run(dispatcher, xor_buffers(), in);
  EXPECT_TRUE(out.bytes("out").empty());

  Inputs given;
  given.set<uint32_t>("a", {1, 2}).set<uint32_t>("b", {3, 4}).set<uint32_t>("out", {7, 8});
  EXPECT_EQ(run(dispatcher, xor_buffers(), given, Dim3{0, 1, 1}).get<uint32_t>("out"),
            (std::vector<uint32_t>{7, 8}));
}

TEST_F(GpuPipeline, WgslErrorCarriesTheCompilerMessageAndTheDeviceStaysUsable) {
  const char* broken = R"(
@compute @workgroup_size(1)
fn main() { let x: u32 = 1.5; }
)";
  const std::string msg = error_of(ErrorKind::gpu, [&] { pipeline(broken, interface_of({1, 1, 1}, {})); });
  EXPECT_TRUE(contains(msg, "rejected the WGSL")) << msg;
  EXPECT_TRUE(contains(msg, "expected to be `u32`")) << msg;  // naga's own words

  Dispatcher dispatcher(pipeline(kXorWgsl, xor_interface()));
  std::vector<uint32_t> expected;
  EXPECT_EQ(run(dispatcher, xor_buffers(), xor_inputs(10, 1, &expected)).get<uint32_t>("out"), expected);
}

TEST_F(GpuPipeline, AWorkgroupSizeBeyondTheDeviceIsLimitExceeded) {
  const WGPULimits& limits = device_->limits();
  const uint32_t x = limits.maxComputeWorkgroupSizeX + 1;
  std::string msg = error_of(ErrorKind::limit_exceeded, [&] {
    pipeline("@compute @workgroup_size(" + std::to_string(x) + ") fn main() {}", interface_of({x, 1, 1}, {}));
  });
  EXPECT_TRUE(contains(msg, "on axis x")) << msg;

  msg = error_of(ErrorKind::limit_exceeded, [&] {
    pipeline("@compute @workgroup_size(32, 32, 2) fn main() {}", interface_of({32, 32, 2}, {}));
  });
  EXPECT_TRUE(contains(msg, "2048 invocations")) << msg;
}

TEST_F(GpuPipeline, AGridBeyondTheDeviceIsLimitExceededAndTheDispatcherStaysUsable) {
  Dispatcher dispatcher(pipeline(kXorWgsl, xor_interface()));
  std::vector<uint32_t> expected;
  const Inputs in = xor_inputs(100, 5, &expected);
  const uint32_t too_many = device_->limits().maxComputeWorkgroupsPerDimension + 1;
  const std::string msg =
      error_of(ErrorKind::limit_exceeded, [&] { run(dispatcher, xor_buffers(), in, Dim3{1, too_many, 1}); });
  EXPECT_TRUE(contains(msg, "maxComputeWorkgroupsPerDimension")) << msg;
  EXPECT_TRUE(contains(msg, "grid-stride loop")) << msg;
  EXPECT_EQ(run(dispatcher, xor_buffers(), in).get<uint32_t>("out"), expected);
}

TEST_F(GpuPipeline, ABufferBeyondTheBindingLimitIsLimitExceededNamingIt) {
  Dispatcher dispatcher(pipeline(kXorWgsl, xor_interface()));
  const uint64_t limit = std::min(device_->limits().maxStorageBufferBindingSize, device_->limits().maxBufferSize);
  const uint32_t elements = static_cast<uint32_t>(limit / 4 + 1);
  Inputs in;
  in.set<uint32_t>("a", {1}).set<uint32_t>("b", {2}).size("out", elements);
  const std::string msg =
      error_of(ErrorKind::limit_exceeded, [&] { run(dispatcher, xor_buffers(), in, Dim3{1, 1, 1}); });
  EXPECT_TRUE(contains(msg, "buffer 'out'")) << msg;
  EXPECT_TRUE(contains(msg, std::to_string(uint64_t{elements} * 4) + " bytes")) << msg;
  EXPECT_TRUE(contains(msg, std::to_string(limit))) << msg;

  std::vector<uint32_t> expected;
  EXPECT_EQ(run(dispatcher, xor_buffers(), xor_inputs(10, 2, &expected)).get<uint32_t>("out"), expected);
}

TEST_F(GpuPipeline, AWarmDispatchAllocatesNoBuffersAndStartsFromZero) {
  const char* copy = R"(
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(1) @binding(0) var<uniform> lengths: array<vec4<u32>, 1>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x < lengths[0].x) { out[gid.x] = a[gid.x]; }
}
)";
  const Program program = ProgramBuilder("copy")
                              .workgroup_size(64)
                              .input("a", 0, ScalarType::U32)
                              .output("out", 1, ScalarType::U32)
                              .unchecked();
  Dispatcher dispatcher(pipeline(copy, interface_of({64, 1, 1},
                                                    {bind("a", 0, BindingKind::StorageRead, ScalarType::U32),
                                                     bind("out", 1, BindingKind::StorageReadWrite, ScalarType::U32, 0,
                                                          true)},
                                                    {"a"})));
  Inputs first;
  first.set<uint32_t>("a", {1, 2, 3, 4}).set<uint32_t>("out", {9, 9, 9, 9, 9, 9});
  EXPECT_EQ(run(dispatcher, program, first).get<uint32_t>("out"), (std::vector<uint32_t>{1, 2, 3, 4, 9, 9}));
  const uint64_t cold = dispatcher.buffers_created();
  EXPECT_EQ(cold, 4u);  // a, out, out's staging, lengths

  // Same sizes, then smaller: the buffers are reused and what is not
  // uploaded starts from zero, not from the last dispatch.
  Inputs second;
  second.set<uint32_t>("a", {5}).size("out", 6);
  EXPECT_EQ(run(dispatcher, program, second).get<uint32_t>("out"), (std::vector<uint32_t>{5, 0, 0, 0, 0, 0}));
  Inputs third;
  third.set<uint32_t>("a", {7, 8}).size("out", 3);
  EXPECT_EQ(run(dispatcher, program, third).get<uint32_t>("out"), (std::vector<uint32_t>{7, 8, 0}));
  EXPECT_EQ(dispatcher.buffers_created(), cold);

  Inputs larger;
  larger.set<uint32_t>("a", std::vector<uint32_t>(100, 6)).size("out", 100);
  EXPECT_EQ(run(dispatcher, program, larger).get<uint32_t>("out"), std::vector<uint32_t>(100, 6));
  EXPECT_EQ(dispatcher.buffers_created(), cold + 3);  // a, out and its staging grow; lengths stay
}

TEST_F(GpuPipeline, TheReportHasTheGridAndTimings) {
  Dispatcher dispatcher(pipeline(kXorWgsl, xor_interface()));
  std::vector<uint32_t> expected;
  DispatchReport report;
  run(dispatcher, xor_buffers(), xor_inputs(1000, 4, &expected), std::nullopt, &report);
  EXPECT_EQ(report.grid, (Dim3{16, 1, 1}));
  EXPECT_GE(report.upload_ms, 0.0);
  EXPECT_GT(report.dispatch_ms, 0.0);
  EXPECT_GT(report.readback_ms, 0.0);
}

TEST_F(GpuPipeline, ThreadsDispatchingOnOneDeviceEachGetTheirOwnResults) {
  auto shared = pipeline(kXorWgsl, xor_interface());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Dispatcher dispatcher(shared);
      for (uint32_t round = 0; round < 10; ++round) {
        std::vector<uint32_t> expected;
        const Inputs in = xor_inputs(200 + 37 * t + round, t * 100 + round, &expected);
        if (run(dispatcher, xor_buffers(), in).get<uint32_t>("out") != expected) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(GpuDevice, ALostDeviceIsReportedOnEveryLaterCall) {
  auto device = open_default_device();
  auto compiled = std::make_shared<const ComputePipeline>(device, kXorWgsl, xor_interface());
  Dispatcher dispatcher(compiled);
  std::vector<uint32_t> expected;
  const Inputs in = xor_inputs(64, 9, &expected);
  const Program program = xor_buffers();
  ASSERT_EQ(run_once(dispatcher, program, in).get<uint32_t>("out"), expected);

  wgpuDeviceDestroy(device->device());
  const std::string first = error_of(ErrorKind::device_lost, [&] { run_once(dispatcher, program, in); });
  EXPECT_TRUE(contains(first, "was lost")) << first;
  const std::string msg = error_of(ErrorKind::device_lost, [&] { run_once(dispatcher, program, in); });
  EXPECT_TRUE(contains(msg, "opens a new device on its next compile or dispatch")) << msg;
  error_of(ErrorKind::device_lost, [&] { ComputePipeline again(device, kXorWgsl, xor_interface()); });
}

// ---- end to end: Backend::compile and Pipeline::dispatch ---------------------

using namespace vyre::build;

std::vector<uint32_t> iota_words(uint32_t n, uint32_t start) {
  std::vector<uint32_t> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = start + i * 7;
  return v;
}

Inputs xor_program_inputs(uint32_t n, std::vector<uint32_t>* expected) {
  const auto a = iota_words(n, 1), b = iota_words(n, 1000);
  expected->resize(n);
  for (uint32_t i = 0; i < n; ++i) (*expected)[i] = a[i] ^ b[i];
  Inputs in;
  in.set<uint32_t>("a", a).set<uint32_t>("b", b).size("out", n);
  return in;
}

TEST(GpuBackend, CompilesAndDispatchesABuilderProgram) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(test::xor_program());
  const CompileReport& report = pipeline.compile_report();
  EXPECT_FALSE(report.memory_hit);
  EXPECT_FALSE(report.cache_key.empty());
  EXPECT_GT(report.shader_ms, 0.0);
  EXPECT_GT(report.pipeline_ms, 0.0);
  EXPECT_TRUE(contains(pipeline.wgsl(), "@compute")) << pipeline.wgsl();
  EXPECT_EQ(pipeline.interface().bindings.size(), 3u);

  for (uint32_t n : {1000u, 64u, 1u, 3000u, 0u}) {
    std::vector<uint32_t> expected;
    DispatchReport dispatch;
    EXPECT_EQ(pipeline.dispatch(xor_program_inputs(n, &expected), std::nullopt, &dispatch).get<uint32_t>("out"),
              expected)
        << n << " elements";
    EXPECT_EQ(dispatch.grid, (Dim3{(n + 63) / 64, 1, 1}));
  }
}

TEST(GpuBackend, ASecondCompileOfTheSameProgramIsAnInMemoryHit) {
  Backend backend(no_disk_cache());
  Pipeline first = backend.compile(test::xor_program());
  Program same = test::xor_program();
  same.name = "another label";
  std::reverse(same.buffers.begin(), same.buffers.end());  // declaration order is not identity
  Pipeline second = backend.compile(same);
  EXPECT_TRUE(second.compile_report().memory_hit);
  EXPECT_EQ(second.compile_report().cache_key, first.compile_report().cache_key);
  EXPECT_EQ(&second.wgsl(), &first.wgsl());  // one shader, shared

  ShaderOptions wider;
  wider.workgroup_override = Dim3{128, 1, 1};
  Pipeline third = backend.compile(test::xor_program(), wider);
  EXPECT_FALSE(third.compile_report().memory_hit);
  EXPECT_NE(third.compile_report().cache_key, first.compile_report().cache_key);

  // Each Pipeline keeps its own buffers: interleaved dispatches do not mix.
  std::vector<uint32_t> e1, e2, e3;
  const Inputs i1 = xor_program_inputs(100, &e1), i2 = xor_program_inputs(7, &e2), i3 = xor_program_inputs(300, &e3);
  EXPECT_EQ(first.dispatch(i1).get<uint32_t>("out"), e1);
  EXPECT_EQ(second.dispatch(i2).get<uint32_t>("out"), e2);
  EXPECT_EQ(third.dispatch(i3).get<uint32_t>("out"), e3);
  EXPECT_EQ(first.dispatch(i2).get<uint32_t>("out"), e2);
}

TEST(GpuBackend, ThreadsCompilingTheSameProgramCompileItOnce) {
  Backend backend(no_disk_cache());
  constexpr int kThreads = 4;
  std::barrier start(kThreads);
  std::atomic<int> compiled{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      Pipeline pipeline = backend.compile(test::xor_program());
      if (!pipeline.compile_report().memory_hit) ++compiled;
      std::vector<uint32_t> expected;
      if (pipeline.dispatch(xor_program_inputs(500, &expected)).get<uint32_t>("out") != expected) ++wrong;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(compiled.load(), 1);
  EXPECT_EQ(wrong.load(), 0);
}

TEST(GpuBackend, ASecondBackendFindsTheShaderInTheAotCache) {
  test::TempDir dir;
  auto options_on = [&] {
    aot::CacheOptions cache;
    cache.directory = dir.path();
    BackendOptions options;
    options.cache = std::make_shared<aot::Cache>(cache);
    return options;
  };
  const Program program = test::xor_program();
  std::vector<uint32_t> expected;
  const Inputs in = xor_program_inputs(300, &expected);

  Backend first(options_on());
  Pipeline cold = first.compile(program);
  EXPECT_FALSE(cold.compile_report().cache_hit);
  EXPECT_TRUE(aot::is_valid_key(cold.compile_report().cache_key)) << cold.compile_report().cache_key;

  Backend second(options_on());  // as a second process would: nothing in memory
  Pipeline warm = second.compile(program);
  EXPECT_TRUE(warm.compile_report().cache_hit);
  EXPECT_FALSE(warm.compile_report().memory_hit);
  EXPECT_EQ(warm.compile_report().lower_ms, 0.0);
  EXPECT_EQ(warm.compile_report().cache_key, cold.compile_report().cache_key);
  EXPECT_EQ(warm.wgsl(), cold.wgsl());
  EXPECT_EQ(warm.dispatch(in).get<uint32_t>("out"), expected);

  ScopedEnv other_fleet("VYRE_BACKEND_FINGERPRINT_OVERRIDE", "another-driver");
  Backend third(options_on());
  EXPECT_FALSE(third.compile(program).compile_report().cache_hit);
}

TEST(GpuBackend, TheFingerprintOverrideIsPartOfTheCacheKey) {
  const Program program = test::xor_program();
  std::string real_key;
  {
    ScopedEnv unset("VYRE_BACKEND_FINGERPRINT_OVERRIDE", std::nullopt);
    real_key = Backend(no_disk_cache()).compile(program).compile_report().cache_key;
  }
  ScopedEnv set("VYRE_BACKEND_FINGERPRINT_OVERRIDE", "fleet-a");
  EXPECT_NE(Backend(no_disk_cache()).compile(program).compile_report().cache_key, real_key);
}

TEST(GpuBackend, UniformsLengthsAndFmaMatchTheReferenceInterpreter) {
  const Program program =
      ProgramBuilder("affine")
          .workgroup_size(32)
          .uniform("params", 0, ScalarType::F32, 2)
          .input("x", 1, ScalarType::F32)
          .output("y", 2, ScalarType::F32)
          .body({let("i", gid()), if_(lt(var("i"), len("y")), {store("y", var("i"), fma(load("params", u32(0)),
                                                                                        load("x", var("i")),
                                                                                        load("params", u32(1))))})})
          .build();
  std::vector<float> x(333);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.25f - 40.0f;
  Inputs in;
  in.set<float>("params", {1.5f, -2.0f}).set<float>("x", x).size("y", 333);
  Backend backend(no_disk_cache());
  EXPECT_EQ(backend.compile(program).dispatch(in), reference::run(program, in));
}

TEST(GpuBackend, WorkgroupMemoryAndBarriersMatchTheReferenceInterpreter) {
  // Each workgroup sums its 64 elements through workgroup memory.
  const Program program =
      ProgramBuilder("block_sums")
          .workgroup_size(64)
          .input("a", 0, ScalarType::U32)
          .output("sums", 1, ScalarType::U32)
          .workgroup_buffer("tile", ScalarType::U32, 64)
          .body({let("i", gid()), let("v", u32(0)), if_(lt(var("i"), len("a")), {assign("v", load("a", var("i")))}),
                 store("tile", lid(), var("v")), barrier(),
                 if_(eq(lid(), u32(0)), {let("total", u32(0)),
                                         loop("k", u32(0), u32(64), {assign("total", add(var("total"),
                                                                                         load("tile", var("k"))))}),
                                         store("sums", wid(), var("total"))})})
          .build();
  const uint32_t n = 1000, groups = (n + 63) / 64;
  const auto a = iota_words(n, 3);
  std::vector<uint32_t> expected(groups, 0);
  for (uint32_t i = 0; i < n; ++i) expected[i / 64] += a[i];
  Inputs in;
  in.set<uint32_t>("a", a).size("sums", groups);
  Backend backend(no_disk_cache());
  const Outputs gpu = backend.compile(program).dispatch(in, Dim3{groups, 1, 1});
  EXPECT_EQ(gpu.get<uint32_t>("sums"), expected);
  EXPECT_EQ(gpu, reference::run(program, in, {}, Dim3{groups, 1, 1}));
}

TEST(GpuBackend, IntegerConstantHazardsAgreeWithTheReferenceInterpreter) {
  Backend backend(no_disk_cache());
  for (const Program& program : test::constant_hazard_programs()) {
    SCOPED_TRACE(program.name);
    Pipeline pipeline = backend.compile(program);  // no shader-creation error on a real compiler
    const Buffer& out = *program.find_buffer("out");
    Inputs in;
    if (out.runtime_sized()) in.size("out", 1);
    const Dim3 one_workgroup{1, 1, 1};
    const Outputs gpu = pipeline.dispatch(in, one_workgroup);
    // f32 results may differ in NaN payloads or flushed subnormals, and
    // out-of-range stores are unspecified; the integer results may not differ.
    if (out.type != ScalarType::F32 && program.name.rfind("const_index_", 0) != 0) {
      EXPECT_EQ(gpu, reference::run(program, in, {}, one_workgroup));
    }
  }
}

TEST(GpuBackend, EveryConstructProgramCompilesAndRunsOnTheDevice) {
  Backend backend(no_disk_cache());
  const Program program = test::every_construct_program();
  Pipeline pipeline = backend.compile(program);
  Inputs in;
  in.set<uint32_t>("in", iota_words(40, 0)).size("out", 40).size("fout", 40).set<uint32_t>("params", {1, 2, 3, 4, 5});
  const Outputs out = pipeline.dispatch(in, Dim3{(40 + program.workgroup_size[0] - 1) / program.workgroup_size[0], 1, 1});
  EXPECT_EQ(out.bytes("out").size(), 160u);
  EXPECT_EQ(out.bytes("hist").size(), 16u);
}

TEST(GpuBackend, LimitErrorsLeaveTheBackendUsable) {
  Backend backend(no_disk_cache());
  const auto device = open_default_device();  // the same adapter: read its limits
  const WGPULimits& limits = device->limits();
  Pipeline pipeline = backend.compile(test::xor_program());
  std::vector<uint32_t> expected;
  const Inputs in = xor_program_inputs(100, &expected);

  error_of(ErrorKind::limit_exceeded,
           [&] { pipeline.dispatch(in, Dim3{limits.maxComputeWorkgroupsPerDimension + 1, 1, 1}); });
  EXPECT_EQ(pipeline.dispatch(in).get<uint32_t>("out"), expected);

  Inputs huge;
  huge.set<uint32_t>("a", {1}).set<uint32_t>("b", {1}).size("out", static_cast<uint32_t>(
                                                                        limits.maxStorageBufferBindingSize / 4 + 1));
  const std::string msg = error_of(ErrorKind::limit_exceeded, [&] { pipeline.dispatch(huge, Dim3{1, 1, 1}); });
  EXPECT_TRUE(contains(msg, "buffer 'out'")) << msg;
  EXPECT_EQ(pipeline.dispatch(in).get<uint32_t>("out"), expected);

  if (limits.maxComputeWorkgroupSizeZ < 1024) {
    ShaderOptions deep;
    deep.workgroup_override = Dim3{1, 1, limits.maxComputeWorkgroupSizeZ + 1};
    error_of(ErrorKind::limit_exceeded, [&] { backend.compile(test::xor_program(), deep); });
  }
  EXPECT_EQ(backend.compile(test::xor_program()).dispatch(in).get<uint32_t>("out"), expected);
}

TEST(GpuBackend, BadInputsAreInvalidInputAndLeaveThePipelineUsable) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(test::xor_program());
  Inputs missing;
  missing.set<uint32_t>("a", {1}).size("out", 1);
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input, [&] { pipeline.dispatch(missing); }), "'b'"));
  std::vector<uint32_t> expected;
  EXPECT_EQ(pipeline.dispatch(xor_program_inputs(10, &expected)).get<uint32_t>("out"), expected);
}

TEST(GpuBackend, ByteBuffersTravelAsBytesThroughUploadsResidentOutputsAndReads) {
  Backend backend(no_disk_cache());
  // out[i] = x[i] + 1, stored modulo 256: five elements, one word and a byte.
  const Program inc = ProgramBuilder("inc_u8")
                          .workgroup_size(4)
                          .input("x", 0, ScalarType::U8)
                          .output("out", 1, ScalarType::U8)
                          .body({let("i", gid()), if_(lt(var("i"), len("out")), {store("out", var("i"), add(load("x", var("i")), u32(1)))})})
                          .build();
  Pipeline pipeline = backend.compile(inc);
  const std::vector<uint8_t> x{0, 1, 127, 254, 255};
  const auto uploaded = backend.upload(x);
  EXPECT_EQ(uploaded->type(), ScalarType::U8);
  EXPECT_EQ(uploaded->size_bytes(), 5u);
  EXPECT_EQ(uploaded->elements(), 5u);
  EXPECT_EQ(uploaded->read_as<uint8_t>(), x);

  Inputs first;
  first.device("x", uploaded).size("out", 5);
  const DeviceOutputs once = pipeline.dispatch_resident(first);
  EXPECT_EQ(once.get("out")->size_bytes(), 5u);
  Inputs second;
  second.device("x", once.get("out")).size("out", 5);
  const Outputs twice = pipeline.dispatch(second);
  EXPECT_EQ(twice.get<uint8_t>("out"), (std::vector<uint8_t>{2, 3, 129, 0, 1}));
  EXPECT_EQ(twice.bytes("out").size(), 5u);

  // Typed calls are checked against the buffer's type: bytes are not words.
  Inputs words;
  words.set<uint32_t>("x", {1, 2}).size("out", 2);
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input, [&] { pipeline.dispatch(words); }), "u8"));
  Inputs signed_bytes;
  signed_bytes.set<int8_t>("x", {1, 2}).size("out", 2);
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input, [&] { pipeline.dispatch(signed_bytes); }), "u8"));
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input, [&] { Inputs in; in.device("x", backend.upload(std::vector<uint16_t>{1})).size("out", 1); pipeline.dispatch(in); }), "u8"));
}

TEST(GpuBackend, AnInvalidProgramIsAProgramError) {
  const Program invalid = ProgramBuilder("bad")
                              .input("a", 0, ScalarType::U32)
                              .body({store("a", u32(0), u32(1))})  // a read buffer
                              .unchecked();
  Backend backend(no_disk_cache());
  EXPECT_THROW(backend.compile(invalid), ProgramError);
}

TEST(GpuBackend, AnEmptyPipelineRefusesToDispatch) {
  Pipeline empty;
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input, [&] { empty.dispatch(Inputs{}); }), "Backend::compile"));
}

}  // namespace
}  // namespace vyre::gpu
