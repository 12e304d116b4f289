// Text put into the HTML and SVG of `shadowbox report`: everything read from the store
// (tool inputs, file names, diffs, records) is written through html_escape, so a hostile
// input is shown as text and never becomes markup or script.
#pragma once

#include <string>
#include <string_view>

namespace cli {

// text with &, <, >, " and ' as character references (for element text and quoted
// attribute values alike).
std::string html_escape(std::string_view text);
// text with &, < and > as character references: for element text only (a <pre> of a
// diff or a record, whose quotes stay one byte each).
std::string html_escape_text(std::string_view text);

// A number as SVG coordinates and data attributes write it: up to 6 decimals, no
// trailing zeros, never in exponent form.
std::string svg_number(double value);

}  // namespace cli
