#pragma once
// CallPathModel: the calling context of the item selected in the timeline (analyzer::call_path,
// CallPath.h), one row per frame from the outermost down to the launch site. Columns: # (1 =
// outermost), Function (demangled; "module+0xoffset" without a symbol), Source ("file.cu:22",
// empty without debug information), Module (file name; "Python" for a Python frame). Tooltips
// hold the full paths.

#include <QString>

#include "cct/CallPath.h"
#include "models/TableModel.h"

namespace fuselens::gui {

class CallPathModel : public RowsModel<analyzer::CallPathEntry> {
  Q_OBJECT
 public:
  enum Column { Depth, Function, Source, Module };
  explicit CallPathModel(QObject* parent = nullptr);
  int nameColumn() const override { return Function; }

  /// The whole path as text, one frame a line, outermost first, as the analyzer labels frames
  /// ("b() [cct_paths.cu:22]  (cct_paths)"): what "Copy call path" puts on the clipboard.
  QString pathText() const;
  /// One frame's line of pathText().
  static QString frameText(const analyzer::CallPathEntry& frame);

 protected:
  QVariant cell(int row, int column, int role) const override;
};

}  // namespace fuselens::gui
