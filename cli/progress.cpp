#include "progress.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

namespace cli {

namespace {

// Captures shorter than this never show a line.
constexpr std::chrono::milliseconds kQuietPeriod{500};

struct ProgressLine {
  std::mutex mutex;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  bool shown = false;

  void update(const fsnap::CaptureProgress& p) {
    std::lock_guard<std::mutex> lock(mutex);
    if (p.done) {
      if (shown) std::fputs("\r\033[K", stderr);
      shown = false;
      start = std::chrono::steady_clock::now();
      return;
    }
    if (std::chrono::steady_clock::now() - start < kQuietPeriod) return;
    std::fprintf(stderr, "\r\033[Kshadowbox: capturing: %llu entries, %llu files read (%.1f MiB)",
                 static_cast<unsigned long long>(p.entries_seen),
                 static_cast<unsigned long long>(p.files_hashed),
                 static_cast<double>(p.bytes_hashed) / (1024.0 * 1024.0));
    std::fflush(stderr);
    shown = true;
  }
};

}  // namespace

std::function<void(const fsnap::CaptureProgress&)> terminal_progress() {
  const char* off = std::getenv("SHADOWBOX_NO_PROGRESS");
  if (::isatty(STDERR_FILENO) == 0 || (off != nullptr && *off != '\0')) return {};
  auto line = std::make_shared<ProgressLine>();
  return [line](const fsnap::CaptureProgress& p) { line->update(p); };
}

}  // namespace cli
