#include "Symbolizer.h"

#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "fuselens/db/Writer.h"

namespace fuselens::collector {

std::vector<db::FrameInfo> symbolize(const std::vector<std::uintptr_t>& return_addresses) noexcept {
  std::vector<db::FrameInfo> frames(return_addresses.size());
  try {
    char* debuginfo_path = nullptr;
    const Dwfl_Callbacks callbacks = {
        dwfl_linux_proc_find_elf, dwfl_standard_find_debuginfo, nullptr, &debuginfo_path};
    std::unique_ptr<Dwfl, void (*)(Dwfl*)> dwfl(dwfl_begin(&callbacks), dwfl_end);
    if (!dwfl) return frames;
    dwfl_report_begin(dwfl.get());
    const int reported = dwfl_linux_proc_report(dwfl.get(), ::getpid());
    dwfl_report_end(dwfl.get(), nullptr, nullptr);
    if (reported != 0) return frames;
    for (std::size_t i = 0; i < return_addresses.size(); ++i) {
      auto& f = frames[i];
      const Dwarf_Addr pc = return_addresses[i] - 1;
      Dwfl_Module* module = dwfl_addrmodule(dwfl.get(), pc);
      if (!module) continue;
      Dwarf_Addr start = 0;
      const char* path = dwfl_module_info(module, nullptr, &start, nullptr, nullptr, nullptr,
                                          nullptr, nullptr);
      if (path) f.module = path;
      f.module_offset = return_addresses[i] - start;
      if (const char* name = dwfl_module_addrname(module, pc)) f.function = db::demangle(name);
      if (Dwfl_Line* line = dwfl_module_getsrc(module, pc)) {
        int number = 0;
        if (const char* file = dwfl_lineinfo(line, nullptr, &number, nullptr, nullptr, nullptr)) {
          f.file = file;
          f.line = static_cast<std::uint32_t>(number > 0 ? number : 0);
        }
      }
    }
  } catch (...) {
  }
  return frames;
}

}  // namespace fuselens::collector
