// home_preservation_bench — what preserving an agent's HOME costs at each boundary as its
// transcript grows, against keeping the transcript as one blob (what preservation did
// before it kept large transcripts in chunks). A transcript of --mb megabytes of JSON
// lines (a Claude Code session's shape: an assistant turn and a tool result, about 5 KB
// a call) is preserved once; then, for each of --boundaries boundaries, a call's lines
// are appended and the HOME preserved again:
//
//   chunks, warm   one HomePreserver for the run, as `run` keeps it (Claude Code);
//   chunks, cold   a new HomePreserver each boundary, as a hook process has (Codex CLI,
//                  Gemini CLI under `run`);
//   one blob       the file read, redacted, written as one blob, its tree committed.
//
// Each in a store of its own; prints the median and p90 per boundary, and the bytes of
// loose objects each boundary added to its store.
//
//   home_preservation_bench [--mb M] [--boundaries N]   (default 10 MB, 50)
#include <algorithm>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/filesystem.hpp>

#include "bench_workspace.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "fsnap/store_layout.hpp"
#include "runs/home_preservation.hpp"
#include "runs/redaction.hpp"
#include "test_support.hpp"

namespace fs = boost::filesystem;

namespace {

const std::vector<std::string> kParts = {".claude/projects", ".claude/todos"};
const std::string kTranscript = ".claude/projects/p/s1.jsonl";
const std::vector<std::string> kSecrets = {"sk-bench-secret-value-0123456789"};

struct Settings {
  double mb = 10;
  int boundaries = 50;
};

Settings parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--mb" && i + 1 < argc) {
      s.mb = std::max(0.1, std::stod(argv[++i]));
    } else if (arg == "--boundaries" && i + 1 < argc) {
      s.boundaries = std::max(1, std::stoi(argv[++i]));
    } else {
      throw std::invalid_argument("usage: home_preservation_bench [--mb M] [--boundaries N]");
    }
  }
  return s;
}

// One call's lines (bench::transcript_call).
std::string call_lines(std::mt19937& rng, int call) {
  return bench::transcript_call(rng, "toolu_" + std::to_string(call));
}

// The bytes of the loose objects of the store at store.
std::uintmax_t loose_bytes(const fs::path& store) {
  std::uintmax_t total = 0;
  fs::path objects = store / "repo.git" / "objects";
  for (fs::recursive_directory_iterator it(objects), end; it != end; ++it) {
    if (it->path().parent_path().filename() != "pack" && fs::is_regular_file(it->status())) {
      total += fs::file_size(it->path());
    }
  }
  return total;
}

// One way of preserving, in a store and HOME of its own.
class Method {
 public:
  Method(const fs::path& base, std::string name, const std::string& transcript)
      : name_(std::move(name)), home_(base / name_ / "home") {
    fs::create_directories(base / name_ / "ws");
    store_ = fsnap::Store::open(base / name_ / "store", base / name_ / "ws", true);
    repo_ = std::make_shared<fsnap::ShadowRepo>(fsnap::ShadowRepo::open(store_->repo_dir(), false));
    testing_support::write_file(home_ / kTranscript, transcript);
    warm_ = std::make_unique<runs::HomePreserver>(*store_, repo_, "r", home_, kParts, kSecrets);
  }

  // Appends lines to the transcript, then preserves the HOME as this method does.
  void boundary(const std::string& lines, bool measure) {
    bench::append_file(home_ / kTranscript, lines);
    std::uintmax_t before = measure ? loose_bytes(store_->dir()) : 0;
    double t = bench::seconds_of([&] { preserve(); });
    if (!measure) return;
    times_.push_back(t);
    bytes_.push_back(static_cast<double>(loose_bytes(store_->dir()) - before));
  }

  void report(double baseline) const {
    double median = bench::median(times_);
    char ratio[32] = "";
    if (baseline > 0) std::snprintf(ratio, sizeof ratio, "%.1fx faster", baseline / median);
    std::printf("%-14s %10.2f ms %10.2f ms %12.0f B %14s\n", name_.c_str(), median * 1e3,
                bench::percentile(times_, 90) * 1e3, bench::median(bytes_), ratio);
  }
  double median() const { return bench::median(times_); }

 private:
  void preserve() {
    if (name_ == "chunks, warm") {
      warm_->preserve_now();
    } else if (name_ == "chunks, cold") {
      runs::HomePreserver(*store_, repo_, "r", home_, kParts, kSecrets).preserve_now();
    } else {
      // Before chunks: the whole transcript read, redacted and written as one blob.
      std::string blob = repo_->write_blob(
          runs::redact(testing_support::read_file(home_ / kTranscript), kSecrets));
      std::string p =
          repo_->write_tree({{"p", repo_->write_tree({{"s1.jsonl", blob, false}}), true}});
      std::string projects = repo_->write_tree({{"projects", p, true}});
      std::string tree = repo_->write_tree({{".claude", projects, true}});
      fsnap::StoreLock lock = store_->lock();
      repo_->commit_to_ref(fsnap::layout::home_ref("r"), tree, "home of run r");
    }
  }

  std::string name_;
  fs::path home_;
  std::optional<fsnap::Store> store_;
  std::shared_ptr<fsnap::ShadowRepo> repo_;
  std::unique_ptr<runs::HomePreserver> warm_;
  std::vector<double> times_;
  std::vector<double> bytes_;
};

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  try {
    s = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  testing_support::TempDir temp;
  std::mt19937 rng(42);
  std::string transcript;
  int call = 0;
  while (transcript.size() < s.mb * 1e6) transcript += call_lines(rng, call++);
  std::vector<std::unique_ptr<Method>> methods;
  for (const char* name : {"one blob", "chunks, warm", "chunks, cold"}) {
    methods.push_back(std::make_unique<Method>(temp.path(), name, transcript));
    methods.back()->boundary("", false);  // the first preservation: everything is new
  }
  for (int i = 0; i < s.boundaries; ++i) {
    std::string lines = call_lines(rng, call++);
    for (auto& m : methods) m->boundary(lines, true);
  }
  std::printf(
      "home preservation per boundary: a %.1f MB transcript, %d boundaries, %zu B "
      "appended each\n",
      transcript.size() / 1e6, s.boundaries, call_lines(rng, 0).size());
  std::printf("%-14s %13s %13s %14s %14s\n", "method", "median", "p90", "loose bytes", "ratio");
  double baseline = methods.front()->median();
  for (std::size_t i = 0; i < methods.size(); ++i) methods[i]->report(i == 0 ? 0 : baseline);
  return 0;
}
