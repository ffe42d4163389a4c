// Frame folding for the calling-context views (cct/FrameFolding.h; docs/calling-context.md,
// "Frames").
#include "cct/FrameFolding.h"

#include <algorithm>
#include <string_view>

namespace fuselens::analyzer {

const char* frames_mode_name(FramesMode mode) {
  switch (mode) {
    case FramesMode::User:
      return "user";
    case FramesMode::Python:
      return "python";
    case FramesMode::Native:
      return "native";
    case FramesMode::All:
      return "all";
    case FramesMode::Auto:
      break;
  }
  return "auto";
}

std::optional<FramesMode> parse_frames_mode(const std::string& name) {
  for (const FramesMode m : {FramesMode::Auto, FramesMode::User, FramesMode::Python,
                             FramesMode::Native, FramesMode::All}) {
    if (name == frames_mode_name(m)) return m;
  }
  return std::nullopt;
}

namespace cct {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string_view base_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The folder right after "/site-packages/" or "/dist-packages/" ("torch", "nvidia"); "" when the
// path is under neither.
std::string_view package_of(std::string_view path) {
  for (const std::string_view marker : {"/site-packages/", "/dist-packages/"}) {
    const auto at = path.find(marker);
    if (at == std::string_view::npos) continue;
    const auto rest = path.substr(at + marker.size());
    return rest.substr(0, rest.find('/'));
  }
  return {};
}

// ".../lib/python3.12/x.py" (not under site-packages, which package_of handles first).
bool in_stdlib(std::string_view path) {
  for (auto at = path.find("/lib/python"); at != std::string_view::npos;
       at = path.find("/lib/python", at + 1)) {
    std::size_t i = at + 11;
    bool digit = false;
    while (i < path.size() && (path[i] == '.' || (path[i] >= '0' && path[i] <= '9'))) {
      digit = digit || path[i] != '.';
      ++i;
    }
    if (digit && i < path.size() && path[i] == '/') return true;
  }
  return false;
}

bool torch_native(std::string_view base) {
  return starts_with(base, "libtorch") || starts_with(base, "libc10") ||
         starts_with(base, "libshm") || starts_with(base, "_C.cpython");
}

// Native modules that belong to the system, the CUDA toolkit, the interpreter or a well-known
// library wherever they are installed (by file name), or that live in a system folder.
bool library_module(std::string_view module) {
  const auto base = base_name(module);
  for (const std::string_view prefix :
       {"libc.so",     "libc-",       "libm.so",  "libstdc++",    "libgcc_s",
        "ld-linux",    "libpthread",  "libdl.so", "libpython",    "python",
        "libcublas",   "libcudnn",    "libnccl",  "libcufft",     "libcurand",
        "libcusparse", "libcusolver", "libnvrtc", "libnvJitLink", "libnvToolsExt",
        "libnvtx",     "libgomp",     "libiomp",  "libmkl",       "libopenblas"}) {
    if (starts_with(base, prefix)) return true;
  }
  for (const std::string_view folder :
       {"/usr/lib/", "/usr/lib64/", "/lib/", "/lib64/", "/usr/local/cuda", "/usr/local/nvidia/",
        "/opt/conda/lib/"}) {
    if (starts_with(module, folder)) return true;
  }
  return false;
}

// "at::_ops::addmm::call(...)" -> "aten::addmm"; "" for any other function.
std::string aten_op(std::string_view fn) {
  constexpr std::string_view kOps = "at::_ops::";
  if (!starts_with(fn, kOps)) return {};
  const auto name = fn.substr(kOps.size());
  const auto end = name.find("::");
  if (end == std::string_view::npos || end == 0 || !starts_with(name.substr(end), "::call("))
    return {};
  std::string op(name.substr(0, end));
  // The struct is named <op>_<overload>; overloads that start with a capital ("Tensor",
  // "Tensor_Scalar", "List") are shown after a dot, as PyTorch names them ("aten::sub.Tensor").
  for (std::size_t i = 1; i + 1 < op.size(); ++i) {
    if (op[i] == '_' && op[i + 1] >= 'A' && op[i + 1] <= 'Z') {
      op[i] = '.';
      break;
    }
  }
  return "aten::" + op;
}

// "torch::autograd::generated::AddmmBackward0::apply(...)" -> "AddmmBackward0".
std::string autograd_node(std::string_view fn) {
  if (!starts_with(fn, "torch::autograd::")) return {};
  const auto apply = fn.find("::apply(");
  if (apply == std::string_view::npos) return {};
  const auto colon = fn.rfind("::", apply - 1);
  if (colon == std::string_view::npos || colon + 2 >= apply) return {};
  return std::string(fn.substr(colon + 2, apply - colon - 2));
}

// A plain C identifier ("cublasLtMatmul"): worth naming in a library's folded frame.
bool c_name(std::string_view fn) {
  if (fn.empty()) return false;
  for (const char c : fn) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  }
  return true;
}

}  // namespace

std::string fold_key(const Frame& frame) {
  if (frame.python) {
    const std::string_view file =
        frame.file.empty() ? std::string_view(frame.module) : std::string_view(frame.file);
    if (const auto package = package_of(file); !package.empty()) return std::string(package);
    if (file.find("/share/fuselens/python/") != std::string_view::npos) return "fuselens";
    if (in_stdlib(file) || starts_with(file, "<frozen")) return "python";
    return {};
  }
  const std::string_view module = frame.module;
  if (module.empty()) return {};
  const auto base = base_name(module);
  const auto package = package_of(module);
  if (package == "torch" || torch_native(base)) return "torch";
  if (package == "triton") return "triton";
  if (!package.empty() || library_module(module)) return std::string(base);
  return {};
}

FramesMode resolve_frames_mode(FramesMode mode, const FrameMap& frames) {
  if (mode != FramesMode::Auto) return mode;
  for (const auto& [id, frame] : frames) {
    if (frame.python) return FramesMode::User;
  }
  return FramesMode::Native;
}

FrameFolder::FrameFolder(FramesMode mode)
    : mode_(mode == FramesMode::Auto ? FramesMode::All : mode) {}

const std::string& FrameFolder::key_of(const Frame* frame) {
  auto it = keys_.find(frame);
  if (it == keys_.end()) it = keys_.emplace(frame, fold_key(*frame)).first;
  return it->second;
}

const Frame* FrameFolder::folded(const std::vector<const Frame*>& run, const std::string& key) {
  std::string op;
  for (const Frame* f : run) {  // outermost first
    if (f->python) continue;
    op = aten_op(f->function);
    if (op.empty()) op = autograd_node(f->function);
    if (op.empty() && key != "torch" && key != "triton" && c_name(f->function)) op = f->function;
    if (!op.empty()) break;
  }
  if (op.empty()) {
    for (auto it = run.rbegin(); it != run.rend() && op.empty(); ++it) {
      if ((*it)->python) op = (*it)->function;
    }
  }
  const std::string label = "[" + key + (op.empty() ? "" : ": " + op) + "]";
  auto& slot = folded_[label];
  if (!slot) {
    slot = std::make_unique<Frame>();
    slot->label = label;
    slot->function = label;
    const bool named_key = key == "torch" || key == "triton" || run.front()->python;
    slot->module = named_key ? key : run.front()->module;
  }
  return slot.get();
}

std::vector<const Frame*> FrameFolder::fold(const std::vector<const Frame*>& path,
                                            bool before_backward) {
  if (mode_ == FramesMode::All) return path;
  std::vector<const Frame*> out;
  if (mode_ == FramesMode::Native) {
    for (const Frame* f : path) {
      if (!f->python) out.push_back(f);
    }
    return out;
  }
  // A frame kept as it is (nullptr key) or folded into the current run (its key).
  auto fold_key_of = [&](const Frame* f) -> const std::string* {
    const std::string& key = key_of(f);
    if (key.empty()) return nullptr;
    if (mode_ == FramesMode::Python && f->python) return nullptr;
    return &key;
  };
  // A segment: consecutive framework frames. Its frames are grouped by fold key, each group in
  // the order of its first frame (cuDNN's libraries call each other back and forth: one frame
  // each), and each group is folded into one frame.
  std::vector<const Frame*> segment;
  auto flush = [&](bool last) {
    if (segment.empty()) return;
    bool native = false;
    for (const Frame* f : segment) native = native || !f->python;
    if (!(last && before_backward && !native)) {
      std::vector<std::pair<const std::string*, std::vector<const Frame*>>> groups;
      for (const Frame* f : segment) {
        const std::string* key = fold_key_of(f);
        auto g = std::find_if(groups.begin(), groups.end(),
                              [&](const auto& x) { return *x.first == *key; });
        if (g == groups.end()) g = groups.insert(groups.end(), {key, {}});
        g->second.push_back(f);
      }
      for (const auto& [key, run] : groups) out.push_back(folded(run, *key));
    }
    segment.clear();
  };
  for (const Frame* f : path) {
    if (fold_key_of(f) == nullptr) {
      flush(false);
      out.push_back(f);
    } else {
      segment.push_back(f);
    }
  }
  flush(true);
  return out;
}

}  // namespace cct
}  // namespace fuselens::analyzer
