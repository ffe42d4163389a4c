#pragma once
// Which frames of a call path a view shows (CctOptions::frames, `--frames`;
// docs/calling-context.md, "Frames"). Private to the analyzer.
//
// Every frame is classified once:
//  - a user frame: a Python frame whose file is not under a site-packages or dist-packages folder,
//    not in the interpreter's standard library (".../lib/python3.N/"), not frozen ("<frozen ...>")
//    and not FuseLens's own instrumentation (".../share/fuselens/python/"); or a native frame whose
//    module is none of the framework modules below (the program's executable, its own libraries,
//    an extension built in the user's tree);
//  - a framework frame, with a fold key: "torch" for PyTorch (Python files under .../torch/, native
//    modules libtorch*, libc10*, libshm*, torch's _C extension), "triton" likewise, the package
//    name for other site-packages Python files ("numpy"), "python" for the standard library, and
//    the module's file name for native libraries of the system (/usr/lib, /lib, /usr/local/cuda,
//    ...), of Python packages (site-packages, dist-packages: cuBLAS, cuDNN) and of the interpreter
//    ("libcublasLt.so.13", "libc.so.6", "python3.12").
// Modes:
//  - All: every frame, as recorded (the view before frame folding).
//  - Native: native frames only, unfolded (a Python capture's interpreter frames were replaced by
//    Python frames at collection, so its paths start at the extension's frames, libtorch_python).
//  - Python: every Python frame; each run of consecutive native framework frames is folded into
//    one frame per fold key.
//  - User: user frames only; each run of consecutive framework frames, Python and native alike, is
//    folded into one frame per fold key (in the order of the key's first frame in the run: cuDNN's
//    libraries that call each other back and forth give one frame each). For a C++ program: its
//    own frames, with every run of library frames folded into its libraries.
// A folded frame's label names what the run did: "[torch: aten::linear]" (the outermost
// at::_ops::<op>::call frame of the run), "[torch: AddmmBackward0]" (the outermost autograd node's
// apply() frame, when it comes first), "[libcublasLt.so.13: cublasLtMatmul]" (the outermost symbol
// of a library run when it is a plain C name), "[torch: Linear.forward]" (the innermost Python
// function, for a run without native frames), or "[libcublasLt.so.13]".

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cct/CallingContextData.h"

namespace fuselens::analyzer::cct {

/// Auto resolves to User when some frame of the capture is a Python frame, else to Native.
FramesMode resolve_frames_mode(FramesMode mode, const FrameMap& frames);

/// The fold key of a frame: "" for a user frame (see above).
std::string fold_key(const Frame& frame);

/// Folds paths for one resolved mode (not Auto). Folded frames are owned by the folder (their
/// addresses stay valid while it lives): label and function are the folded label, module the
/// fold key ("torch") or the library's path, no file or line.
class FrameFolder {
 public:
  explicit FrameFolder(FramesMode mode);
  FramesMode mode() const { return mode_; }
  /// The frames shown for `path` (root first). When `before_backward` is set (the path is the
  /// forward context a "<backward> OP" row hangs under), User mode drops a trailing framework run
  /// that has no native frame: the module wrappers between the user's line and the op.
  std::vector<const Frame*> fold(const std::vector<const Frame*>& path,
                                 bool before_backward = false);

 private:
  const std::string& key_of(const Frame* frame);
  const Frame* folded(const std::vector<const Frame*>& run, const std::string& key);

  FramesMode mode_;
  std::unordered_map<const Frame*, std::string> keys_;
  std::unordered_map<std::string, std::unique_ptr<Frame>> folded_;  // by label
};

}  // namespace fuselens::analyzer::cct
