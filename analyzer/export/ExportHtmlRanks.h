#pragma once
// The "Ranks" section of the HTML report: the ranks analysis (ranks/Ranks.h) of a distributed
// run, per rank over the window and per step with its straggler. Every text is escaped
// (ExportHtmlWidgets.h).

#include <string>

#include "export/ExportHtml.h"
#include "ranks/Ranks.h"

namespace fuselens::analyzer {

/// The section (slot Overview, id "ranks" + `suffix`, title "Ranks" + `title_suffix`) for
/// `report`; rows beyond `max_rows` per table are cut with a note.
HtmlSection ranks_section(const RanksReport& report, const std::string& suffix,
                          const std::string& title_suffix, std::size_t max_rows = 200);

}  // namespace fuselens::analyzer
