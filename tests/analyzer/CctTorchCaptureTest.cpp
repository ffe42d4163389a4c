// The calling contexts of a real PyTorch capture, tests/data/cct_torch.sqlite
// (workloads/python/cct_torch.py on an H100, tests/data/README.md): encoder() and decoder() launch
// kernels of the same names, told apart only by their Python function and line; backward kernels
// are separated from forward ones and, in the emit_nvtx steps, placed under the forward line that
// created them. Skips until the capture is committed.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "cct/CallingContext.h"
#include "fuselens/db/Reader.h"

using namespace fuselens;
using namespace fuselens::analyzer;

namespace {

constexpr const char* kEncoder = "encoder [cct_torch.py:39]";
constexpr const char* kDecoder = "decoder [cct_torch.py:43]";
constexpr int kSteps = 5, kNvtxSteps = 3;  // cct_torch.py: WARMUP_STEPS + STEPS, STEPS

std::string capture() { return std::string(FUSELENS_TEST_DATA_DIR) + "/cct_torch.sqlite"; }

// What the GPU operations below one row are: kernel label -> launches, forward and backward apart,
// and the backward autograd nodes seen on the way.
struct Subtree {
  std::map<std::string, std::int64_t> forward, backward;
  std::map<std::string, std::int64_t> backward_ops;  // "<backward> X" -> launches below it
};

void collect(const CctReport& r, int id, bool under_backward, Subtree& out) {
  const auto& row = r.rows[static_cast<std::size_t>(id)];
  if (row.kind == CctRow::Kind::BackwardOp) {
    out.backward_ops[row.label] += row.inclusive.launches;
    under_backward = true;
  }
  if (row.kind == CctRow::Kind::GpuOperation) {
    EXPECT_EQ(row_phase(row), under_backward ? "backward" : "forward") << row.label;
    (under_backward ? out.backward : out.forward)[row.label] += row.inclusive.launches;
  }
  for (const int c : row.children) collect(r, c, under_backward, out);
}

Subtree below(const CctReport& r, const std::string& label) {
  Subtree out;
  int rows = 0;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    if (r.rows[i].kind == CctRow::Kind::Frame && r.rows[i].label == label) {
      collect(r, static_cast<int>(i), false, out);
      ++rows;
    }
  }
  EXPECT_GE(rows, 1) << label;
  return out;
}

std::int64_t total(const std::map<std::string, std::int64_t>& m) {
  std::int64_t n = 0;
  for (const auto& [k, v] : m) n += v;
  return n;
}

}  // namespace

TEST(CctTorchCapture, AttributesEachKernelToItsPythonFunctionAndSeparatesBackward) {
  if (!std::filesystem::exists(capture()))
    GTEST_SKIP() << "tests/data/cct_torch.sqlite is not captured yet";
  const db::Reader reader(capture());
  const auto r = calling_context_report(reader, CctOptions{});
  ASSERT_TRUE(r.available) << r.unavailable_reason;
  EXPECT_EQ(r.unattributed_operations, 0);
  EXPECT_TRUE(r.has_phases);
  EXPECT_GT(r.backward_linked, 0);    // the emit_nvtx steps
  EXPECT_GT(r.backward_unlinked, 0);  // the warm-up steps
  EXPECT_GT(reader.query_int("SELECT COUNT(*) FROM frame f JOIN strings s ON s.id = f.file_id"
                             " WHERE f.kind = 2 AND s.value LIKE '%cct_torch.py'"),
            0);

  const auto enc = below(r, kEncoder);
  const auto dec = below(r, kDecoder);
  // Forward: a Linear (GEMM) and a ReLU per step in each function: kernels of the same names.
  EXPECT_GE(total(enc.forward), 2 * kSteps);
  EXPECT_GE(total(dec.forward), 2 * kSteps);
  int shared = 0;
  for (const auto& [name, launches] : enc.forward) shared += dec.forward.count(name) ? 1 : 0;
  EXPECT_GE(shared, 2);
  // Backward, linked in the emit_nvtx steps: each function's Linear and ReLU backward.
  for (const auto* s : {&enc, &dec}) {
    EXPECT_GE(s->backward_ops.count("<backward> AddmmBackward0"), 1u);
    EXPECT_GE(s->backward_ops.count("<backward> ReluBackward0"), 1u);
    EXPECT_GE(total(s->backward), 2 * kNvtxSteps);
  }
  // Neither function's subtree holds the other's frame.
  for (const auto& row : r.rows) {
    if (row.label != kEncoder) continue;
    for (int a = row.parent; a > 0; a = r.rows[static_cast<std::size_t>(a)].parent) {
      EXPECT_NE(r.rows[static_cast<std::size_t>(a)].label, kDecoder);
    }
  }
  // The phase filter keeps exactly one side.
  CctOptions backward;
  backward.phase = CctPhase::Backward;
  const auto b = calling_context_report(reader, backward);
  EXPECT_EQ(b.total.gpu_time_ns, r.phase_total[static_cast<int>(CctPhase::Backward)].gpu_time_ns);
  EXPECT_GT(b.total.launches, 0);
}
