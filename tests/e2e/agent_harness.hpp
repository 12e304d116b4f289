// Harness for end-to-end tests with the real agent CLIs: the scripted mocks of their
// model APIs (fixtures/mock-*/server.mjs) on 127.0.0.1, and the pinned binaries the setup
// script installs into .tools/ (`claude`, `codex`, `gemini`).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <Poco/JSON/Stringifier.h>
#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace e2e {

namespace fs = boost::filesystem;

// The pinned Claude Code CLI: $SHADOWBOX_CLAUDE, else <source>/.tools/node_modules/.bin/claude.
inline std::string claude_binary() {
  if (const char* env = std::getenv("SHADOWBOX_CLAUDE"); env != nullptr && *env != '\0') return env;
  return std::string(SHADOWBOX_SOURCE_DIR) + "/.tools/node_modules/.bin/claude";
}

// The pinned Codex CLI and Gemini CLI the setup script installs into .tools/.
inline std::string codex_binary() {
  return std::string(SHADOWBOX_SOURCE_DIR) + "/.tools/node_modules/.bin/codex";
}
inline std::string gemini_binary() {
  return std::string(SHADOWBOX_SOURCE_DIR) + "/.tools/node_modules/.bin/gemini";
}

// The model APIs fixtures/ mocks, one per agent: each server takes the same scenarios.
enum class MockApi {
  kAnthropic,  // the Messages API (Claude Code): fixtures/mock-anthropic
  kOpenAi,     // the Responses API over SSE (Codex CLI): fixtures/mock-openai
  kGemini,     // streamGenerateContent over SSE (Gemini CLI): fixtures/mock-gemini
};

inline std::string mock_server_script(MockApi api) {
  const char* dir = api == MockApi::kOpenAi   ? "mock-openai"
                    : api == MockApi::kGemini ? "mock-gemini"
                                              : "mock-anthropic";
  return std::string(SHADOWBOX_SOURCE_DIR) + "/fixtures/" + dir + "/server.mjs";
}

// A mock model API server, running for the lifetime of the object.
class MockServer {
 public:
  MockServer(const fs::path& scenario, const fs::path& log, MockApi api = MockApi::kAnthropic)
      : log_(log) {
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe failed");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      ::dup2(out[1], STDOUT_FILENO);
      ::close(out[0]);
      ::close(out[1]);
      std::string server = mock_server_script(api);
      ::execlp("node", "node", server.c_str(), "--scenario", scenario.c_str(), "--log", log.c_str(),
               static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(out[1]);
    std::string line;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (line.find('\n') == std::string::npos) {
      int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                      deadline - std::chrono::steady_clock::now())
                                      .count());
      pollfd p{out[0], POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, left) <= 0) break;
      char buf[256];
      ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<std::size_t>(n));
    }
    ::close(out[0]);
    if (line.rfind("listening ", 0) != 0) {
      stop();
      throw std::runtime_error("the mock server did not start (is node installed?): " + line);
    }
    port_ = std::stoi(line.substr(10));
  }
  ~MockServer() { stop(); }
  MockServer(const MockServer&) = delete;
  MockServer& operator=(const MockServer&) = delete;

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // The logged requests, in order.
  std::vector<Poco::JSON::Object::Ptr> requests() const {
    std::vector<Poco::JSON::Object::Ptr> out;
    if (!fs::exists(log_)) return out;
    std::string text = testing_support::read_file(log_);
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      if (end > start) {
        Poco::JSON::Parser parser;
        out.push_back(
            parser.parse(text.substr(start, end - start)).extract<Poco::JSON::Object::Ptr>());
      }
      start = end + 1;
    }
    return out;
  }

 private:
  void stop() {
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  fs::path log_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// The requests of an agent's main loop (those that offer tools) among a mock's requests.
inline std::vector<Poco::JSON::Object::Ptr> main_requests(
    const std::vector<Poco::JSON::Object::Ptr>& requests) {
  std::vector<Poco::JSON::Object::Ptr> out;
  for (const Poco::JSON::Object::Ptr& r : requests) {
    if (r->optValue<bool>("main", false)) out.push_back(r);
  }
  return out;
}

// value as JSON text.
inline std::string to_json(const Poco::Dynamic::Var& value) {
  std::ostringstream out;
  Poco::JSON::Stringifier::stringify(value, out);
  return out.str();
}

// The states a run's lifecycle moved to, from `states RUN --json` output, a state
// entered again at once (a SessionStart, a SessionEnd) once.
inline std::vector<std::string> lifecycle_path(const std::string& states_json) {
  Poco::JSON::Parser parser;
  Poco::JSON::Array::Ptr moves =
      parser.parse(states_json).extract<Poco::JSON::Object::Ptr>()->getArray("moves");
  std::vector<std::string> visited;
  for (std::size_t i = 0; i < moves->size(); ++i) {
    std::string to = moves->getObject(static_cast<unsigned>(i))->getValue<std::string>("to");
    if (visited.empty() || visited.back() != to) visited.push_back(to);
  }
  return visited;
}

// The checkpoint id (the first word) of the line of `log --checkpoints` output that holds
// text, "" if none does (the last such line if several).
inline std::string checkpoint_with(const std::string& log_text, const std::string& text) {
  std::string id;
  std::istringstream lines(log_text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(text) != std::string::npos) id = line.substr(0, line.find(' '));
  }
  return id;
}

// Command hooks that record what an agent gives them, for tests of an agent's hook
// protocol: the hook for event writes its input to <dir>/<ns>-<event>.json and prints
// what answer() set for the event, if anything.
class HookRecorder {
 public:
  explicit HookRecorder(fs::path dir) : dir_(std::move(dir)) {
    fs::create_directories(dir_);
    testing_support::write_file(dir_ / "hook.sh",
                                "#!/bin/sh\n"
                                "cat > \"$2/$(date +%s%N)-$1.json\"\n"
                                "[ -f \"$2/$1.answer\" ] && cat \"$2/$1.answer\"\n"
                                "exit 0\n");
    fs::permissions(dir_ / "hook.sh", fs::owner_all);
  }

  // The command line of the hook for event.
  std::string command(const std::string& event) const {
    return (dir_ / "hook.sh").string() + " " + event + " " + dir_.string();
  }
  // What the hook for event prints from now on.
  void answer(const std::string& event, const std::string& text) const {
    testing_support::write_file(dir_ / (event + ".answer"), text);
  }
  // The inputs the hooks got, in order, each with its event's name.
  std::vector<std::pair<std::string, Poco::JSON::Object::Ptr>> events() const {
    std::vector<fs::path> files;
    for (fs::directory_iterator it(dir_), end; it != end; ++it) {
      if (it->path().extension() == ".json") files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    std::vector<std::pair<std::string, Poco::JSON::Object::Ptr>> out;
    for (const fs::path& f : files) {
      std::string stem = f.stem().string();
      Poco::JSON::Parser parser;
      out.emplace_back(
          stem.substr(stem.find('-') + 1),
          parser.parse(testing_support::read_file(f)).extract<Poco::JSON::Object::Ptr>());
    }
    return out;
  }
  // Their event names, in order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, input] : events()) out.push_back(name);
    return out;
  }

 private:
  fs::path dir_;
};

// A command hook that copies an agent's session data each time it runs, as shadowbox
// preserves the agent's HOME just before it writes a call's pre-tool record: each run
// takes the next free number n (0, 1, ...; runs in parallel each get their own), copies
// every source that exists to <dir>/<n>/<its destination> and the hook's input to
// <dir>/<n>.json. <dir>/<n> is then a HOME holding the session data as at that call.
class SessionSnapshots {
 public:
  // sources: (a file or directory, where it goes in a snapshot's HOME (relative)).
  SessionSnapshots(fs::path dir, std::vector<std::pair<fs::path, std::string>> sources)
      : dir_(std::move(dir)) {
    fs::create_directories(dir_);
    std::string script =
        "#!/bin/sh\n"
        "d='" +
        dir_.string() +
        "'\n"
        "n=0\n"
        "while ! mkdir \"$d/$n\" 2>/dev/null; do n=$((n+1)); done\n"
        "cat > \"$d/$n.json.part\"\n";
    for (const auto& [from, to] : sources) {
      fs::path target = dir_ / "$n" / to;
      script += "if [ -e '" + from.string() + "' ]; then mkdir -p \"" +
                target.parent_path().string() + "\" && cp -R '" + from.string() + "' \"" +
                target.string() + "\"; fi\n";
    }
    script += "mv \"$d/$n.json.part\" \"$d/$n.json\"\nexit 0\n";
    testing_support::write_file(dir_ / "snapshot.sh", script);
    fs::permissions(dir_ / "snapshot.sh", fs::owner_all);
  }

  // The hook's command line.
  std::string command() const { return (dir_ / "snapshot.sh").string(); }
  // The HOME of the snapshot taken when the hook's input held text (the call's id or
  // command); empty if none did.
  fs::path home_where(const std::string& text) const {
    for (int n = 0; fs::exists(dir_ / (std::to_string(n) + ".json")); ++n) {
      if (testing_support::read_file(dir_ / (std::to_string(n) + ".json")).find(text) !=
          std::string::npos) {
        return dir_ / std::to_string(n);
      }
    }
    return {};
  }

 private:
  fs::path dir_;
};

// Waits up to limit until no live process (zombies aside) is in process group pgid;
// whether none was left.
inline bool group_gone(pid_t pgid, std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    bool left = false;
    for (fs::directory_iterator it("/proc"), end; it != end && !left; ++it) {
      std::string name = it->path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream in(it->path() / "stat");
      std::string text;
      if (!std::getline(in, text)) continue;
      // "pid (comm) S ppid pgrp ...": comm may hold spaces and parentheses.
      std::istringstream fields(text.substr(text.rfind(')') + 2));
      char state = '?';
      long ppid = 0;
      long pgrp = 0;
      fields >> state >> ppid >> pgrp;
      left = pgrp == pgid && state != 'Z' && state != 'X';
    }
    if (!left) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    ::usleep(20 * 1000);
  }
}

// The environment Claude Code needs to talk to the mock, with home as HOME.
inline std::vector<std::string> claude_env(const MockServer& server, const fs::path& home) {
  return {"HOME=" + home.string(),
          "ANTHROPIC_BASE_URL=" + server.base_url(),
          "ANTHROPIC_API_KEY=sk-ant-test-dummy-key",
          "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
          "IS_SANDBOX=1",
          "SHADOWBOX_CONFIG=",
          "SHADOWBOX_NO_PROGRESS=1"};
}

// A workspace and a store in a temporary directory, and the shadowbox CLI on them in
// the environment env() gives (the agent's and the person's).
class ShadowboxTest : public ::testing::Test {
 protected:
  ShadowboxTest() {
    fs::create_directories(ws_);
    ws_ = fs::canonical(ws_);
  }

  virtual std::vector<std::string> env() const = 0;

  std::vector<std::string> shadowbox_argv(std::vector<std::string> args) const {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  testing_support::CommandResult shadowbox(std::vector<std::string> args) {
    return testing_support::run_command(shadowbox_argv(std::move(args)), ws_, env(), "",
                                        std::chrono::seconds(180));
  }
  // Starts shadowbox with args in a process group of its own (so that kill -9 of the
  // group gets it and its agent), its stdout to /dev/null if quiet. Returns the pid.
  pid_t start_in_own_group(std::vector<std::string> args, bool quiet = false) const {
    std::vector<std::string> argv = shadowbox_argv(std::move(args));
    std::vector<std::string> environment = env();
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      for (const std::string& e : environment) ::putenv(const_cast<char*>(e.c_str()));
      std::vector<char*> a;
      for (const std::string& arg : argv) a.push_back(const_cast<char*>(arg.c_str()));
      a.push_back(nullptr);
      if (quiet) ::dup2(::open("/dev/null", O_WRONLY), STDOUT_FILENO);
      if (::chdir(ws_.c_str()) == 0) ::execv(a[0], a.data());
      ::_exit(127);
    }
    ::setpgid(pid, pid);
    return pid;
  }
  // Waits (10 s at most) until the preserved HOME of run holds text; whether it did.
  bool wait_until_preserved(const std::string& run, const std::string& text) const {
    for (int i = 0; i < 100; ++i) {
      if (testing_support::run_command({"git", "--git-dir", (store_ / "repo.git").string(), "grep",
                                        "-q", "-F", text, "refs/shadowbox/home/" + run},
                                       temp_.path())
              .exit_code == 0) {
        return true;
      }
      ::usleep(100 * 1000);
    }
    return false;
  }

  // The entry of run in `runs --json` (null, and a failure, if there is none).
  Poco::JSON::Object::Ptr run_info(const std::string& run) {
    testing_support::CommandResult r = shadowbox({"--json", "runs"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Poco::JSON::Parser parser;
    auto runs = parser.parse(r.out).extract<Poco::JSON::Array::Ptr>();
    for (std::size_t i = 0; i < runs->size(); ++i) {
      if (runs->getObject(static_cast<unsigned>(i))->getValue<std::string>("run") == run) {
        return runs->getObject(static_cast<unsigned>(i));
      }
    }
    ADD_FAILURE() << "no run " << run << " in " << r.out;
    return nullptr;
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
};

}  // namespace e2e
