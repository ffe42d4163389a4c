#include "PythonFrames.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <string_view>

namespace fuselens::collector {
namespace {

constexpr std::uint32_t kOffsetMask = (std::uint32_t{1} << kPythonOffsetBits) - 1;

template <typename Function>
void resolve(Function& out, const char* name) noexcept {
  if (void* symbol = ::dlsym(RTLD_DEFAULT, name)) out = reinterpret_cast<Function>(symbol);
}

template <typename Function>
void resolve_first(Function& out, const char* first, const char* second) noexcept {
  resolve(out, first);
  if (!out) resolve(out, second);
}

struct TextSearch {
  std::uintptr_t address = 0;
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;
};

// dl_iterate_phdr callback: the executable PT_LOAD segments of the module holding `address`.
int find_text(dl_phdr_info* info, std::size_t, void* data) {
  auto& search = *static_cast<TextSearch*>(data);
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> text;
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    const std::uintptr_t end = begin + ph.p_memsz;
    text.emplace_back(begin, end);
    holds = holds || (search.address >= begin && search.address < end);
  }
  if (!holds) return 0;
  search.ranges = std::move(text);
  return 1;
}

}  // namespace

std::uint64_t encode_python_frame(const void* code, std::uint32_t position) noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(code);
  if (address == 0 || (address & 15) != 0 || (address >> 47) != 0) return 0;
  return kPythonTag | (static_cast<std::uint64_t>(address >> 4) << kPythonOffsetBits) |
         std::min(position, kModulePosition - 1);
}

std::uint64_t encode_module_value(const void* object) noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(object);
  if (address == 0 || (address & 15) != 0 || (address >> 47) != 0) return 0;
  return kPythonTag | (static_cast<std::uint64_t>(address >> 4) << kPythonOffsetBits) |
         kModulePosition;
}

bool is_module_value(std::uint64_t value) noexcept {
  return is_python_value(value) && (value & kOffsetMask) == kModulePosition;
}

std::pair<void*, std::uint32_t> decode_python_frame(std::uint64_t value) noexcept {
  const std::uint64_t bits = value & ~kPythonTag;
  return {reinterpret_cast<void*>(static_cast<std::uintptr_t>((bits >> kPythonOffsetBits) << 4)),
          static_cast<std::uint32_t>(bits & kOffsetMask)};
}

PythonApi PythonApi::from_process() noexcept {
  PythonApi api;
  resolve(api.is_initialized, "Py_IsInitialized");
  resolve_first(api.is_finalizing, "Py_IsFinalizing", "_Py_IsFinalizing");
  resolve(api.gil_check, "PyGILState_Check");
  resolve_first(api.current_thread_state, "PyThreadState_GetUnchecked",
                "_PyThreadState_UncheckedGet");
  resolve(api.get_frame, "PyEval_GetFrame");
  resolve(api.frame_back, "PyFrame_GetBack");
  resolve(api.frame_code, "PyFrame_GetCode");
  resolve(api.frame_lasti, "PyFrame_GetLasti");
  resolve(api.frame_line, "PyFrame_GetLineNumber");
  resolve(api.incref, "Py_IncRef");
  resolve(api.decref, "Py_DecRef");
  resolve(api.code_line, "PyCode_Addr2Line");
  resolve(api.get_attr, "PyObject_GetAttrString");
  resolve(api.as_utf8, "PyUnicode_AsUTF8");
  resolve(api.err_fetch, "PyErr_Fetch");
  resolve(api.err_restore, "PyErr_Restore");
  resolve(api.this_thread_state, "PyGILState_GetThisThreadState");
  api.version = static_cast<const unsigned long*>(::dlsym(RTLD_DEFAULT, "Py_Version"));
  api.code_type = ::dlsym(RTLD_DEFAULT, "PyCode_Type");
  api.unicode_type = ::dlsym(RTLD_DEFAULT, "PyUnicode_Type");
  api.cell_type = ::dlsym(RTLD_DEFAULT, "PyCell_Type");
  return api;
}

bool PythonApi::usable() const noexcept {
  return is_initialized && gil_check && get_frame && frame_back && frame_code && frame_line &&
         incref && decref && code_line && get_attr && as_utf8 && err_fetch && err_restore;
}

PythonFrames::PythonFrames(PythonApi api) noexcept
    : api_(api), usable_(api.usable()), positions_are_lines_(api.frame_lasti == nullptr) {
  if (!usable_ || !api_.this_thread_state || !api_.version || !api_.code_type ||
      !api_.unicode_type || positions_are_lines_) {
    return;
  }
  if (const auto layout = PythonLayout::for_version(*api_.version)) {
    reader_.emplace(*layout, api_.code_type, api_.unicode_type, api_.cell_type);
  }
}

bool PythonFrames::holds_gil() const noexcept {
  if (!api_.gil_check()) return false;
  // PyGILState_Check answers 1 for every thread once sub-interpreters exist; a thread state
  // attached to this thread is the precise test.
  return !api_.current_thread_state || api_.current_thread_state() != nullptr;
}

PythonFrames PythonFrames::from_process() noexcept {
  PythonFrames frames(PythonApi::from_process());
  if (!frames.usable_) return frames;
  try {
    TextSearch search;
    search.address = reinterpret_cast<std::uintptr_t>(frames.api_.get_frame);
    dl_iterate_phdr(&find_text, &search);
    frames.interpreter_text_ = std::move(search.ranges);
  } catch (...) {
  }
  return frames;
}

int PythonFrames::walk(std::uint64_t* leaf_first, int max) const noexcept {
  if (!usable_ || !api_.is_initialized()) return 0;
  if (api_.is_finalizing && api_.is_finalizing()) return 0;
  if (reader_) {
    const void* leaf = reader_->current_frame(api_.this_thread_state());
    int n = 0;
    const void* call_impl =
        module_frames_ ? __atomic_load_n(&call_impl_, __ATOMIC_RELAXED) : nullptr;
    reader_->walk(leaf, max, [&](const void* frame, const void* code, std::uint32_t units) {
      if (code == call_impl && call_impl != nullptr && n < max) {
        if (const std::uint64_t self = encode_module_value(reader_->first_local(frame)))
          leaf_first[n++] = self;  // below its _call_impl frame: written first, leaf first
      }
      if (n >= max) return;
      if (const std::uint64_t value = encode_python_frame(code, units)) leaf_first[n++] = value;
    });
    return n;
  }
  if (!holds_gil()) return 0;
  void* frame = api_.get_frame();
  if (!frame) return 0;
  api_.incref(frame);  // every frame below is then owned the same way
  int n = 0;
  while (frame && n < max) {
    void* code = api_.frame_code(frame);
    const int position = positions_are_lines_ ? api_.frame_line(frame) : api_.frame_lasti(frame);
    const std::uint32_t units = position <= 0          ? 0
                                : positions_are_lines_ ? static_cast<std::uint32_t>(position)
                                                       : static_cast<std::uint32_t>(position) / 2;
    if (const std::uint64_t value = encode_python_frame(code, units)) leaf_first[n++] = value;
    if (code) api_.decref(code);  // the frame keeps its code alive while we are here
    void* back = api_.frame_back(frame);
    api_.decref(frame);
    frame = back;
  }
  if (frame) api_.decref(frame);
  return n;
}

std::string PythonFrames::attribute_text(void* object, const char* name) const noexcept {
  std::string text;
  void* attribute = api_.get_attr(object, name);
  if (!attribute) return text;
  if (const char* utf8 = api_.as_utf8(attribute)) {
    try {
      text = utf8;
    } catch (...) {
    }
  }
  api_.decref(attribute);
  return text;
}

PythonFrameInfo PythonFrames::describe(std::uint64_t value) const noexcept {
  PythonFrameInfo info;
  if (!usable_ || !is_python_value(value)) return info;
  const auto [code, position] = decode_python_frame(value);
  if (is_module_value(value)) {  // `self` of a _call_impl frame that is still running
    info.module = true;
    info.address = reinterpret_cast<std::uintptr_t>(code);
    if (reader_) info.function = reader_->type_name(code);
    if (info.function.empty()) info.function = "<module>";
    return info;
  }
  if (reader_ && !holds_gil()) {
    if (!reader_->is_code(code)) return info;
    info.file = reader_->filename(code);
    info.function = reader_->qualname(code);
    const int line = api_.code_line(code, static_cast<int>(position * 2));
    info.line = line > 0 ? static_cast<std::uint32_t>(line) : 0;
    note_call_impl(code, info);
    return info;
  }
  // Keep the caller's pending exception, if any: attribute lookups may set and clear their own.
  void *type = nullptr, *exception = nullptr, *traceback = nullptr;
  api_.err_fetch(&type, &exception, &traceback);
  api_.incref(code);  // never released: the address keeps naming this code object
  info.file = attribute_text(code, "co_filename");
  info.function = attribute_text(code, "co_qualname");
  if (info.function.empty()) info.function = attribute_text(code, "co_name");
  if (positions_are_lines_) {
    info.line = position;
  } else {
    const int line = api_.code_line(code, static_cast<int>(position * 2));
    info.line = line > 0 ? static_cast<std::uint32_t>(line) : 0;
  }
  // Drop whatever the lookups raised (a missing co_qualname), then put the caller's back.
  void *t2 = nullptr, *e2 = nullptr, *tb2 = nullptr;
  api_.err_fetch(&t2, &e2, &tb2);
  if (t2) api_.decref(t2);
  if (e2) api_.decref(e2);
  if (tb2) api_.decref(tb2);
  api_.err_restore(type, exception, traceback);
  note_call_impl(code, info);
  return info;
}

void PythonFrames::note_call_impl(const void* code, const PythonFrameInfo& info) const noexcept {
  // torch/nn/modules/module.py's Module._call_impl: every nn.Module call runs it, hooks or not.
  static constexpr std::string_view kFile = "/torch/nn/modules/module.py";
  if (info.function != "Module._call_impl" || info.file.size() < kFile.size() ||
      info.file.compare(info.file.size() - kFile.size(), kFile.size(), kFile) != 0) {
    return;
  }
  __atomic_store_n(&call_impl_, code, __ATOMIC_RELAXED);
}

bool PythonFrames::in_interpreter(std::uintptr_t pc) const noexcept {
  for (const auto& [begin, end] : interpreter_text_) {
    if (pc > begin && pc <= end) return true;  // a return address points after its call
  }
  return false;
}

}  // namespace fuselens::collector
