// Python calling contexts without a GPU: the splicing rule on synthetic frames, the frame walk
// on a fake C API (so every branch runs on any machine), and, where a libpython can be loaded,
// the walk and the first-sight description on a real interpreter.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "CallingContext.h"
#include "ContextCapture.h"
#include "PythonFrames.h"
#include "PythonSplice.h"

using fuselens::collector::decode_python_frame;
using fuselens::collector::encode_python_frame;
using fuselens::collector::is_python_value;
using fuselens::collector::PythonApi;
using fuselens::collector::PythonFrameInfo;
using fuselens::collector::PythonFrames;
using fuselens::collector::splice_python_frames;
using fuselens::collector::SplicedFrame;

namespace {

std::vector<SplicedFrame> native(std::initializer_list<std::uint32_t> indices) {
  std::vector<SplicedFrame> out;
  for (const auto i : indices) out.push_back({false, i});
  return out;
}

std::vector<SplicedFrame> python(std::initializer_list<std::uint32_t> indices) {
  std::vector<SplicedFrame> out;
  for (const auto i : indices) out.push_back({true, i});
  return out;
}

std::vector<SplicedFrame> concat(std::vector<SplicedFrame> a, const std::vector<SplicedFrame>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST(PythonSplice, ReplacesTheInterpreterRunWithThePythonFrames) {
  // _start, __libc_start_main, main*, Py_RunMain*, _PyEval*, THPVariable_linear, at::linear, launch
  // (* inside the interpreter); three Python frames.
  const std::vector<bool> interp = {false, false, true, true, true, false, false, false};
  EXPECT_EQ(splice_python_frames(interp, 3),
            concat(concat(native({0, 1}), python({0, 1, 2})), native({5, 6, 7})));
}

TEST(PythonSplice, DropsNativeFramesBetweenTwoInterpreterRuns) {
  // An extension calling back into Python: eval*, ext_call, slot_tp_call*, eval*, torch op, launch.
  const std::vector<bool> interp = {true, false, true, true, false, false};
  EXPECT_EQ(splice_python_frames(interp, 2), concat(python({0, 1}), native({4, 5})));
}

TEST(PythonSplice, KeepsTheNativePathWithoutPythonFrames) {
  const std::vector<bool> interp = {false, true, true, false};
  EXPECT_EQ(splice_python_frames(interp, 0), native({0, 1, 2, 3}));
}

TEST(PythonSplice, PutsPythonFramesAboveAPathWithoutInterpreterFrames) {
  const std::vector<bool> interp = {false, false};
  EXPECT_EQ(splice_python_frames(interp, 2), concat(python({0, 1}), native({0, 1})));
  EXPECT_EQ(splice_python_frames({}, 1), python({0}));
}

TEST(PythonFrameValue, PacksCodeAddressAndOffset) {
  alignas(16) static char code[32];
  const auto v = encode_python_frame(code, 1234);
  EXPECT_TRUE(is_python_value(v));
  EXPECT_EQ(decode_python_frame(v).first, static_cast<void*>(code));
  EXPECT_EQ(decode_python_frame(v).second, 1234u);
  EXPECT_EQ(decode_python_frame(encode_python_frame(code, 1u << 30)).second,
            (1u << 20) - 2);                        // clamped below kModulePosition
  EXPECT_EQ(encode_python_frame(code + 8, 1), 0u);  // not 16-byte aligned
  EXPECT_EQ(encode_python_frame(nullptr, 1), 0u);
  EXPECT_FALSE(is_python_value(0x7fff12345678ull));  // a native return address
}

// A fake interpreter: frames are structs, "objects" count their references.
namespace fake {

struct alignas(16) Object {
  int refs = 1;
  std::string text;  // for strings
  Object* filename = nullptr;
  Object* qualname = nullptr;
};

struct Frame {
  Object object;
  Frame* back = nullptr;
  Object* code = nullptr;
  int lasti = 0;
};

bool gil = true;
bool has_thread_state = true;
Frame* current = nullptr;
int increfs = 0, decrefs = 0, fetches = 0, restores = 0;

Object* obj(void* p) { return static_cast<Object*>(p); }
Frame* frame_of(void* p) { return reinterpret_cast<Frame*>(p); }  // object is the first member

PythonApi api() {
  PythonApi a;
  a.is_initialized = [] { return 1; };
  a.gil_check = [] { return gil ? 1 : 0; };
  a.current_thread_state = []() -> void* { return has_thread_state ? &gil : nullptr; };
  a.get_frame = []() -> void* { return current ? &current->object : nullptr; };
  a.frame_back = [](void* f) -> void* {
    Frame* back = frame_of(f)->back;
    if (!back) return nullptr;
    ++back->object.refs;
    ++increfs;
    return &back->object;
  };
  a.frame_code = [](void* f) -> void* {
    ++frame_of(f)->code->refs;
    ++increfs;
    return frame_of(f)->code;
  };
  a.frame_lasti = [](void* f) { return frame_of(f)->lasti; };
  a.frame_line = [](void*) { return 0; };
  a.incref = [](void* o) {
    ++obj(o)->refs;
    ++increfs;
  };
  a.decref = [](void* o) {
    --obj(o)->refs;
    ++decrefs;
  };
  a.code_line = [](void*, int offset) { return 100 + offset / 2; };
  a.get_attr = [](void* o, const char* name) -> void* {
    Object* attr = std::string(name) == "co_filename"   ? obj(o)->filename
                   : std::string(name) == "co_qualname" ? obj(o)->qualname
                                                        : nullptr;
    if (attr) {
      ++attr->refs;
      ++increfs;
    }
    return attr;
  };
  a.as_utf8 = [](void* o) { return obj(o)->text.c_str(); };
  a.err_fetch = [](void** t, void** e, void** tb) {
    *t = *e = *tb = nullptr;
    ++fetches;
  };
  a.err_restore = [](void*, void*, void*) { ++restores; };
  return a;
}

}  // namespace fake

TEST(PythonFrames, WalksTheFramesLeafFirstAndBalancesReferences) {
  fake::Object file{1, "/w/model.py"}, n_module{1, "<module>"}, n_train{1, "train"},
      n_enc{1, "Encoder.forward"};
  fake::Object c_module, c_train, c_enc;
  c_module.filename = c_train.filename = c_enc.filename = &file;
  c_module.qualname = &n_module;
  c_train.qualname = &n_train;
  c_enc.qualname = &n_enc;
  fake::Frame f_module{{}, nullptr, &c_module, 10};
  fake::Frame f_train{{}, &f_module, &c_train, 20};
  fake::Frame f_enc{{}, &f_train, &c_enc, 42};
  fake::current = &f_enc;
  fake::increfs = fake::decrefs = 0;

  const PythonFrames frames(fake::api());
  ASSERT_TRUE(frames.usable());
  std::uint64_t values[PythonFrames::kMaxDepth];
  ASSERT_EQ(frames.walk(values, PythonFrames::kMaxDepth), 3);
  EXPECT_EQ(decode_python_frame(values[0]).first, static_cast<void*>(&c_enc));
  EXPECT_EQ(decode_python_frame(values[0]).second, 21u);  // byte offset 42 in 2-byte code units
  EXPECT_EQ(decode_python_frame(values[2]).first, static_cast<void*>(&c_module));
  EXPECT_EQ(fake::increfs, fake::decrefs);  // the walk keeps no reference
  EXPECT_EQ(f_train.object.refs, 1);

  // Depth limit: the innermost frames are kept.
  EXPECT_EQ(frames.walk(values, 2), 2);
  EXPECT_EQ(decode_python_frame(values[1]).first, static_cast<void*>(&c_train));

  // First sight: names and line, the code object kept, the pending exception put back.
  const PythonFrameInfo info = frames.describe(values[0]);
  EXPECT_EQ(info.file, "/w/model.py");
  EXPECT_EQ(info.function, "Encoder.forward");
  EXPECT_EQ(info.line, 121u);  // 100 + byte offset 42 / 2
  EXPECT_EQ(c_enc.refs, 2);    // retained
  EXPECT_EQ(file.refs, 1);     // attributes released
  EXPECT_EQ(fake::restores, 1);
}

TEST(PythonFrames, RecordsNothingWithoutTheGil) {
  fake::Object code;
  fake::Frame f{{}, nullptr, &code, 0};
  fake::current = &f;
  const PythonFrames frames(fake::api());
  std::uint64_t values[4];
  fake::gil = false;
  EXPECT_EQ(frames.walk(values, 4), 0);
  fake::gil = true;
  fake::has_thread_state =
      false;  // PyGILState_Check says yes for every thread with sub-interpreters
  EXPECT_EQ(frames.walk(values, 4), 0);
  fake::has_thread_state = true;
  EXPECT_EQ(frames.walk(values, 4), 1);
  fake::current = nullptr;
  EXPECT_EQ(frames.walk(values, 4), 0);
}

TEST(PythonFrames, IsUnusableWithoutTheInterpreter) {
  const PythonFrames none{PythonApi{}};
  EXPECT_FALSE(none.usable());
  std::uint64_t values[4];
  EXPECT_EQ(none.walk(values, 4), 0);
  // This test binary embeds no Python unless the next test loaded one: either way no crash.
  const auto process = PythonFrames::from_process();
  EXPECT_EQ(process.walk(values, 4), 0);
}

// A real interpreter: libpython loaded with RTLD_GLOBAL (as a python executable exports it), a
// script that calls back into this binary through ctypes.PyDLL (which keeps the GIL).
namespace {

const PythonFrames* g_real = nullptr;
std::vector<PythonFrameInfo> g_seen;
int g_from_thread = -1;

}  // namespace

extern "C" __attribute__((visibility("default"), used)) void fuselens_test_python_capture() {
  std::uint64_t values[PythonFrames::kMaxDepth];
  const int n = g_real->walk(values, PythonFrames::kMaxDepth);
  for (int i = 0; i < n; ++i) g_seen.push_back(g_real->describe(values[i]));
  std::thread([&] {
    std::uint64_t own[4];
    g_from_thread = g_real->walk(own, 4);  // a C++ thread without the GIL
  }).join();
}

namespace {

// libpython loaded and initialized once for the process; null when none can be loaded.
void* python_library() {
  static void* lib = [] {
    void* handle = nullptr;
    for (const char* name : {"libpython3.13.so.1.0", "libpython3.12.so.1.0", "libpython3.11.so.1.0",
                             "libpython3.10.so.1.0", "libpython3.9.so.1.0"}) {
      if ((handle = ::dlopen(name, RTLD_NOW | RTLD_GLOBAL)) != nullptr) break;
    }
    auto initialize =
        handle ? reinterpret_cast<void (*)(int)>(::dlsym(handle, "Py_InitializeEx")) : nullptr;
    if (!initialize || !::dlsym(handle, "PyRun_SimpleString")) return static_cast<void*>(nullptr);
    initialize(0);
    return handle;
  }();
  return lib;
}

int run_python(const char* script) {
  auto run =
      reinterpret_cast<int (*)(const char*)>(::dlsym(python_library(), "PyRun_SimpleString"));
  return run(script);
}

}  // namespace

TEST(PythonFrames, WalksARealInterpreter) {
  void* lib = python_library();
  if (!lib) GTEST_SKIP() << "no libpython3.9+ shared library on this machine";
  const auto frames = PythonFrames::from_process();
  ASSERT_TRUE(frames.usable());
  EXPECT_FALSE(frames.interpreter_text().empty());
  EXPECT_TRUE(
      frames.in_interpreter(reinterpret_cast<std::uintptr_t>(::dlsym(lib, "PyEval_GetFrame")) + 1));
  std::uint64_t values[4];
  EXPECT_EQ(frames.walk(values, 4), 0);  // this thread holds the GIL, but no Python code runs

  g_real = &frames;
  ASSERT_EQ(run_python("import ctypes\n"
                       "lib = ctypes.PyDLL(None)\n"
                       "def inner():\n"
                       "    lib.fuselens_test_python_capture()\n"
                       "class Model:\n"
                       "    def outer(self):\n"
                       "        inner()\n"
                       "Model().outer()\n"),
            0);
  ASSERT_GE(g_seen.size(), 3u);
  EXPECT_EQ(g_seen[0].function, "inner");
  EXPECT_EQ(g_seen[0].line, 4u);
  EXPECT_EQ(g_seen[0].file, "<string>");
  EXPECT_NE(g_seen[1].function.find("outer"), std::string::npos);  // "Model.outer" from 3.11 on
  EXPECT_EQ(g_seen[1].line, 7u);
  EXPECT_EQ(g_seen[2].function, "<module>");
  EXPECT_EQ(g_seen[2].line, 8u);
  EXPECT_EQ(g_from_thread, 0);
}

// The same through ctypes.CDLL, which releases the GIL around the call, as PyTorch's ops do
// before they launch kernels: on CPython 3.11 and 3.12 the frames are read as memory
// (PythonLayout.h) and described without the GIL; elsewhere the thread gets none.
TEST(PythonFrames, WalksAThreadThatReleasedTheGil) {
  void* lib = python_library();
  if (!lib) GTEST_SKIP() << "no libpython3.9+ shared library on this machine";
  const auto frames = PythonFrames::from_process();
  ASSERT_TRUE(frames.usable());
  const auto* version = static_cast<const unsigned long*>(::dlsym(lib, "Py_Version"));
  const bool layout =
      version && fuselens::collector::PythonLayout::for_version(*version).has_value();
  EXPECT_EQ(frames.reads_memory(), layout);
  g_real = &frames;
  g_seen.clear();
  g_from_thread = -1;
  ASSERT_EQ(run_python("import ctypes\n"
                       "lib = ctypes.CDLL(None)\n"
                       "def inner():\n"
                       "    lib.fuselens_test_python_capture()\n"
                       "class Model:\n"
                       "    def outer(self):\n"
                       "        inner()\n"
                       "Model().outer()\n"),
            0);
  EXPECT_EQ(g_from_thread, 0);  // a C++ thread that never ran Python
  if (!layout) {
    EXPECT_TRUE(g_seen.empty());
    GTEST_SKIP() << "no memory layout for this CPython: frames only with the GIL";
  }
  ASSERT_GE(g_seen.size(), 3u);
  EXPECT_EQ(g_seen[0].function, "inner");
  EXPECT_EQ(g_seen[0].line, 4u);
  EXPECT_EQ(g_seen[0].file, "<string>");
  EXPECT_EQ(g_seen[1].function, "Model.outer");
  EXPECT_EQ(g_seen[1].line, 7u);
  EXPECT_EQ(g_seen[2].function, "<module>");
  EXPECT_EQ(g_seen[2].line, 8u);
}

// The module view's frames on a real interpreter: once describe() has named
// torch.nn.Module._call_impl (a stand-in compiled under the file name torch/nn/modules/module.py,
// whose closure keeps `self` in a cell, as torch's does),
// walk() writes the instance being called (its `self`, read as memory from the frame) right below
// each _call_impl frame, outermost module last (values are leaf first).
namespace {

struct ModuleSeen {
  std::uint64_t address;
  std::string cls;
  bool below_call_impl;  // the next value (towards the root) is a _call_impl frame
};
std::vector<ModuleSeen> g_modules;
std::vector<std::uint64_t> g_ids;

}  // namespace

extern "C" __attribute__((visibility("default"), used)) void fuselens_test_module_capture(
    std::uint64_t inner_id, std::uint64_t outer_id) {
  std::uint64_t values[PythonFrames::kMaxDepth];
  int n = g_real->walk(values, PythonFrames::kMaxDepth);
  for (int i = 0; i < n; ++i) g_real->describe(values[i]);  // first sight: names _call_impl
  n = g_real->walk(values, PythonFrames::kMaxDepth);
  g_modules.clear();
  for (int i = 0; i < n; ++i) {
    if (!fuselens::collector::is_module_value(values[i])) continue;
    const auto info = g_real->describe(values[i]);
    const bool below = i + 1 < n && g_real->describe(values[i + 1]).function == "Module._call_impl";
    g_modules.push_back({info.address, info.function, below});
  }
  g_ids = {inner_id, outer_id};
}

TEST(PythonFrames, WritesTheModuleOfEachCallImplFrame) {
  void* lib = python_library();
  if (!lib) GTEST_SKIP() << "no libpython3.9+ shared library on this machine";
  auto frames = PythonFrames::from_process();
  ASSERT_TRUE(frames.usable());
  if (!frames.reads_memory()) GTEST_SKIP() << "no memory layout for this CPython";
  frames.set_module_frames(true);
  g_real = &frames;
  ASSERT_EQ(run_python("import ctypes\n"
                       "lib = ctypes.PyDLL(None)\n"
                       "src = 'class Module:\\n'\\\n"
                       "      '    def _call_impl(self, *args):\\n'\\\n"
                       "      '        def hook():\\n'\\\n"  // a closure: `self` lives in a cell
                       "      '            return self\\n'\\\n"
                       "      '        return self.forward(*args)\\n'\\\n"
                       "      '    __call__ = _call_impl\\n'\n"
                       "ns = {}\n"
                       "exec(compile(src, '/site/torch/nn/modules/module.py', 'exec'), ns)\n"
                       "class Inner(ns['Module']):\n"
                       "    def forward(self, outer):\n"
                       "        lib.fuselens_test_module_capture(ctypes.c_uint64(id(self)),\n"
                       "                                         ctypes.c_uint64(id(outer)))\n"
                       "class Outer(ns['Module']):\n"
                       "    def __init__(self):\n"
                       "        self.inner = Inner()\n"
                       "    def forward(self):\n"
                       "        return self.inner(self)\n"
                       "Outer()()\n"),
            0);
  ASSERT_EQ(g_modules.size(), 2u);
  EXPECT_EQ(g_modules[0].address, g_ids[0]);  // leaf first: the inner module
  EXPECT_EQ(g_modules[0].cls, "Inner");
  EXPECT_EQ(g_modules[1].address, g_ids[1]);
  EXPECT_EQ(g_modules[1].cls, "Outer");
  EXPECT_TRUE(g_modules[0].below_call_impl);
  EXPECT_TRUE(g_modules[1].below_call_impl);
  EXPECT_TRUE(frames.saw_module_call());
  frames.set_module_frames(false);  // off: no module value
  g_modules = {{0, "sentinel", false}};
  EXPECT_EQ(run_python("Outer()()\n"), 0);
  EXPECT_TRUE(g_modules.empty());
}

TEST(PythonFrameValue, ModuleValuesAreTaggedApart) {
  alignas(16) static char object[32];
  const auto value = fuselens::collector::encode_module_value(object);
  ASSERT_NE(value, 0u);
  EXPECT_TRUE(fuselens::collector::is_module_value(value));
  EXPECT_TRUE(is_python_value(value));
  EXPECT_EQ(decode_python_frame(value).first, static_cast<void*>(object));
  // A frame position never reads as a module value, even clamped.
  EXPECT_FALSE(fuselens::collector::is_module_value(encode_python_frame(object, 0xFFFFFFFFu)));
  EXPECT_EQ(fuselens::collector::encode_module_value(object + 8), 0u);  // misaligned
}

// The whole capture path on a real interpreter: ContextCapture records the native stack and the
// Python frames of a call made from Python, and the merge splices the Python frames in place of
// libpython's frames, keeping the native frames above (the test program that runs the script)
// and below (ctypes, the function it called).
namespace {

fuselens::collector::ContextCapture* g_capture = nullptr;

}  // namespace

extern "C" __attribute__((visibility("default"), used, noinline)) void
fuselens_test_python_record() {
  g_capture->record(501);
  asm volatile("" ::: "memory");
}

TEST(PythonFrames, CaptureSplicesARealInterpretersFrames) {
  if (!python_library()) GTEST_SKIP() << "no libpython3.9+ shared library on this machine";
  fuselens::collector::CallingContextRegistry registry;
  fuselens::collector::ContextCapture capture(
      registry, fuselens::collector::ContextMethod::Cached,
      std::make_unique<PythonFrames>(PythonFrames::from_process()));
  ASSERT_NE(capture.python(), nullptr);
  g_capture = &capture;
  ASSERT_EQ(run_python("import ctypes\n"
                       "record = ctypes.PyDLL(None).fuselens_test_python_record\n"
                       "def encoder():\n"
                       "    record()\n"
                       "def decoder():\n"
                       "    record()\n"
                       "for step in range(3):\n"
                       "    encoder()\n"
                       "    decoder()\n"),
            0);
  const auto& calls = registry.this_thread().calls();
  ASSERT_EQ(calls.size(), 6u);
  EXPECT_EQ(calls[0].node, calls[2].node);  // encoder's line, step after step
  EXPECT_NE(calls[0].node, calls[1].node);  // encoder vs decoder: same native stack
  const auto merged = registry.merge_and_symbolize(1, capture.python());
  ASSERT_EQ(merged.contexts.size(), 6u);
  for (int which = 0; which < 2; ++which) {
    std::vector<const fuselens::db::FrameInfo*> path;  // root first
    for (auto n = merged.contexts[static_cast<std::size_t>(which)].node; n != 0;
         n = merged.nodes[n].parent) {
      path.insert(path.begin(), &merged.frames[merged.nodes[n].frame]);
    }
    int test_body = -1, module = -1, function = -1, callee = -1;
    for (int i = 0; i < static_cast<int>(path.size()); ++i) {
      const auto& f = *path[static_cast<std::size_t>(i)];
      EXPECT_EQ(f.module.find("libpython"), std::string::npos) << f.module << " " << f.function;
      if (f.function.find("CaptureSplicesARealInterpretersFrames") != std::string::npos)
        test_body = i;
      if (f.kind == fuselens::db::FrameKind::Python && f.function == "<module>") module = i;
      if (f.kind == fuselens::db::FrameKind::Python &&
          f.function == (which == 0 ? "encoder" : "decoder")) {
        function = i;
        EXPECT_EQ(f.line, which == 0 ? 4u : 6u);
        EXPECT_EQ(f.file, "<string>");
      }
      if (f.function == "fuselens_test_python_record") callee = i;
    }
    EXPECT_GE(test_body, 0);
    EXPECT_GT(module, test_body);
    EXPECT_EQ(function, module + 1);
    EXPECT_GT(callee, function);
  }
}
