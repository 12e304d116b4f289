#include "hooks/agent_runs.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <boost/filesystem/operations.hpp>

#include "fsnap/error.hpp"
#include "fsnap/shadow_repo.hpp"
#include "hooks/agent_home.hpp"

namespace hooks {

namespace fs = boost::filesystem;
using Poco::JSON::Object;

std::optional<RunMeta> RunMeta::load(const fs::path& dir) {
  fs::path file = dir / "run.json";
  if (!fs::exists(file)) return std::nullopt;
  std::ifstream in(file.string());
  std::ostringstream text;
  text << in.rdbuf();
  try {
    Poco::JSON::Parser parser;
    Object::Ptr o = parser.parse(text.str()).extract<Object::Ptr>();
    RunMeta m;
    m.run = o->getValue<std::string>("run");
    m.workspace = o->getValue<std::string>("workspace");
    if (Poco::JSON::Array::Ptr command = o->getArray("command")) {
      for (std::size_t i = 0; i < command->size(); ++i) {
        m.command.push_back(command->getElement<std::string>(static_cast<unsigned>(i)));
      }
    }
    m.started_at = o->getValue<std::string>("started_at");
    m.pid = o->getValue<long>("pid");
    m.agent_pid = o->getValue<long>("agent_pid");
    if (o->has("exit_code") && !o->isNull("exit_code")) m.exit_code = o->getValue<int>("exit_code");
    if (o->has("ended_at")) m.ended_at = o->getValue<std::string>("ended_at");
    if (o->has("home")) m.home = o->getValue<std::string>("home");
    return m;
  } catch (const Poco::Exception& e) {
    throw std::runtime_error("cannot read " + file.string() + ": " + e.displayText());
  }
}

void RunMeta::save(const fs::path& dir) const {
  Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  o->set("run", run);
  o->set("workspace", workspace);
  Poco::JSON::Array::Ptr c = new Poco::JSON::Array;
  for (const std::string& a : command) c->add(a);
  o->set("command", c);
  o->set("started_at", started_at);
  o->set("pid", pid);
  o->set("agent_pid", agent_pid);
  o->set("exit_code", exit_code ? Poco::Dynamic::Var(*exit_code) : Poco::Dynamic::Var());
  o->set("ended_at", ended_at);
  o->set("home", home);
  fs::create_directories(dir);
  fs::path tmp = dir / ("run.json.tmp." + std::to_string(::getpid()));
  {
    std::ofstream out(tmp.string(), std::ios::trunc);
    o->stringify(out, 2);
    out << '\n';
    if (!out.flush()) throw std::runtime_error("cannot write " + tmp.string());
  }
  if (std::rename(tmp.c_str(), (dir / "run.json").c_str()) != 0) {
    throw std::runtime_error("cannot write " + (dir / "run.json").string());
  }
}

std::optional<ResumableState> find_resumable_state(const fsnap::Store& store,
                                                   const std::string& run) {
  register_claude_code_slice_types();
  sandbox::Ledger ledger(store);
  std::optional<sandbox::LedgerRecord> latest = ledger.latest(run);
  if (!latest || latest->session_json.empty()) return std::nullopt;
  sandbox::SessionSnapshot session = latest->session();
  sandbox::Slice<ClaudeCodeSession> sessions = session.slice<ClaudeCodeSession>();
  std::optional<ResumableState> state;
  for (std::size_t i = sessions.size(); i-- > 0;) {
    if (!sessions[i].session_id.empty()) {
      state = ResumableState{sessions[i], "", false};
      break;
    }
  }
  if (!state) return std::nullopt;
  sandbox::Slice<RunStatus> status = session.slice<RunStatus>();
  if (!status.empty()) state->run_status = status.latest()->status;
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(store.repo_dir(), false);
  if (std::optional<std::string> tree = repo.ref_tree(home_ref(run))) {
    for (const fsnap::TreeChange& c : repo.diff_trees("", *tree)) {
      std::string want = "/" + state->session.session_id + ".jsonl";
      if (c.path.size() >= want.size() &&
          c.path.compare(c.path.size() - want.size(), want.size(), want) == 0) {
        state->home_preserved = true;
        break;
      }
    }
  }
  return state;
}

std::vector<std::string> resume_problems(const ResumableState& state, ResumeValidation validation,
                                         const std::string& workspace,
                                         std::chrono::seconds max_age) {
  std::vector<std::string> problems;
  if (validation == ResumeValidation::kNone) return problems;
  if (state.session.session_id.empty()) problems.push_back("no agent session id was recorded");
  if (!state.home_preserved) {
    problems.push_back("the transcript of agent session " + state.session.session_id +
                       " is not in the preserved data");
  }
  if (validation == ResumeValidation::kRelaxed) return problems;
  if (!state.session.cwd.empty() && state.session.cwd != workspace) {
    problems.push_back("the agent session ran in " + state.session.cwd + ", not in " + workspace);
  }
  if (std::optional<std::chrono::system_clock::time_point> at =
          fsnap::parse_timestamp(state.session.captured_at)) {
    if (max_age.count() > 0 && std::chrono::system_clock::now() - *at > max_age) {
      problems.push_back("the agent session is older than run.resume_max_age");
    }
  }
  if (state.run_status == "complete") problems.push_back("the run is complete");
  return problems;
}

namespace {

// True if pid is a live (not zombie) process. A killed supervisor whose parent does
// not reap it stays a zombie, which kill(pid, 0) would still report.
bool alive(long pid) {
  if (pid <= 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  std::size_t paren = text.rfind(')');
  if (paren == std::string::npos || paren + 2 >= text.size()) return false;
  char state = text[paren + 2];
  return state != 'Z' && state != 'X';
}

}  // namespace

std::vector<RunInfo> list_runs(const fsnap::Store& store) {
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(store.repo_dir(), false);
  std::set<std::string> names;
  for (const std::string& r : repo.runs()) names.insert(r);
  boost::system::error_code ec;
  if (fs::is_directory(store.dir() / "runs", ec)) {
    for (fs::directory_iterator it(store.dir() / "runs"), end; it != end; ++it) {
      if (fs::exists(it->path() / "run.json")) names.insert(it->path().filename().string());
    }
  }
  std::vector<RunInfo> out;
  for (const std::string& name : names) {
    RunInfo info;
    info.run = name;
    std::vector<fsnap::Checkpoint> chain;
    try {
      chain = repo.log(name, 0);
    } catch (const fsnap::Error& e) {
      if (e.code() != fsnap::ErrorCode::kNotFound) throw;
    }
    info.checkpoints = chain.size();
    if (!chain.empty()) info.last_activity = fsnap::format_timestamp(chain.front().created_at);
    std::optional<ResumableState> state = find_resumable_state(store, name);
    if (state) {
      info.session_id = state->session.session_id;
      info.resumable = state->home_preserved;
    }
    std::optional<RunMeta> meta = RunMeta::load(run_dir(store, name));
    if (meta) info.exit_code = meta->exit_code;
    if (state && state->run_status == "complete") {
      info.status = "complete";
    } else if (meta && !meta->exit_code && alive(meta->pid)) {
      info.status = "running";
    } else if (meta && meta->exit_code) {
      info.status = "complete";
    } else if (meta || state) {
      info.status = "crashed";
    } else {
      info.status = "-";
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::string new_run_id() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  std::random_device rd;
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%04x", rd() & 0xffff);
  return std::string("run-") + stamp + "-" + suffix;
}

void append_run_log(const fsnap::Store& store, const std::string& run, const std::string& line) {
  boost::system::error_code ec;
  boost::filesystem::path dir = run_dir(store, run);
  boost::filesystem::create_directories(dir, ec);
  std::ofstream out((dir / "log").string(), std::ios::app);
  out << fsnap::format_timestamp(std::chrono::system_clock::now()) << ' ' << line << '\n';
}

}  // namespace hooks
