// The short-lived commands' side of the watch daemon.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "fsnap/error.hpp"
#include "fsnap/posix.hpp"
#include "fsnap/watch_daemon.hpp"
#include "watch_protocol.hpp"

namespace fsnap {

namespace {

namespace wire = watch_wire;
using std::chrono::milliseconds;

// A connection to the daemon (invalid if none listens), closed on destruction.
UniqueFd connect_to(const Store& store) {
  return UniqueFd(wire::connect_socket(layout::watch_socket(store.dir())));
}

wire::FrameWriter request(const std::string& version, wire::Op op) {
  wire::FrameWriter w;
  for (char c : wire::kMagic) w.u8(static_cast<std::uint8_t>(c));
  w.u32(wire::kProtocol).str(version).u8(static_cast<std::uint8_t>(op));
  return w;
}

CaptureProgress read_progress(wire::FrameReader& r) {
  CaptureProgress p;
  p.entries_seen = r.u64();
  p.files_hashed = r.u64();
  p.bytes_hashed = r.u64();
  return p;
}

// Whether nobody holds the daemon's lock (no daemon alive).
bool lock_free(const Store& store) {
  int fd = ::open(layout::watch_lock_file(store.dir()).c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return true;
  bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return free;
}

}  // namespace

WatchDaemonClient::WatchDaemonClient(Store store, WatchClientOptions options)
    : store_(std::move(store)), options_(std::move(options)) {}

std::optional<CaptureReport> WatchDaemonClient::capture(const CaptureOptions& options) {
  last_fallback_.clear();
  auto fall_back = [&](std::string why, bool start) -> std::optional<CaptureReport> {
    last_fallback_ = std::move(why);
    if (start && options_.start_daemon) options_.start_daemon();
    return std::nullopt;
  };
  try {
    UniqueFd conn = connect_to(store_);
    if (!conn.valid()) return fall_back("no watch daemon is running", true);
    wire::FrameWriter req = request(options_.version, wire::Op::kCapture);
    wire::put_options(req, options);
    if (!wire::send_frame(conn.get(), req.bytes())) {
      return fall_back("the watch daemon closed the connection", true);
    }
    int patience = static_cast<int>(options_.patience.count());
    for (std::string payload;;) {
      if (!wire::receive_frame(conn.get(), payload, patience)) {
        // Killed, stopped or stuck: a daemon that recovers answers the next command.
        return fall_back("the watch daemon did not answer", false);
      }
      wire::FrameReader r(payload);
      auto kind = static_cast<wire::Kind>(r.u8());
      if (kind == wire::Kind::kProgress) {
        CaptureProgress p = read_progress(r);
        if (options.on_progress) options.on_progress(p);
        continue;
      }
      if (kind == wire::Kind::kRefused) {
        std::string why = r.str();
        bool exiting = r.u8() != 0;
        return fall_back(why, exiting);
      }
      if (kind != wire::Kind::kCaptured) return fall_back("unexpected answer", false);
      CaptureReport report;
      report.tree = r.str();
      for (std::uint32_t n = r.u32(); n > 0; --n) {
        SkippedPath s;
        s.path = r.str();
        s.reason = r.str();
        s.size = r.u64();
        if (r.u8() != 0) {
          LargeFileCopy copy;
          copy.name = r.str();
          copy.mtime_ns = static_cast<std::int64_t>(r.u64());
          s.copy = std::move(copy);
        }
        report.skipped.push_back(std::move(s));
      }
      for (std::uint32_t n = r.u32(); n > 0; --n) report.uncaptured.push_back(r.str());
      report.progress = read_progress(r);
      report.progress.done = true;
      if (report.tree.size() != 40) return fall_back("malformed answer", false);
      if (options.on_progress) options.on_progress(report.progress);
      return report;
    }
  } catch (const std::exception& e) {
    return fall_back(e.what(), false);
  }
}

MessageOutcome WatchDaemonClient::message(std::string_view message,
                                          std::chrono::milliseconds timeout) {
  using State = MessageOutcome::State;
  MessageOutcome out;
  try {
    wire::FrameWriter req = request(options_.version, wire::Op::kMessage);
    req.str(message);
    if (req.bytes().size() > wire::kMaxRequest) {
      out.why = "the message is larger than the watch daemon takes";
      return out;
    }
    UniqueFd conn = connect_to(store_);
    if (!conn.valid()) {
      out.why = "no watch daemon is running";
      if (options_.start_daemon) options_.start_daemon();
      return out;
    }
    if (!wire::send_frame(conn.get(), req.bytes())) {
      out.why = "the watch daemon closed the connection";
      return out;
    }
    std::string payload;
    if (!wire::receive_frame(conn.get(), payload, static_cast<int>(timeout.count()))) {
      out.state = State::kNoAnswer;
      out.why = "the watch daemon did not answer";
      return out;
    }
    wire::FrameReader r(payload);
    auto kind = static_cast<wire::Kind>(r.u8());
    if (kind == wire::Kind::kRefused) {
      out.why = r.str();
      if (r.u8() != 0 && options_.start_daemon) options_.start_daemon();
      return out;
    }
    if (kind != wire::Kind::kReply) {
      out.state = State::kNoAnswer;
      out.why = kind == wire::Kind::kFailed ? r.str() : "unexpected answer";
      return out;
    }
    out.reply = r.str();
    out.state = State::kAnswered;
  } catch (const std::exception& e) {
    out.state = State::kNoAnswer;
    out.why = e.what();
  }
  return out;
}

std::optional<WatchDaemonStatus> WatchDaemonClient::status() {
  UniqueFd conn = connect_to(store_);
  if (!conn.valid()) return std::nullopt;
  if (!wire::send_frame(conn.get(), request(options_.version, wire::Op::kStatus).bytes())) {
    return std::nullopt;
  }
  std::string payload;
  if (!wire::receive_frame(conn.get(), payload, static_cast<int>(options_.patience.count()))) {
    return std::nullopt;
  }
  wire::FrameReader r(payload);
  auto kind = static_cast<wire::Kind>(r.u8());
  if (kind == wire::Kind::kRefused) {
    // One of another version, exiting now.
    throw Error(ErrorCode::kConflict, "watch daemon: " + r.str());
  }
  if (kind != wire::Kind::kStatus) throw Error(ErrorCode::kCorrupt, "watch daemon: bad answer");
  WatchDaemonStatus s;
  s.pid = static_cast<std::int64_t>(r.u64());
  s.version = r.str();
  s.workspace = r.str();
  s.uptime = milliseconds(r.u64());
  s.idle = milliseconds(r.u64());
  s.idle_exit = milliseconds(r.u64());
  s.captures = r.u64();
  s.watched_directories = r.u64();
  s.memory_bytes = r.u64();
  s.last_capture_entries = r.u64();
  return s;
}

bool WatchDaemonClient::stop() {
  bool asked = false;
  {
    UniqueFd conn = connect_to(store_);
    if (conn.valid() &&
        wire::send_frame(conn.get(), request(options_.version, wire::Op::kStop).bytes())) {
      std::string payload;
      asked = wire::receive_frame(conn.get(), payload, static_cast<int>(options_.patience.count()));
    }
  }
  if (!asked && lock_free(store_)) return false;
  // Wait until it has written its stat cache and let go of its lock.
  for (int i = 0; i < 250 && !lock_free(store_); ++i) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  if (!lock_free(store_)) {
    throw Error(ErrorCode::kConflict,
                "the watch daemon of " + store_.dir().string() +
                    " did not exit; see its pid with: shadowbox daemon status");
  }
  return true;
}

}  // namespace fsnap
