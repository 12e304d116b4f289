// The page of `shadowbox report`: one self-contained HTML file of a run (RunReport) that
// opens from disk with no network: inline CSS, inline SVG, no script at all (diffs and
// records collapse in <details>), and a Content-Security-Policy that lets the page load
// nothing. Every text from the store is escaped (html_text.hpp). Each timeline entry is
// an <li class="entry"> whose data-kind, data-ref, data-tool and data-outcome say what
// it is (docs/report.md).
#pragma once

#include <string>

#include "run_report_model.hpp"

namespace cli {

// The whole page.
std::string run_report_html(const RunReport& report);

}  // namespace cli
