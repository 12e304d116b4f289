// report_bench — the page `shadowbox report` writes of a long run: makes a run of N tool
// calls through the library (each writes a file of 12 KB, so its diff is cut and the
// run's diff budget runs out after about 128 calls; every tenth fails and is rolled
// back; a file changes between two calls every 25), writes its report and prints the
// page's size, its bytes per call, and the time to make the run and to write the page.
// Exits 1 when the page is over the bound docs/report.md states: N x 3 KiB + 1 MiB (the
// diff budget) + 64 KiB (the page's frame) — 4.1 MB for 1,000 calls.
//
//   report_bench [--calls N] [--dir PATH]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <boost/filesystem.hpp>

#include "fsnap/store.hpp"
#include "runs/ledger_run.hpp"
#include "test_support.hpp"

namespace fs = boost::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void make_run(const fs::path& ws, const fs::path& store, std::size_t calls) {
  runs::LedgerRun run(fsnap::Store::open(store, ws, true), {.run = "long"});
  sandbox::ToolTransactions& t = run.transactions();
  for (std::size_t i = 0; i < calls; ++i) {
    std::string id = "call_" + std::to_string(i);
    t.begin({id, "Bash", "{\"command\":\"write part " + std::to_string(i) + "\"}"});
    std::string text;
    while (text.size() < 12 * 1024) text += "call " + std::to_string(i) + " wrote this line\n";
    testing_support::write_file(ws / ("part" + std::to_string(i % 40) + ".txt"), text);
    if (i % 10 == 9) {
      t.fail(id, "exit 1");
    } else {
      t.succeed(id, "ok");
    }
    if (i % 25 == 24) {
      testing_support::write_file(ws / "by-hand.txt", "edited after call " + std::to_string(i));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t calls = 1000;
  fs::path base;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--calls") {
      calls = std::stoul(argv[i + 1]);
    } else if (flag == "--dir") {
      base = argv[i + 1];
    } else {
      std::fprintf(stderr, "usage: report_bench [--calls N] [--dir PATH]\n");
      return 2;
    }
  }
  testing_support::TempDir temp("shadowbox-report-bench");
  fs::path root = base.empty() ? temp.path() : base;
  fs::path ws = root / "ws";
  fs::path store = root / "store";
  fs::create_directories(ws);
  ws = fs::canonical(ws);

  Clock::time_point start = Clock::now();
  make_run(ws, store, calls);
  double made = seconds_since(start);
  fs::path page = root / "report.html";
  fs::remove(page);
  start = Clock::now();
  testing_support::CommandResult r =
      testing_support::run_command({SHADOWBOX_BIN, "--workspace", ws.string(), "--store",
                                    store.string(), "report", "long", "-o", page.string()},
                                   root, {"SHADOWBOX_CONFIG="});
  double written = seconds_since(start);
  if (r.exit_code != 0) {
    std::fprintf(stderr, "report failed: %s\n", r.err.c_str());
    return 1;
  }
  std::uintmax_t size = fs::file_size(page);
  std::uintmax_t bound = calls * 3 * 1024 + 1024 * 1024 + 64 * 1024;
  std::printf("calls                %zu\n", calls);
  std::printf("run made in          %.2f s\n", made);
  std::printf("report written in    %.2f s\n", written);
  std::printf("page                 %ju bytes (%.0f per call)\n", size,
              static_cast<double>(size) / static_cast<double>(calls));
  std::printf("bound                %ju bytes\n", bound);
  if (size > bound) {
    std::fprintf(stderr, "the page is over its bound\n");
    return 1;
  }
  return 0;
}
