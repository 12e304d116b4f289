// The watch daemon — one long-lived process per store that keeps the workspace's
// inotify watch and stat cache in memory (HostFilesystem::watch(), as `shadowbox run`
// uses it) and captures for the short-lived commands, so that a snapshot, a restore or
// a hook process costs what changed instead of a walk of the whole tree.
//
// It listens on <store>/watch.sock (0600, in the 0700 store); <store>/watch.lock keeps
// it alone. A client holds the store lock while it asks; the daemon drains the inotify
// queue when the request arrives, so every write that finished before the request is
// in the answer (a queue overflow makes it walk everything). A client that gets no
// answer — no daemon, a crashed one, one of another version, one silent for longer than
// its patience — scans on its own and gets the same tree.
//
// Any process of the user can connect, so the daemon reads every connection as its
// bytes come, each request within a deadline and a size bound (WatchDaemonOptions::
// request_timeout); only the answering — captures and messages — is one at a time.
//
// The daemon exits after idle_exit without requests, when asked to stop, when the
// workspace or the store goes away, or when a client of another version talks to it.
//
// Thread-safety: a WatchDaemonClient is used by one thread at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "fsnap/capture_options.hpp"
#include "fsnap/capture_service.hpp"
#include "fsnap/store.hpp"

namespace fsnap {

// What became of a message sent to the daemon (WatchDaemonClient::message).
struct MessageOutcome {
  enum class State {
    kAnswered,      // reply holds the daemon's reply
    kNotDelivered,  // no daemon took it (none running, another version): nothing was done
    kNoAnswer,      // delivered, then no reply in time (or the handler failed): it may have
                    // been acted on, in part
  };
  State state = State::kNotDelivered;
  std::string reply;
  std::string why;  // when not answered
};

// What a running watch daemon says of itself.
struct WatchDaemonStatus {
  std::int64_t pid = 0;
  std::string version;    // the program version it was started from
  std::string workspace;  // the workspace it watches
  std::chrono::milliseconds uptime{0};
  std::chrono::milliseconds idle{0};       // since the last request
  std::chrono::milliseconds idle_exit{0};  // it exits after this long idle (0: never)
  std::uint64_t captures = 0;              // captures served
  std::uint64_t watched_directories = 0;
  std::uint64_t memory_bytes = 0;          // its resident memory
  std::uint64_t last_capture_entries = 0;  // entries the last capture looked at
};

// How a client finds and starts daemons.
struct WatchClientOptions {
  // The program's version: a daemon of another version is told to exit, not used.
  std::string version;
  // Starts a daemon for the store, detached, without waiting for it; called when none
  // answers. Empty: never start one. Must not throw.
  std::function<void()> start_daemon;
  // The longest silence from a daemon in the middle of an answer before the client
  // gives up on it and scans (the daemon reports progress every 200 ms while working).
  std::chrono::milliseconds patience{3000};
};

// Asks the store's watch daemon for captures (a CaptureService for HostEnv::captures),
// for its status, or to stop.
class WatchDaemonClient : public CaptureService {
 public:
  WatchDaemonClient(Store store, WatchClientOptions options);

  std::optional<CaptureReport> capture(const CaptureOptions& options) override;
  // The daemon's status; nullopt if none answers.
  std::optional<WatchDaemonStatus> status();
  // Asks the daemon to exit and waits (up to 5 s) until it has; false if none ran.
  bool stop();
  // Sends message to the daemon's message handler (WatchDaemonOptions::on_message) and
  // waits up to timeout for its reply. A daemon is started (options.start_daemon) when
  // none runs, for the next message; this one is then not delivered.
  MessageOutcome message(std::string_view message, std::chrono::milliseconds timeout);
  // Why the last capture() had no answer ("" if it had one).
  const std::string& last_fallback() const { return last_fallback_; }

 private:
  Store store_;
  WatchClientOptions options_;
  std::string last_fallback_;
};

// How a daemon runs.
struct WatchDaemonOptions {
  std::string version;     // the program's version (clients of another one make it exit)
  CaptureOptions capture;  // until a client asks with other options
  std::chrono::milliseconds idle_exit{std::chrono::minutes(10)};  // 0: never
  // How often it drains the inotify queue and checks that the workspace and the store
  // are still there.
  std::chrono::milliseconds tick{500};
  // How long a client may take to send its whole request once connected (a second
  // more per 8 MiB it announces), and to take an answer: a slower one is dropped.
  // Requests are read side by side, so a slow client delays no other; a request over
  // 68 MiB is refused as soon as its length is read.
  std::chrono::milliseconds request_timeout{2000};
  // How long a new daemon waits for the lock of one on its way out (one of another
  // version exits when a client of this one talks to it).
  std::chrono::milliseconds lock_wait{2000};
  // Told once, if the workspace has more directories than the inotify watch limit
  // leaves room for: the daemon then walks the whole tree for each capture (with the
  // stat cache), and this says what to raise. Empty: nothing is said.
  std::function<void(const std::string&)> on_watch_limit;
  // Set (from a signal handler, say) to make it exit at the next tick.
  const std::atomic<bool>* stop_requested = nullptr;
  // Answers a client's message (WatchDaemonClient::message), on the daemon's thread,
  // one at a time; captures is this daemon's own capture service, for a handler that
  // records checkpoints (and holds the store lock while it asks, as clients do). Empty:
  // messages are refused. An exception is reported to the client as a failure (the
  // message may have been acted on in part), not as a refusal.
  std::function<std::string(std::string_view message,
                            const std::shared_ptr<CaptureService>& captures)>
      on_message;
};

// Why serve_watch_daemon returned.
enum class WatchDaemonExit {
  kIdle,            // idle for idle_exit
  kStopped,         // a client asked, or stop_requested was set
  kGone,            // the workspace, the store or its socket went away
  kReplaced,        // a client of another version talked to it
  kAlreadyRunning,  // another daemon holds the store's watch lock
};

// Runs a watch daemon for store in this thread until one of WatchDaemonExit happens.
// The stat cache is written to the store on the way out. Throws Error if it cannot
// listen or watch (kIo: the inotify limits, say).
WatchDaemonExit serve_watch_daemon(const Store& store, const WatchDaemonOptions& options);

// Text for a WatchDaemonExit ("idle", "stopped"...).
const char* to_string(WatchDaemonExit e);

}  // namespace fsnap
