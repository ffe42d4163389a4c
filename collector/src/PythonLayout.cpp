#include "PythonLayout.h"

#include <cstring>

namespace fuselens::collector {
namespace {

// PyObject: ob_refcnt, ob_type. PyVarObject adds ob_size; PyTypeObject then tp_name,
// tp_basicsize (Include/cpython/object.h, unchanged since 3.0).
constexpr int kObType = 8;
constexpr int kTypeName = 24;  // PyTypeObject::tp_name (const char*)
constexpr int kCellRef = 16;   // PyCellObject: PyObject_HEAD, then ob_ref
constexpr int kTypeBasicSize = 32;
// PyASCIIObject: ob_refcnt, ob_type, length (Py_ssize_t), hash, state (bit fields: interned 2,
// kind 3, compact 1, ascii 1, ...).
constexpr int kUnicodeLength = 16;
constexpr int kUnicodeState = 32;
constexpr std::uint32_t kStateCompact = 1u << 5;
constexpr std::uint32_t kStateAscii = 1u << 6;
constexpr std::int64_t kMaxText = 4096;

}  // namespace

std::optional<PythonLayout> PythonLayout::for_version(unsigned long py_version) noexcept {
  const unsigned long major = (py_version >> 24) & 0xff, minor = (py_version >> 16) & 0xff;
  if (major != 3) return std::nullopt;
  PythonLayout l;
  l.minor = static_cast<int>(minor);
  switch (minor) {
    case 11:  // checked on 3.11.7
      l.thread_cframe = 56;
      l.cframe_current_frame = 8;  // after uint8_t use_tracing
      l.frame_code = 32;
      l.frame_previous = 48;
      l.frame_instr = 56;
      l.frame_owner = 69;
      l.frame_localsplus = 72;  // after int stacktop, bool is_entry, char owner
      l.owner_cstack = -1;
      l.code_filename = 112;
      l.code_qualname = 128;
      l.unicode_ascii_data = 48;  // PyASCIIObject still has wstr
      l.unicode_utf8 = 56;
      return l;
    case 12:  // checked on 3.12.3
      l.thread_cframe = 56;
      l.cframe_current_frame = 0;
      l.frame_code = 0;
      l.frame_previous = 8;
      l.frame_instr = 56;
      l.frame_owner = 70;
      l.frame_localsplus = 72;  // after int stacktop, uint16_t return_offset, char owner
      l.owner_cstack = 3;       // FRAME_OWNED_BY_CSTACK
      l.code_filename = 112;
      l.code_qualname = 128;
      l.unicode_ascii_data = 40;
      l.unicode_utf8 = 48;
      return l;
    default:
      return std::nullopt;
  }
}

PythonFrameReader::PythonFrameReader(PythonLayout layout, const void* code_type,
                                     const void* unicode_type, const void* cell_type) noexcept
    : layout_(layout), code_type_(code_type), unicode_type_(unicode_type), cell_type_(cell_type) {
  if (code_type_) code_start_ = load<std::int64_t>(code_type_, kTypeBasicSize);
}

const void* PythonFrameReader::current_frame(const void* tstate) const noexcept {
  if (!tstate) return nullptr;
  const void* cframe = load<const void*>(tstate, layout_.thread_cframe);
  return cframe ? load<const void*>(cframe, layout_.cframe_current_frame) : nullptr;
}

bool PythonFrameReader::is_code(const void* object) const noexcept {
  return object != nullptr && code_type_ != nullptr &&
         (reinterpret_cast<std::uintptr_t>(object) & 7) == 0 &&
         load<const void*>(object, kObType) == code_type_;
}

std::uint32_t PythonFrameReader::code_units(const void* code,
                                            const std::uint16_t* instr) const noexcept {
  const auto start =
      reinterpret_cast<std::uintptr_t>(code) + static_cast<std::uintptr_t>(code_start_);
  const auto at = reinterpret_cast<std::uintptr_t>(instr);
  // A frame that has not run yet points one unit before the first instruction.
  return at > start ? static_cast<std::uint32_t>((at - start) / 2) : 0;
}

std::string PythonFrameReader::text(const void* str) const noexcept {
  std::string out;
  if (!str || !unicode_type_ || (reinterpret_cast<std::uintptr_t>(str) & 7) != 0 ||
      load<const void*>(str, kObType) != unicode_type_) {
    return out;
  }
  const auto length = load<std::int64_t>(str, kUnicodeLength);
  const auto state = load<std::uint32_t>(str, kUnicodeState);
  try {
    if ((state & kStateCompact) && (state & kStateAscii) && length >= 0 && length <= kMaxText) {
      out.assign(static_cast<const char*>(str) + layout_.unicode_ascii_data,
                 static_cast<std::size_t>(length));
    } else if (state & kStateCompact) {
      // Not ASCII: the UTF-8 form when CPython has cached one (file paths usually have).
      if (const char* utf8 = load<const char*>(str, layout_.unicode_utf8)) {
        out.assign(utf8, strnlen(utf8, kMaxText));
      }
    }
  } catch (...) {
    out.clear();
  }
  return out;
}

const void* PythonFrameReader::first_local(const void* frame) const noexcept {
  if (!frame || layout_.frame_localsplus <= 0) return nullptr;
  auto plausible = [](const void* object) {
    const auto address = reinterpret_cast<std::uintptr_t>(object);
    return address != 0 && (address & 7) == 0 && (address >> 47) == 0;
  };
  const void* object = load<const void*>(frame, layout_.frame_localsplus);
  if (!plausible(object)) return nullptr;
  // A cell variable (MAKE_CELL replaced the argument by a cell): PyCellObject's ob_ref.
  if (cell_type_ && load<const void*>(object, kObType) == cell_type_) {
    object = load<const void*>(object, kCellRef);
    if (!plausible(object)) return nullptr;
  }
  return object;
}

std::string PythonFrameReader::type_name(const void* object) const noexcept {
  std::string out;
  if (!object) return out;
  const void* type = load<const void*>(object, kObType);
  const auto address = reinterpret_cast<std::uintptr_t>(type);
  if (address == 0 || (address & 7) != 0 || (address >> 47) != 0) return out;
  const char* name = load<const char*>(type, kTypeName);
  if (!name) return out;
  try {
    out.assign(name, strnlen(name, 256));
  } catch (...) {
    out.clear();
  }
  return out;
}

std::string PythonFrameReader::filename(const void* code) const noexcept {
  return is_code(code) ? text(load<const void*>(code, layout_.code_filename)) : std::string();
}

std::string PythonFrameReader::qualname(const void* code) const noexcept {
  return is_code(code) ? text(load<const void*>(code, layout_.code_qualname)) : std::string();
}

}  // namespace fuselens::collector
