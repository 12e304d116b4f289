// `shadowbox daemon status|stop|serve`: the store's watch daemon.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <iostream>

#include <boost/filesystem/operations.hpp>

#include "commands.hpp"
#include "fsnap/store_layout.hpp"
#include "hook_event.hpp"
#include "output.hpp"
#include "watch_daemon.hpp"

namespace cli {

namespace {

namespace fs = boost::filesystem;

std::atomic<bool> stop_requested{false};

extern "C" void request_stop(int /*signal*/) {
  stop_requested = true;
}

std::string seconds_text(std::chrono::milliseconds d) {
  long long s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (s < 120) return std::to_string(s) + "s";
  if (s < 7200) return std::to_string(s / 60) + "m";
  return std::to_string(s / 3600) + "h";
}

std::string mib_text(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

// A log that outgrew this is started afresh when a daemon starts.
constexpr std::uintmax_t kMaxLog = 1u << 20;

int serve(const Context& context, const fsnap::Store& store) {
  boost::system::error_code ec;
  fs::path log = fsnap::layout::watch_log_file(store.dir());
  if (fs::file_size(log, ec) > kMaxLog && !ec) ::truncate(log.c_str(), 0);
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  sigset_t handled;
  sigemptyset(&handled);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    ::sigaction(sig, &action, nullptr);
    sigaddset(&handled, sig);
  }
  ::sigprocmask(SIG_UNBLOCK, &handled, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  fsnap::WatchDaemonOptions options;
  options.version = daemon_version();
  options.capture = context.config.capture;
  options.idle_exit = context.config.watch.idle_exit;
  options.stop_requested = &stop_requested;
  // Into the daemon's log (watch.log in the store), where its exit is written too.
  options.on_watch_limit = [](const std::string& advice) {
    std::cerr << "shadowbox: watch daemon: " << advice << '\n';
  };
  // Hook events a thin client (`shadowbox-hook`) relays: recorded here, with this
  // daemon's captures, by the code `shadowbox hook claude-code` runs — and with what
  // one event leaves for the next (the store's repository open, each run's HOME
  // preserver and spend meter), where a hook process starts from nothing each time.
  WarmHookState warm;
  options.on_message = [&store, &warm](std::string_view text,
                                       const std::shared_ptr<fsnap::CaptureService>& captures) {
    std::optional<HookMessage> message = decode_message(text);
    if (!message) {
      HookReply unknown;
      unknown.fall_back = true;
      unknown.why = "not a hook event";
      return encode(unknown);
    }
    return encode(answer_relayed_hook_event(*message, store, captures, &warm));
  };
  fsnap::WatchDaemonExit exit = fsnap::serve_watch_daemon(store, options);
  std::cerr << "shadowbox: watch daemon " << ::getpid() << " for " << store.workspace().string()
            << " exited: " << fsnap::to_string(exit) << '\n';
  return 0;
}

}  // namespace

int cmd_daemon(const Context& context, const Args& parsed) {
  const std::string& action = parsed.operands()[0];
  if (action != "status" && action != "stop" && action != "serve") {
    throw parsed.usage_error("expected status, stop or serve, not " + fsnap::quote_input(action));
  }
  fsnap::Store store = context.open_store(false);
  if (action == "serve") return serve(context, store);
  fsnap::WatchClientOptions options;
  options.version = daemon_version();
  fsnap::WatchDaemonClient client(store, options);
  std::optional<fsnap::WatchDaemonStatus> status = client.status();
  if (action == "stop") {
    bool stopped = client.stop();
    if (context.options.json) {
      Poco::JSON::Object::Ptr out = make_object();
      out->set("stopped", stopped);
      out->set("pid", status ? Poco::Dynamic::Var(status->pid) : Poco::Dynamic::Var());
      print_json(std::cout, out);
    } else if (stopped) {
      std::cout << "stopped the watch daemon" << (status ? " " + std::to_string(status->pid) : "")
                << '\n';
    } else {
      std::cout << "no watch daemon was running\n";
    }
    return 0;
  }
  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    out->set("running", status.has_value());
    out->set("enabled", context.config.watch.daemon);
    if (status) {
      out->set("pid", status->pid);
      out->set("version", status->version);
      set_path(*out, "workspace", status->workspace);
      out->set("uptime_ms", static_cast<Poco::Int64>(status->uptime.count()));
      out->set("idle_ms", static_cast<Poco::Int64>(status->idle.count()));
      out->set("idle_exit_ms", static_cast<Poco::Int64>(status->idle_exit.count()));
      out->set("captures", status->captures);
      out->set("watched_directories", status->watched_directories);
      out->set("memory_bytes", status->memory_bytes);
      out->set("last_capture_entries", status->last_capture_entries);
    }
    print_json(std::cout, out);
    return 0;
  }
  if (!status) {
    std::cout << "watch daemon: not running"
              << (context.config.watch.daemon ? " (the next snapshot starts one)"
                                              : " (watch.daemon is off)")
              << '\n';
    return 0;
  }
  std::cout << "watch daemon: running, pid " << status->pid << '\n'
            << "  workspace:   " << status->workspace << '\n'
            << "  watching:    " << counted(status->watched_directories, "directory", "directories")
            << '\n'
            << "  memory:      " << mib_text(status->memory_bytes) << " resident\n"
            << "  captures:    " << status->captures << " served (the last looked at "
            << counted(status->last_capture_entries, "entry", "entries") << ")\n"
            << "  up:          " << seconds_text(status->uptime) << ", idle "
            << seconds_text(status->idle);
  if (status->idle_exit.count() > 0) {
    std::cout << " (exits after " << seconds_text(status->idle_exit) << " idle)";
  }
  std::cout << '\n';
  return 0;
}

}  // namespace cli
