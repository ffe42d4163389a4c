// synthetic_capture: writes a large, realistic FuseLens capture through the real db::Writer, for
// the scale measurements of issue #9 (docs/BENCHMARKS.md, "Ten million kernels").
//
//   synthetic_capture OUT.sqlite [--kernels N] [--seed S] [--no-aggregates] [--progress]
//                                                           (N default 10,000,000)
//   synthetic_capture CAPTURE.sqlite --store-aggregates  (only store the summary's aggregates,
//                                                         the steps and cct's and flags' results)
//
// What it writes, for one process (pid 4242) on one device:
//   - N kernels over 8 streams, 300 distinct kernel names (templated C++ names, demangled by the
//     writer), durations drawn per name around a base of 2–400 µs, grid/block shapes per name;
//   - one cudaLaunchKernel runtime call per kernel (same correlation id) on one of 2 launching
//     threads, 2–8 µs long, and a few other API calls per step (cudaMemcpyAsync, cudaMemsetAsync,
//     cudaStreamSynchronize, cudaMalloc/cudaFree);
//   - calling contexts: a CCT of 652 nodes (main -> train -> step -> layer L -> op ->
//     launch site), one api_context row per launch call;
//   - NVTX ranges: N / 4000 training steps, each "step" (depth 0) with "forward" and "backward"
//     (depth 1) inside: 3 ranges per 4000 kernels (7,500 for ten million kernels);
//   - per step: a host-to-device copy, a memset, an allocation and its release, a stream
//     synchronization.
// Records go to the writer in batches of 20,000 launches, as the collector commits them; the run
// is finalized (indexes built) and the summary's aggregates, the steps and the results of cct and
// flags stored (SummaryStore.h, Steps.h, AnalysisStore.h, as prof-run does; not with
// --no-aggregates). Prints the counts, the file size, bytes per kernel and the time,
// with the shares of finalize, the aggregates and the steps; --progress prints finalize's steps.
// Exit status 0, or 2 for a bad command line, 1 if the writer fails (one error line).

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "fuselens/db/Sqlite.h"
#include "fuselens/db/Writer.h"
#include "steps/Steps.h"
#include "store/AnalysisStore.h"
#include "summary/SummaryStore.h"
#include "timeline/TimelineLod.h"

namespace {

using namespace fuselens;

constexpr std::uint32_t kPid = 4242;
constexpr std::uint32_t kThreads[2] = {4242, 4250};
constexpr int kStreams = 8;
constexpr int kNames = 300;
constexpr int kLayers = 24;
constexpr std::int64_t kKernelsPerStep = 4000;
constexpr std::int64_t kBatch = 20000;

struct KernelKind {
  std::string mangled;
  std::uint64_t base_ns;
  std::int32_t grid, block;
};

std::vector<KernelKind> kernel_kinds(std::mt19937_64& rng) {
  static const char* ops[] = {"gemm", "bias_relu", "softmax",   "layernorm", "swish",
                              "add",  "reduce",    "transpose", "evonorm",   "copy"};
  std::uniform_int_distribution<std::uint64_t> base(2'000, 400'000);
  std::vector<KernelKind> kinds;
  for (int i = 0; i < kNames; ++i) {
    const std::string op = ops[i % 10];
    // void fuselens::kernels::<op><TILE>(float const*, float*, int)
    const std::string mangled = "_ZN8fuselens7kernels" + std::to_string(op.size()) + op + "ILi" +
                                std::to_string(i) + "EEEvPKfPfi";
    kinds.push_back({mangled, base(rng), 64 << (i % 6), 128 << (i % 3)});
  }
  return kinds;
}

/// The calling context tree: root -> main -> train -> step -> layer L -> op -> launch site. Returns
/// the tree (without contexts) and the node index of the launch site of (layer, op).
db::CallingContextTree context_tree(std::vector<std::uint32_t>& launch_site) {
  db::CallingContextTree tree;
  tree.pid = kPid;
  auto frame = [&](const std::string& function, const std::string& file, std::uint32_t line) {
    db::FrameInfo f;
    f.module = "/opt/bench/train";
    f.module_offset = 0x1000 + 16 * tree.frames.size();
    f.function = function;
    f.file = file;
    f.line = line;
    tree.frames.push_back(f);
    return static_cast<std::uint32_t>(tree.frames.size() - 1);
  };
  auto node = [&](std::uint32_t parent, std::uint32_t frame_index) {
    tree.nodes.push_back({parent, frame_index});
    return static_cast<std::uint32_t>(tree.nodes.size() - 1);
  };
  node(0, 0);  // root
  const auto main_node = node(0, frame("main", "train.cpp", 10));
  const auto train = node(main_node, frame("train(Model&)", "train.cpp", 42));
  const auto step = node(train, frame("train_step(Model&, Batch const&)", "train.cpp", 77));
  const auto launch_frame = frame("cudaLaunchKernel", "", 0);
  launch_site.clear();
  for (int layer = 0; layer < kLayers; ++layer) {
    const auto l = node(step, frame("Layer::run(int) [" + std::to_string(layer) + "]", "layer.cpp",
                                    100 + static_cast<std::uint32_t>(layer)));
    for (int op = 0; op < kNames / kLayers + 1; ++op) {
      const auto o = node(
          l, frame("op_" + std::to_string(op), "ops.cpp", 200 + static_cast<std::uint32_t>(op)));
      launch_site.push_back(node(o, launch_frame));
    }
  }
  return tree;
}

struct Options {
  std::string out;
  std::int64_t kernels = 10'000'000;
  std::uint64_t seed = 1;
  bool aggregates = true;   // store the summary's aggregates after finalize, as prof-run does
  bool store_only = false;  // --store-aggregates: only store them into an existing capture
  bool progress = false;    // --progress: print finalize's steps as they start (stderr)
};

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    char* end = nullptr;
    if ((a == "--kernels" || a == "--seed") && i + 1 < argc) {
      const long long v = std::strtoll(argv[++i], &end, 10);
      if (*end != '\0' || v <= 0) return false;
      if (a == "--kernels")
        o.kernels = v;
      else
        o.seed = static_cast<std::uint64_t>(v);
    } else if (a == "--no-aggregates") {
      o.aggregates = false;
    } else if (a == "--progress") {
      o.progress = true;
    } else if (a == "--store-aggregates") {
      o.store_only = true;
    } else if (!a.empty() && a[0] != '-' && o.out.empty()) {
      o.out = a;
    } else {
      return false;
    }
  }
  return !o.out.empty();
}

}  // namespace

// The steps prof-run stores after the aggregates (analyzer/steps/Steps.h, store_steps).
static void store_steps_of(const std::string& path) {
  fuselens::db::Reader reader(
      fuselens::db::Connection(path, fuselens::db::Connection::Mode::ReadWrite));
  const std::string skipped = fuselens::analyzer::store_steps(reader);
  if (!skipped.empty()) std::fprintf(stderr, "synthetic_capture: %s\n", skipped.c_str());
}

// The results of cct and flags prof-run stores after the steps (analyzer/store/AnalysisStore.h).
static double store_analyses_of(const std::string& path) {
  const auto t0 = std::chrono::steady_clock::now();
  fuselens::analyzer::store_analyses(path);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int main(int argc, char** argv) {
  Options opt;
  if (!parse(argc, argv, opt)) {
    std::cerr << "usage: synthetic_capture OUT.sqlite [--kernels N] [--seed S] [--no-aggregates] "
                 "[--progress]\n"
                 "       synthetic_capture CAPTURE.sqlite --store-aggregates\n";
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  double analyses_seconds = 0;
  if (opt.store_only) {
    try {
      fuselens::analyzer::store_summary_aggregates(opt.out);
      store_steps_of(opt.out);
      analyses_seconds = store_analyses_of(opt.out);
      fuselens::analyzer::store_timeline_lod(opt.out);
    } catch (const std::exception& e) {
      std::cerr << "synthetic_capture: error: " << e.what() << "\n";
      return 1;
    }
    std::printf(
        "%s: summary aggregates, steps, analyses and timeline level of detail stored in %.1f s "
        "(analyses %.1f s)\n",
        opt.out.c_str(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
        analyses_seconds);
    return 0;
  }
  try {
    if (std::filesystem::exists(opt.out)) throw db::Error("'" + opt.out + "' exists");
    std::mt19937_64 rng(opt.seed);
    const auto kinds = kernel_kinds(rng);
    std::vector<std::uint32_t> launch_site;
    db::CallingContextTree tree = context_tree(launch_site);
    tree.contexts.reserve(static_cast<std::size_t>(opt.kernels));

    const std::uint64_t t_begin = 1'795'355'418'935'892'046ULL;  // CUPTI clock, as a real H100 run
    db::RunInfo info;
    info.command_line = {"/opt/bench/train", "--steps",
                         std::to_string(opt.kernels / kKernelsPerStep)};
    info.working_directory = "/opt/bench";
    info.host_name = "synthetic";
    info.fuselens_version = "synthetic";
    info.trace = "cuda,memory,api,nvtx,overhead,context";
    info.start_utc_ns = t_begin;
    auto writer = db::Writer::create(opt.out, info);
    db::ProcessInfo process;
    process.pid = kPid;
    process.parent_pid = 1;
    process.executable = "/opt/bench/train";
    process.start_utc_ns = t_begin;
    process.cuda_driver_version = 13000;
    process.cuda_runtime_version = 13000;
    writer.write_process(process);
    db::DeviceInfo device;
    device.uuid = "GPU-synthetic";
    device.name = "NVIDIA H100 80GB HBM3";
    device.cc_major = 9;
    device.sm_count = 132;
    device.core_clock_khz = 1'980'000;
    device.memory_clock_khz = 2'619'000;
    device.memory_bus_width_bits = 5120;
    device.global_memory_bytes = 80ULL << 30;
    device.l2_cache_bytes = 50 << 20;
    writer.write_device(device);
    writer.write_threads({{kPid, kThreads[0], "train"}, {kPid, kThreads[1], "worker"}});

    std::uniform_real_distribution<double> jitter(0.9, 1.3);
    std::uniform_int_distribution<std::uint64_t> launch_cost(2'000, 8'000);
    std::uint64_t host[2] = {t_begin + 1'000'000, t_begin + 1'000'500};  // per launching thread
    std::uint64_t stream_free[kStreams] = {};
    std::uint32_t correlation = 0;
    std::int64_t ranges = 0, others = 0;
    db::RecordBatch batch;
    auto api = [&](int thread, const char* name, std::uint64_t duration) {
      db::ApiCallRecord a;
      a.pid = kPid;
      a.tid = kThreads[thread];
      a.callback_id = 211;
      a.name = name;
      a.start_ns = host[thread];
      a.end_ns = host[thread] + duration;
      a.correlation_id = ++correlation;
      host[thread] = a.end_ns + 500;
      batch.api_calls.push_back(std::move(a));
      return batch.api_calls.back();
    };
    for (std::int64_t done = 0; done < opt.kernels;) {
      // One training step on thread 0 (forward then backward); every 8th step's optimizer on 1.
      const std::int64_t step = done / kKernelsPerStep;
      const int thread = step % 8 == 7 ? 1 : 0;
      const std::uint64_t step_start = host[thread];
      std::uint64_t forward_end = 0;
      const auto& copy_call = api(thread, "cudaMemcpyAsync", 4'000);
      db::MemcpyRecord copy;
      copy.pid = kPid;
      copy.start_ns = copy_call.end_ns + 1'000;
      copy.end_ns = copy.start_ns + 40'000;
      copy.stream_id = 7;
      copy.correlation_id = copy_call.correlation_id;
      copy.copy_kind = db::MemcpyKind::HostToDevice;
      copy.src_kind = db::MemoryKind::Pinned;
      copy.dst_kind = db::MemoryKind::Device;
      copy.bytes = 1 << 20;
      copy.is_async = true;
      batch.memcpys.push_back(copy);
      stream_free[0] = std::max(stream_free[0], copy.end_ns);
      const auto& set_call = api(thread, "cudaMemsetAsync", 3'000);
      db::MemsetRecord set;
      set.pid = kPid;
      set.start_ns = std::max(set_call.end_ns + 1'000, stream_free[0]);
      set.end_ns = set.start_ns + 5'000;
      set.stream_id = 7;
      set.correlation_id = set_call.correlation_id;
      set.bytes = 1 << 18;
      set.memory_kind = db::MemoryKind::Device;
      set.is_async = true;
      batch.memsets.push_back(set);
      stream_free[0] = set.end_ns;
      const auto& malloc_call = api(thread, "cudaMalloc", 20'000);
      db::MemoryEventRecord alloc;
      alloc.pid = kPid;
      alloc.timestamp_ns = malloc_call.start_ns + 10'000;
      alloc.memory_kind = db::MemoryKind::Device;
      alloc.address = 0x7f0000000000ULL + (static_cast<std::uint64_t>(step % 64) << 24);
      alloc.bytes = 8 << 20;
      alloc.correlation_id = malloc_call.correlation_id;
      batch.memory_events.push_back(alloc);
      others += 3;
      for (std::int64_t i = 0; i < kKernelsPerStep && done < opt.kernels; ++i, ++done) {
        if (i == kKernelsPerStep / 2) forward_end = host[thread];
        const int layer = static_cast<int>(i % kLayers);
        const int name = static_cast<int>((i * 7 + step % 3) % kNames);
        const auto& call = api(thread, "cudaLaunchKernel", launch_cost(rng));
        const KernelKind& kind = kinds[static_cast<std::size_t>(name)];
        const int s = static_cast<int>(i % kStreams);
        db::KernelRecord k;
        k.pid = kPid;
        k.start_ns = std::max(call.end_ns + 3'000, stream_free[s]);
        k.end_ns = k.start_ns +
                   static_cast<std::uint64_t>(static_cast<double>(kind.base_ns) * jitter(rng));
        stream_free[s] = k.end_ns;
        k.stream_id = 7 + static_cast<std::uint32_t>(s);
        k.context_id = 1;
        k.correlation_id = call.correlation_id;
        k.grid_x = kind.grid;
        k.grid_y = k.grid_z = 1;
        k.block_x = kind.block;
        k.block_y = k.block_z = 1;
        k.registers_per_thread = 32 + static_cast<std::uint32_t>(name % 5) * 8;
        k.dynamic_shared_bytes = (name % 4) * 4096;
        k.mangled_name = kind.mangled;
        batch.kernels.push_back(std::move(k));
        tree.contexts.push_back(
            {call.correlation_id, kThreads[thread],
             launch_site[static_cast<std::size_t>(layer * (kNames / kLayers + 1) +
                                                  name % (kNames / kLayers + 1))]});
        if (batch.kernels.size() >= static_cast<std::size_t>(kBatch)) {
          writer.write(batch);
          batch.clear();
        }
      }
      if (forward_end == 0) forward_end = host[thread];
      // Host waits for the streams at the end of the step.
      std::uint64_t gpu_end = 0;
      for (const auto f : stream_free) gpu_end = std::max(gpu_end, f);
      const auto& sync_call = api(thread, "cudaStreamSynchronize", 0);
      batch.api_calls.back().end_ns = std::max(sync_call.start_ns + 1'000, gpu_end + 2'000);
      host[thread] = batch.api_calls.back().end_ns + 500;
      db::SyncRecord sync;
      sync.pid = kPid;
      sync.start_ns = sync_call.start_ns;
      sync.end_ns = batch.api_calls.back().end_ns;
      sync.type = db::SyncType::StreamSynchronize;
      sync.stream_id = 7;
      sync.correlation_id = sync_call.correlation_id;
      batch.syncs.push_back(sync);
      const auto& free_call = api(thread, "cudaFree", 15'000);
      db::MemoryEventRecord release = alloc;
      release.operation = db::MemoryOperation::Release;
      release.timestamp_ns = free_call.start_ns + 5'000;
      release.correlation_id = free_call.correlation_id;
      batch.memory_events.push_back(release);
      others += 2;
      const std::uint64_t step_end = host[thread];
      const std::string n = std::to_string(step);
      db::NvtxRangeRecord r;
      r.pid = kPid;
      r.tid = kThreads[thread];
      r.text = "step";
      r.start_ns = step_start;
      r.end_ns = step_end;
      r.payload_kind = db::PayloadKind::Int64;
      r.payload_int = step;
      batch.nvtx_ranges.push_back(r);
      r.depth = 1;
      r.payload_kind = db::PayloadKind::None;
      r.text = "forward";
      r.end_ns = forward_end;
      batch.nvtx_ranges.push_back(r);
      r.text = "backward";
      r.start_ns = forward_end;
      r.end_ns = step_end;
      batch.nvtx_ranges.push_back(r);
      ranges += 3;
      host[1 - thread] = std::max(host[1 - thread], host[thread]);
    }
    writer.write(batch);
    writer.write_calling_contexts(tree);
    process.end_utc_ns = std::max(host[0], host[1]);
    process.records_written = writer.records_written();
    writer.write_process(process);
    const auto t_finalize = std::chrono::steady_clock::now();
    writer.finalize(
        {db::EndReason::Exited, 0, std::nullopt, std::max(host[0], host[1]) + 1'000'000},
        [&](const db::FinalizeProgress& p) {
          if (opt.progress)
            std::fprintf(stderr, "finalize %d/%d %.*s at %.2f s\n", p.number, p.steps,
                         static_cast<int>(p.step.size()), p.step.data(), since(t_finalize));
        });
    const auto t_store = std::chrono::steady_clock::now();
    double steps_seconds = 0;
    if (opt.aggregates) {  // as prof-run does
      fuselens::analyzer::store_summary_aggregates(opt.out);
      const auto t_steps = std::chrono::steady_clock::now();
      store_steps_of(opt.out);
      steps_seconds = since(t_steps);
      analyses_seconds = store_analyses_of(opt.out);
      const auto t_lod = std::chrono::steady_clock::now();
      fuselens::analyzer::store_timeline_lod(opt.out);
      steps_seconds += since(t_lod);
    }
    const double finalize_seconds = std::chrono::duration<double>(t_store - t_finalize).count();
    const double store_seconds = since(t_store) - steps_seconds - analyses_seconds;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto bytes = std::filesystem::file_size(opt.out);
    std::printf(
        "%s: %lld kernels, %lld launch calls, %lld other API calls, %lld NVTX ranges, %zu CCT "
        "nodes;"
        " %.1f MB, %.1f bytes per kernel; written in %.1f s (of which finalize %.1f s, summary "
        "aggregates %.1f s, steps and timeline level of detail %.1f s, cct and flags %.1f s)\n",
        opt.out.c_str(), static_cast<long long>(opt.kernels), static_cast<long long>(opt.kernels),
        static_cast<long long>(others), static_cast<long long>(ranges), tree.nodes.size(),
        static_cast<double>(bytes) / 1e6,
        static_cast<double>(bytes) / static_cast<double>(opt.kernels), seconds, finalize_seconds,
        store_seconds, steps_seconds, analyses_seconds);
  } catch (const std::exception& e) {
    std::cerr << "synthetic_capture: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
