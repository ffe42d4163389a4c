// Calling-context capture without a GPU: paths interned per thread, merged per process, and
// return addresses symbolized to the functions, files and lines of this test binary.
#include <gtest/gtest.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <set>
#include <string>
#include <thread>

#include "CallingContext.h"
#include "PythonFrames.h"
#include "Symbolizer.h"

using namespace fuselens;
using collector::CallingContextRegistry;
using collector::ThreadTree;

namespace {

// The path of a node in the merged tree, root first, as frame indices.
std::vector<std::uint32_t> path(const db::CallingContextTree& t, std::uint32_t node) {
  std::vector<std::uint32_t> out;
  for (; node != 0; node = t.nodes[node].parent) out.insert(out.begin(), t.nodes[node].frame);
  return out;
}

__attribute__((noinline)) int capture_here(std::uintptr_t* pcs) {
  const int n = unw_backtrace(reinterpret_cast<void**>(pcs), ThreadTree::kMaxDepth);
  asm volatile("" ::: "memory");
  return n;
}

__attribute__((noinline)) int leaf_b(std::uintptr_t* pcs) {
  const int n = capture_here(pcs);
  asm volatile("" ::: "memory");
  return n;
}

__attribute__((noinline)) int leaf_c(std::uintptr_t* pcs) {
  const int n = capture_here(pcs);
  asm volatile("" ::: "memory");
  return n + 1 - 1 * (pcs[0] == 0);  // not identical to leaf_b, so the compiler cannot fold them
}

}  // namespace

TEST(ThreadTree, InternsSharedPrefixesOnce) {
  ThreadTree tree(7);
  const std::uintptr_t ab[] = {0xB, 0xA, 0x1};  // leaf first: 1 > A > B
  const std::uintptr_t ac[] = {0xC, 0xA, 0x1};
  tree.record(10, ab, 3);
  tree.record(11, ab, 3);
  tree.record(12, ac, 3);
  tree.record(13, ab, 3);
  // root, 1, A, B, C
  EXPECT_EQ(tree.nodes().size(), 5u);
  ASSERT_EQ(tree.calls().size(), 4u);
  EXPECT_EQ(tree.calls()[0].node, tree.calls()[1].node);
  EXPECT_EQ(tree.calls()[0].node, tree.calls()[3].node);
  EXPECT_NE(tree.calls()[0].node, tree.calls()[2].node);
  EXPECT_EQ(tree.nodes()[tree.calls()[2].node].value, 0xCu);
  EXPECT_EQ(tree.nodes()[tree.nodes()[tree.calls()[2].node].parent].value, 0xAu);
}

TEST(ThreadTree, KeepsRecursionAsDistinctDepths) {
  ThreadTree tree(1);
  const std::uintptr_t deep[] = {0xF, 0xF, 0xF, 0x1};
  const std::uintptr_t shallow[] = {0xF, 0x1};
  tree.record(1, deep, 4);
  tree.record(2, shallow, 2);
  tree.record(3, deep, 4);
  EXPECT_EQ(tree.nodes().size(), 5u);  // root, 1, F, F>F, F>F>F
  EXPECT_EQ(tree.calls()[0].node, tree.calls()[2].node);
}

TEST(CallingContextRegistry, MergesThreadsIntoOneTreeAndSymbolizesThisBinary) {
  CallingContextRegistry registry;
  std::uintptr_t pcs[ThreadTree::kMaxDepth];
  int n = leaf_b(pcs);
  registry.this_thread().record(100, pcs, n);
  n = leaf_c(pcs);
  registry.this_thread().record(101, pcs, n);
  std::thread worker([&] {
    std::uintptr_t own[ThreadTree::kMaxDepth];
    const int m = leaf_b(own);
    registry.this_thread().record(200, own, m);
  });
  worker.join();
  EXPECT_EQ(registry.recorded_calls(), 3u);

  const auto tree = registry.merge_and_symbolize(4242);
  EXPECT_EQ(tree.pid, 4242u);
  ASSERT_EQ(tree.contexts.size(), 3u);
  std::set<std::uint32_t> tids;
  for (const auto& c : tree.contexts) tids.insert(c.tid);
  EXPECT_EQ(tids.size(), 2u);
  for (std::size_t i = 1; i < tree.nodes.size(); ++i) EXPECT_LT(tree.nodes[i].parent, i);

  // The leaf frames: capture_here's caller is leaf_b for 100 and 200, leaf_c for 101.
  auto caller_of_capture = [&](const db::CallingContextTree::Context& c) {
    const auto p = path(tree, c.node);
    for (std::size_t i = p.size(); i-- > 0;) {
      const auto& f = tree.frames[p[i]];
      if (f.function.find("leaf_") != std::string::npos) return f;
    }
    return db::FrameInfo{};
  };
  const auto f100 = caller_of_capture(tree.contexts[0]);
  const auto f101 = caller_of_capture(tree.contexts[1]);
  EXPECT_NE(f100.function.find("leaf_b"), std::string::npos) << f100.function;
  EXPECT_NE(f101.function.find("leaf_c"), std::string::npos) << f101.function;
  EXPECT_NE(f100.module.find("collector_tests"), std::string::npos) << f100.module;
  EXPECT_NE(f100.file.find("CallingContextTest.cpp"), std::string::npos) << f100.file;
  EXPECT_GT(f100.line, 0u);
  // The main thread's path to leaf_b and the worker's differ below leaf_b (main vs thread entry)
  // but both contexts name leaf_b.
  EXPECT_NE(caller_of_capture(tree.contexts[2]).function.find("leaf_b"), std::string::npos);
}

TEST(Symbolizer, LeavesUnknownAddressesEmpty) {
  const auto frames = collector::symbolize({0x10});
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_TRUE(frames[0].module.empty());
  EXPECT_TRUE(frames[0].function.empty());
}

TEST(ThreadTree, InternsPythonFramesUnderTheirNativePathAndReusesThem) {
  ThreadTree tree(3);
  const std::uintptr_t native[] = {0xB, 0xA};  // leaf first
  const ThreadTree::Value encoder[] = {collector::kPythonTag | 0x30, collector::kPythonTag | 0x10};
  const ThreadTree::Value decoder[] = {collector::kPythonTag | 0x31, collector::kPythonTag | 0x10};
  const auto base = tree.intern_native(native, 2);
  bool created = false;
  const auto e1 = tree.intern_suffix(base, encoder, 2, &created);
  EXPECT_TRUE(created);
  const auto d1 = tree.intern_suffix(base, decoder, 2, &created);
  EXPECT_TRUE(created);
  const auto e2 = tree.intern_suffix(base, encoder, 2, &created);
  EXPECT_FALSE(created);
  EXPECT_EQ(e1, e2);
  EXPECT_NE(e1, d1);
  EXPECT_EQ(tree.nodes()[e1].parent, tree.nodes()[d1].parent);  // the shared outer Python frame
  EXPECT_EQ(tree.nodes()[tree.nodes()[e1].parent].parent, base);
  // The same Python frames under another native path are other nodes.
  const std::uintptr_t other[] = {0xC, 0xA};
  const auto e3 = tree.intern_suffix(tree.intern_native(other, 2), encoder, 2, &created);
  EXPECT_TRUE(created);
  EXPECT_NE(e3, e1);
}

TEST(ThreadTree, SuffixesAlternatingBetweenNativePathsAreTheSameNodesEveryTime) {
  // Ops alternate between native paths (conv, relu, conv, ...), each from its own Python stack;
  // 1,500 native paths is more than the per-base memory keeps, so the shared fallback runs too.
  ThreadTree tree(4);
  constexpr int kBases = 1500;
  std::vector<std::uint32_t> bases, first;
  for (int b = 0; b < kBases; ++b) {
    const std::uintptr_t native[] = {0x100 + static_cast<std::uintptr_t>(b), 0xA};
    bases.push_back(tree.intern_native(native, 2));
  }
  auto suffix_of = [](int b) {
    return std::vector<ThreadTree::Value>{collector::kPythonTag | (0x1000 + 16 * b),
                                          collector::kPythonTag | 0x20,
                                          collector::kPythonTag | 0x10};
  };
  for (int round = 0; round < 3; ++round) {
    for (int b = 0; b < kBases; ++b) {
      bool created = false;
      const auto values = suffix_of(b);
      const auto leaf = tree.intern_suffix(bases[b], values.data(), 3, &created);
      if (round == 0) {
        EXPECT_TRUE(created) << b;
        first.push_back(leaf);
      } else {
        EXPECT_FALSE(created) << b;
        EXPECT_EQ(leaf, first[b]) << b;
      }
      EXPECT_EQ(tree.nodes()[tree.nodes()[tree.nodes()[leaf].parent].parent].parent, bases[b]);
    }
  }
}

TEST(CallingContextRegistry, SplicesPythonFramesInPlaceOfTheInterpreterFrames) {
  // Native, root first: _start (exe), main (interpreter), eval (interpreter), at::linear (torch),
  // cuLaunchKernel. Python, root first: <module> > train > encoder.
  constexpr std::uintptr_t kStart = 0x1000, kMain = 0x5010, kEval = 0x5020, kLinear = 0x9000,
                           kLaunch = 0xA000;
  const std::uintptr_t native_leaf_first[] = {kLaunch, kLinear, kEval, kMain, kStart};
  std::vector<ThreadTree::Value> py_leaf_first;
  alignas(16) static char code[3][16];
  for (int i = 2; i >= 0; --i) py_leaf_first.push_back(collector::encode_python_frame(code[i], 7u + static_cast<unsigned>(i)));

  CallingContextRegistry registry;
  auto& tree = registry.this_thread();
  const auto base = tree.intern_native(native_leaf_first, 5);
  bool created = false;
  const auto leaf = tree.intern_suffix(base, py_leaf_first.data(), 3, &created);
  const char* names[] = {"<module>", "train", "encoder"};
  for (int i = 0; i < 3; ++i) {
    db::FrameInfo f;
    f.kind = db::FrameKind::Python;
    f.module = f.file = "/w/model.py";
    f.function = names[i];
    f.line = 10u + static_cast<unsigned>(i);
    tree.set_python_frame(py_leaf_first[static_cast<std::size_t>(2 - i)], f);
  }
  tree.add_call(77, leaf);
  tree.add_call(78, base);  // a call with no Python frames keeps its native path

  collector::PythonFrames python(collector::PythonApi{});
  python.set_interpreter_text({{0x5000, 0x6000}});
  const auto merged = registry.merge_and_symbolize(1, &python);
  ASSERT_EQ(merged.contexts.size(), 2u);
  const auto spliced = path(merged, merged.contexts[0].node);
  ASSERT_EQ(spliced.size(), 6u);  // _start, 3 Python frames, at::linear, cuLaunchKernel
  EXPECT_EQ(merged.frames[spliced[0]].kind, db::FrameKind::Native);
  for (int i = 0; i < 3; ++i) {
    const auto& f = merged.frames[spliced[static_cast<std::size_t>(1 + i)]];
    EXPECT_EQ(f.kind, db::FrameKind::Python);
    EXPECT_EQ(f.function, names[i]);
    EXPECT_EQ(f.file, "/w/model.py");
    EXPECT_EQ(f.line, 10u + static_cast<unsigned>(i));
  }
  EXPECT_EQ(merged.frames[spliced[4]].kind, db::FrameKind::Native);
  EXPECT_EQ(path(merged, merged.contexts[1].node).size(), 5u);
}
