#include "runs/run_meta.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <boost/filesystem/operations.hpp>

#include "fsnap/atomic_file.hpp"
#include "fsnap/checkpoint.hpp"
#include "fsnap/id_source.hpp"
#include "fsnap/store_layout.hpp"
#include "runs/run_lifecycle.hpp"
#include "sandbox/errors.hpp"

namespace runs {

namespace fs = boost::filesystem;
using Poco::JSON::Object;

namespace {

// null for a limit not set.
template <typename T>
Poco::Dynamic::Var or_null(const std::optional<T>& value) {
  return value ? Poco::Dynamic::Var(*value) : Poco::Dynamic::Var();
}

Object::Ptr limits_json(const PolicyLimits& limits) {
  Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  o->set("max_cost_usd", or_null(limits.max_cost_usd));
  o->set("max_steps", or_null(limits.max_steps));
  o->set("max_retries_total", or_null(limits.max_retries_total));
  o->set("timeout_seconds",
         limits.timeout ? Poco::Dynamic::Var(static_cast<std::int64_t>(limits.timeout->count()))
                        : Poco::Dynamic::Var());
  return o;
}

PolicyLimits limits_from_json(const Object& o) {
  PolicyLimits limits;
  auto present = [&](const char* key) { return o.has(key) && !o.isNull(key); };
  if (present("max_cost_usd")) limits.max_cost_usd = o.getValue<double>("max_cost_usd");
  if (present("max_steps")) limits.max_steps = o.getValue<std::size_t>("max_steps");
  if (present("max_retries_total")) {
    limits.max_retries_total = o.getValue<std::size_t>("max_retries_total");
  }
  if (present("timeout_seconds")) {
    limits.timeout = std::chrono::seconds(o.getValue<std::int64_t>("timeout_seconds"));
  }
  return limits;
}

}  // namespace

std::optional<RunMeta> RunMeta::load(const fsnap::Store& store, const std::string& run) {
  fs::path file = fsnap::layout::run_meta_file(store.dir(), run);
  boost::system::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  std::ifstream in(file.string());
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), file.string());
}

RunMeta RunMeta::parse(const std::string& text, const std::string& origin) {
  try {
    Poco::JSON::Parser parser;
    Object::Ptr o = parser.parse(text).extract<Object::Ptr>();
    RunMeta m;
    m.run = o->getValue<std::string>("run");
    m.workspace = o->getValue<std::string>("workspace");
    if (Poco::JSON::Array::Ptr command = o->getArray("command")) {
      for (std::size_t i = 0; i < command->size(); ++i) {
        m.command.push_back(command->getElement<std::string>(static_cast<unsigned>(i)));
      }
    }
    if (o->has("agent")) m.agent = o->getValue<std::string>("agent");
    m.started_at = o->getValue<std::string>("started_at");
    m.pid = o->getValue<long>("pid");
    m.agent_pid = o->getValue<long>("agent_pid");
    if (o->has("exit_code") && !o->isNull("exit_code")) m.exit_code = o->getValue<int>("exit_code");
    if (o->has("ended_at")) m.ended_at = o->getValue<std::string>("ended_at");
    if (o->has("home")) m.home = o->getValue<std::string>("home");
    if (o->has("capture_state")) m.capture_state = o->getValue<bool>("capture_state");
    if (Object::Ptr limits = o->getObject("limits")) m.limits = limits_from_json(*limits);
    if (Poco::JSON::Array::Ptr resumes = o->getArray("resumes")) {
      for (std::size_t i = 0; i < resumes->size(); ++i) {
        Object::Ptr r = resumes->getObject(static_cast<unsigned>(i));
        RunStart start{r->getValue<std::string>("started_at"), {}};
        Poco::JSON::Array::Ptr argv = r->getArray("command");
        for (std::size_t k = 0; argv && k < argv->size(); ++k) {
          start.command.push_back(argv->getElement<std::string>(static_cast<unsigned>(k)));
        }
        m.resumes.push_back(std::move(start));
      }
    }
    if (Object::Ptr fork = o->getObject("forked_from")) {
      m.forked_from =
          RunFork{fork->getValue<std::string>("run"), fork->getValue<std::string>("checkpoint"),
                  fork->getValue<std::string>("tool_call_id"), fork->getValue<std::string>("at")};
    }
    return m;
  } catch (const Poco::Exception& e) {
    throw sandbox::Error(sandbox::ErrorCode::kCorrupt,
                         "cannot read " + origin + ": " + e.displayText());
  }
}

void RunMeta::save(const fsnap::Store& store) const {
  Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  o->set("run", run);
  o->set("workspace", workspace);
  Poco::JSON::Array::Ptr c = new Poco::JSON::Array;
  for (const std::string& a : command) c->add(a);
  o->set("command", c);
  o->set("agent", agent);
  o->set("started_at", started_at);
  o->set("pid", pid);
  o->set("agent_pid", agent_pid);
  o->set("exit_code", exit_code ? Poco::Dynamic::Var(*exit_code) : Poco::Dynamic::Var());
  o->set("ended_at", ended_at);
  o->set("home", home);
  o->set("capture_state", capture_state);
  o->set("limits", limits_json(limits));
  Poco::JSON::Array::Ptr resumed = new Poco::JSON::Array;
  for (const RunStart& start : resumes) {
    Object::Ptr r = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    r->set("started_at", start.started_at);
    Poco::JSON::Array::Ptr argv = new Poco::JSON::Array;
    for (const std::string& a : start.command) argv->add(a);
    r->set("command", argv);
    resumed->add(r);
  }
  o->set("resumes", resumed);
  if (forked_from) {
    Object::Ptr fork = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    fork->set("run", forked_from->run);
    fork->set("checkpoint", forked_from->checkpoint);
    fork->set("tool_call_id", forked_from->tool_call_id);
    fork->set("at", forked_from->at);
    o->set("forked_from", fork);
  }
  fs::path dir = fsnap::layout::run_dir(store.dir(), run);
  fs::path file = fsnap::layout::run_meta_file(store.dir(), run);
  boost::system::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw sandbox::Error(sandbox::ErrorCode::kIo,
                         "cannot create " + dir.string() + ": " + ec.message());
  std::ostringstream text;
  o->stringify(text, 2);
  text << '\n';
  fsnap::write_file_atomically(file, text.str());
}

bool RunMeta::running() const {
  return !exit_code && process_alive(pid);
}

bool process_alive(long pid) {
  // A killed supervisor whose parent does not reap it stays a zombie, which kill(pid, 0)
  // would still report.
  if (pid <= 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  std::size_t paren = text.rfind(')');
  if (paren == std::string::npos || paren + 2 >= text.size()) return false;
  char state = text[paren + 2];
  return state != 'Z' && state != 'X';
}

std::string new_run_id() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return std::string("run-") + stamp + "-" + fsnap::IdSource::shared_random()->hex(4);
}

void check_run_id(const std::string& id) {
  bool ok = !id.empty() && id.size() <= 100 && id.front() != '.' && id.front() != '-' &&
            id.find("..") == std::string::npos;
  for (char c : id) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
  }
  if (!ok) {
    throw sandbox::Error(sandbox::ErrorCode::kInvalidArgument,
                         "run id " + fsnap::quote_input(id) +
                             " must be at most 100 letters, digits, '-', '_' and '.' (not first)");
  }
}

namespace {

constexpr const char* kGapMark = " gap: ";

void append_log_line(const fs::path& store_dir, const std::string& run, const std::string& line) {
  // No folder is made for a name no run can have (it could leave the store).
  if (!fsnap::layout::is_valid_run_name(run)) return;
  boost::system::error_code ec;
  fs::create_directories(fsnap::layout::run_dir(store_dir, run), ec);
  std::ofstream out(fsnap::layout::run_log_file(store_dir, run).string(), std::ios::app);
  out << fsnap::format_timestamp(std::chrono::system_clock::now()) << line << '\n';
}

}  // namespace

void append_run_log(const fsnap::Store& store, const std::string& run, const std::string& line) {
  append_log_line(store.dir(), run, ' ' + line);
}

void record_gap(const fs::path& store_dir, const std::string& run, const std::string& what) {
  boost::system::error_code ec;
  if (!fs::is_directory(fsnap::layout::repo_dir(store_dir), ec)) return;  // no store to tell
  std::string line = what;
  std::replace(line.begin(), line.end(), '\n', ' ');
  append_log_line(store_dir, run, kGapMark + line);
}

std::size_t count_gaps(const fsnap::Store& store, const std::string& run) {
  std::ifstream in(fsnap::layout::run_log_file(store.dir(), run).string());
  std::size_t gaps = 0;
  for (std::string line; std::getline(in, line);) {
    // "<timestamp> gap: ...": the mark right after the timestamp.
    std::size_t space = line.find(' ');
    if (space != std::string::npos && line.compare(space, std::strlen(kGapMark), kGapMark) == 0) {
      ++gaps;
    }
  }
  return gaps;
}

}  // namespace runs
