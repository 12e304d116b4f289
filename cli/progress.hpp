// A progress line for long captures, shown on stderr only when stderr is a terminal.
#pragma once

#include <functional>

#include "fsnap/capture_options.hpp"

namespace cli {

// A CaptureOptions::on_progress callback that redraws one status line on stderr once
// a capture has run for a moment, and erases it when the capture ends. Empty (no
// reporting) when stderr is not a terminal or SHADOWBOX_NO_PROGRESS is set.
std::function<void(const fsnap::CaptureProgress&)> terminal_progress();

}  // namespace cli
