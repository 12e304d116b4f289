// The watch daemon's side: requests are read from every connection as their bytes
// come, each within its deadline, so that no client can hold up another; each complete
// request is then answered in turn — captures and messages one at a time.
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include <boost/filesystem/operations.hpp>

#include "fsnap/enum_names.hpp"
#include "fsnap/error.hpp"
#include "fsnap/host_filesystem.hpp"
#include "fsnap/posix.hpp"
#include "fsnap/watch_daemon.hpp"
#include "watch_protocol.hpp"

namespace fsnap {

namespace {

namespace wire = watch_wire;
using Steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Connections whose requests are being read: beyond this many, the oldest is closed.
constexpr std::size_t kMaxReading = 64;
// A request, and an answer, get a second per 8 MiB on top of the request timeout.
constexpr std::uint64_t kBytesPerMs = (8u << 20) / 1000;

// A capture that examined at least this many entries (the first one, a rescan) is
// followed by giving free memory back to the kernel.
constexpr std::uint64_t kTrimAfterEntries = 10'000;

// Gives the heap's free memory back to the kernel. A walk of the whole workspace holds the
// stat cache loaded and the one it builds side by side; freed, that memory would stay
// resident in glibc's arenas for the daemon's life, more than the cache it keeps.
void give_back_free_memory() {
#ifdef __GLIBC__
  ::malloc_trim(0);
#endif
}

// Drops this process's resident pages of the pack indexes under pack_dir (a canonical
// path): libgit2 maps each index whole, read-only and shared, and every lookup touches a
// few pages of it, which then stay in a long-lived process's memory. Dropped, they stay
// in the page cache and come back on the next lookup as minor faults. Best effort.
void release_pack_index_pages(const std::string& pack_dir) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const std::string prefix = pack_dir + "/";
  while (std::getline(maps, line)) {
    // start-end perms offset dev inode path
    std::size_t path = line.find('/');
    if (path == std::string::npos || line.compare(path, prefix.size(), prefix) != 0 ||
        line.size() < 4 || line.compare(line.size() - 4, 4, ".idx") != 0) {
      continue;
    }
    unsigned long start = 0;
    unsigned long end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &start, &end) != 2 || end <= start) continue;
    ::madvise(reinterpret_cast<void*>(start), end - start, MADV_DONTNEED);
  }
}

// path with its symlinks resolved, as the kernel names it; path itself if that fails.
std::string canonical_or_as_is(const boost::filesystem::path& path) {
  boost::system::error_code ec;
  boost::filesystem::path resolved = boost::filesystem::weakly_canonical(path, ec);
  return ec ? path.string() : resolved.string();
}

// Device and inode of a path (not following a last symlink); nullopt if absent.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const FileId&) const = default;
};

std::optional<FileId> file_id(const boost::filesystem::path& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::uint64_t ms(Steady::duration d) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<milliseconds>(d).count());
}

// The daemon's hold on <store>/watch.lock; released when destroyed.
class WatchLock {
 public:
  // Takes the lock, waiting up to wait for a holder to let go; false if it could not.
  bool take(const boost::filesystem::path& file, milliseconds wait) {
    fd_.reset(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!fd_.valid()) throw system_error("cannot open " + file.string(), errno);
    Steady::time_point until = Steady::now() + wait;
    while (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) return false;
      if (Steady::now() >= until) return false;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return true;
  }

 private:
  UniqueFd fd_;
};

class Daemon {
 public:
  Daemon(const Store& store, const WatchDaemonOptions& options)
      : store_(store),
        options_(options),
        socket_path_(layout::watch_socket(store.dir())),
        pack_dir_(canonical_or_as_is(layout::repo_dir(store.dir()) / "objects" / "pack")),
        started_(Steady::now()),
        last_request_(started_) {}

  ~Daemon() {
    for (const auto& [fd, c] : reading_) ::close(fd);
    if (listen_fd_ >= 0) {
      // Only our own socket file: a daemon after us may already have made another.
      if (socket_id_ && file_id(socket_path_) == socket_id_) ::unlink(socket_path_.c_str());
      ::close(listen_fd_);
    }
  }

  WatchDaemonExit run() {
    if (!lock_.take(layout::watch_lock_file(store_.dir()), options_.lock_wait)) {
      return WatchDaemonExit::kAlreadyRunning;
    }
    workspace_id_ = file_id(store_.workspace());
    store_id_ = file_id(store_.dir());
    open_filesystem(options_.capture);
    // Watching before listening: no client is answered by a daemon that could miss a
    // change.
    ::unlink(socket_path_.c_str());
    listen_fd_ = wire::listen_socket(socket_path_);
    if (listen_fd_ < 0) {
      throw system_error("cannot listen on " + socket_path_.string(), errno);
    }
    socket_id_ = file_id(socket_path_);
    ::fcntl(listen_fd_, F_SETFL, ::fcntl(listen_fd_, F_GETFL) | O_NONBLOCK);
    for (Steady::time_point tick = Steady::now();;) {
      if (options_.stop_requested != nullptr && options_.stop_requested->load()) {
        return WatchDaemonExit::kStopped;
      }
      if (std::optional<WatchDaemonExit> exit = take_requests(tick)) return *exit;
      if (Steady::now() < tick) continue;
      tick = Steady::now() + options_.tick;
      fs_->drain_watch();
      if (gone()) return WatchDaemonExit::kGone;
      if (options_.idle_exit.count() > 0 && Steady::now() - last_request_ >= options_.idle_exit) {
        return WatchDaemonExit::kIdle;
      }
    }
  }

 private:
  // A connection whose request is being read.
  struct Reading {
    wire::FrameReceiver frame{wire::kMaxRequest};
    Steady::time_point since;
    Steady::time_point deadline;
  };

  milliseconds time_for(std::uint64_t bytes) const {
    return options_.request_timeout + milliseconds(bytes / kBytesPerMs);
  }

  // Waits until `until` at most for bytes of requests, reads what came, and answers
  // each request that is complete; a value if the daemon must exit now.
  std::optional<WatchDaemonExit> take_requests(Steady::time_point until) {
    std::vector<pollfd> polled;
    polled.push_back({Steady::now() >= accept_paused_until_ ? listen_fd_ : -1, POLLIN, 0});
    for (const auto& [fd, c] : reading_) {
      polled.push_back({fd, POLLIN, 0});
      until = std::min(until, c.deadline);
    }
    if (polled[0].fd < 0) until = std::min(until, accept_paused_until_);
    auto wait = std::chrono::ceil<milliseconds>(until - Steady::now()).count();
    int ready =
        ::poll(polled.data(), polled.size(), static_cast<int>(std::max<long long>(wait, 0)));
    if (ready > 0) {
      if (polled[0].revents != 0) accept_all();
      for (std::size_t i = 1; i < polled.size(); ++i) {
        if (polled[i].revents == 0) continue;
        if (std::optional<WatchDaemonExit> exit = read_request(polled[i].fd)) return exit;
      }
    }
    Steady::time_point now = Steady::now();
    for (auto it = reading_.begin(); it != reading_.end();) {
      if (it->second.deadline <= now) {
        // Too slow, or silent: whatever it sends later is not read.
        ::close(it->first);
        it = reading_.erase(it);
      } else {
        ++it;
      }
    }
    return std::nullopt;
  }

  void accept_all() {
    for (;;) {
      int conn = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (conn < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: the oldest reader makes room, else accepting waits.
          if (!close_oldest_reading()) accept_paused_until_ = Steady::now() + options_.tick;
        }
        return;
      }
      while (reading_.size() >= kMaxReading && close_oldest_reading()) {
      }
      Reading& r = reading_[conn];
      r.since = Steady::now();
      r.deadline = r.since + options_.request_timeout;
    }
  }

  bool close_oldest_reading() {
    auto oldest = std::min_element(
        reading_.begin(), reading_.end(),
        [](const auto& a, const auto& b) { return a.second.since < b.second.since; });
    if (oldest == reading_.end()) return false;
    ::close(oldest->first);
    reading_.erase(oldest);
    return true;
  }

  // Reads what conn has sent; answers its request once it is complete.
  std::optional<WatchDaemonExit> read_request(int conn) {
    auto it = reading_.find(conn);
    if (it == reading_.end()) return std::nullopt;
    Reading& r = it->second;
    switch (r.frame.read_from(conn)) {
      case wire::FrameReceiver::Result::kMore:
        // The whole request has its deadline, longer for a larger one.
        r.deadline = r.since + time_for(r.frame.announced());
        return std::nullopt;
      case wire::FrameReceiver::Result::kTooLarge:
        refuse(conn,
               "a request of " + std::to_string(r.frame.announced()) +
                   " bytes is over the watch daemon's limit of " +
                   std::to_string(wire::kMaxRequest),
               false);
        break;
      case wire::FrameReceiver::Result::kClosed:
        break;
      case wire::FrameReceiver::Result::kDone: {
        std::string payload = std::move(r.frame.payload());
        reading_.erase(it);
        Steady::time_point start = Steady::now();
        std::optional<WatchDaemonExit> exit = serve(conn, payload);
        ::close(conn);
        last_request_ = Steady::now();
        // The others' time runs while they are read, not while the daemon works.
        for (auto& [fd, other] : reading_) {
          other.since += last_request_ - start;
          other.deadline += last_request_ - start;
        }
        return exit;
      }
    }
    ::close(conn);
    reading_.erase(it);
    return std::nullopt;
  }
  void open_filesystem(const CaptureOptions& given) {
    fs_.reset();  // its stat cache is written for the one after it
    capture_options_ = given;
    CaptureOptions options = given;
    options.on_progress = [this](const CaptureProgress& p) { report(p); };
    fs_ = std::make_unique<HostFilesystem>(store_, std::move(options));
    fs_->watch([this](const std::string& advice) {
      if (std::exchange(limit_told_, true) || !options_.on_watch_limit) return;
      options_.on_watch_limit(advice);
    });
    give_back_free_memory();  // what loading the cache and adding the watches freed
  }

  // Whether the workspace, the store or the socket is no longer what it was.
  bool gone() const {
    return file_id(store_.workspace()) != workspace_id_ || file_id(store_.dir()) != store_id_ ||
           file_id(socket_path_) != socket_id_;
  }

  // Sends progress to the client being served (from the capture's reporting thread);
  // a client that does not take it gets no more.
  void report(const CaptureProgress& p) {
    if (report_fd_ < 0 || p.done) return;
    wire::FrameWriter w;
    w.u8(static_cast<std::uint8_t>(wire::Kind::kProgress))
        .u64(p.entries_seen)
        .u64(p.files_hashed)
        .u64(p.bytes_hashed);
    if (!answer(report_fd_, w)) report_fd_ = -1;
  }

  // Sends an answer, within its time; false if the client did not take it.
  bool answer(int conn, const wire::FrameWriter& w) const {
    return wire::send_frame(conn, w.bytes(), static_cast<int>(time_for(w.bytes().size()).count()));
  }

  void refuse(int conn, const std::string& why, bool exiting) const {
    wire::FrameWriter w;
    w.u8(static_cast<std::uint8_t>(wire::Kind::kRefused)).str(why).u8(exiting ? 1 : 0);
    answer(conn, w);
  }

  // Answers one request; a value if the daemon must exit now.
  std::optional<WatchDaemonExit> serve(int conn, const std::string& payload) {
    try {
      wire::FrameReader r(payload);
      if (payload.compare(0, wire::kMagic.size(), wire::kMagic) != 0) return std::nullopt;
      for (std::size_t i = 0; i < wire::kMagic.size(); ++i) r.u8();
      std::uint32_t protocol = r.u32();
      std::string version = r.str();
      if (protocol != wire::kProtocol || version != options_.version) {
        refuse(conn,
               "the watch daemon is from shadowbox " + options_.version + "; this is " + version,
               true);
        return WatchDaemonExit::kReplaced;
      }
      auto op = static_cast<wire::Op>(r.u8());
      switch (op) {
        case wire::Op::kCapture: {
          std::optional<WatchDaemonExit> exit = capture(conn, wire::get_options(r));
          release_pack_index_pages(pack_dir_);  // after the answer: nobody waits for it
          return exit;
        }
        case wire::Op::kStatus:
          send_status(conn);
          return std::nullopt;
        case wire::Op::kMessage: {
          std::optional<WatchDaemonExit> exit = message(conn, r.str());
          release_pack_index_pages(pack_dir_);
          return exit;
        }
        case wire::Op::kStop: {
          wire::FrameWriter w;
          w.u8(static_cast<std::uint8_t>(wire::Kind::kStopping));
          answer(conn, w);
          return WatchDaemonExit::kStopped;
        }
      }
      refuse(conn, "unknown request", false);
    } catch (const Error&) {
      // A malformed request: no answer.
    }
    return std::nullopt;
  }

  std::optional<WatchDaemonExit> capture(int conn, const CaptureOptions& options) {
    // Everything written before the request is in the kernel's queue by now; the
    // capture drains it first. A workspace replaced by another directory of the same
    // name is not the one watched.
    if (gone()) {
      refuse(conn, "the watched workspace or store went away", true);
      return WatchDaemonExit::kGone;
    }
    try {
      // Progress goes to this client while the capture runs (the capture's reporting
      // thread ends before it returns).
      report_fd_ = conn;
      struct Unset {
        int& fd;
        ~Unset() { fd = -1; }
      } unset{report_fd_};
      CaptureReport report = capture_now(options);
      wire::FrameWriter w;
      w.u8(static_cast<std::uint8_t>(wire::Kind::kCaptured)).str(report.tree);
      w.u32(static_cast<std::uint32_t>(report.skipped.size()));
      for (const SkippedPath& s : report.skipped) {
        w.str(s.path).str(s.reason).u64(s.size).u8(s.copy ? 1 : 0);
        if (s.copy) w.str(s.copy->name).u64(static_cast<std::uint64_t>(s.copy->mtime_ns));
      }
      w.u32(static_cast<std::uint32_t>(report.uncaptured.size()));
      for (const std::string& u : report.uncaptured) w.str(u);
      w.u64(report.progress.entries_seen)
          .u64(report.progress.files_hashed)
          .u64(report.progress.bytes_hashed);
      answer(conn, w);
    } catch (const std::exception& e) {
      // The client scans and meets the same problem, with its own message.
      refuse(conn, e.what(), false);
    }
    return std::nullopt;
  }

  // The daemon's own captures, for a message handler: what a client would get, without
  // the connection.
  class LocalCaptures : public CaptureService {
   public:
    explicit LocalCaptures(Daemon& daemon) : daemon_(daemon) {}
    std::optional<CaptureReport> capture(const CaptureOptions& options) override {
      return daemon_.capture_now(options);
    }

   private:
    Daemon& daemon_;
  };

  CaptureReport capture_now(const CaptureOptions& options) {
    if (!wire::same_capture(options, capture_options_)) open_filesystem(options);
    CaptureReport report = fs_->capture_for_lock_holder();
    ++captures_;
    last_capture_entries_ = report.progress.entries_seen;
    if (report.progress.entries_seen >= kTrimAfterEntries) give_back_free_memory();
    return report;
  }

  std::optional<WatchDaemonExit> message(int conn, const std::string& text) {
    if (!options_.on_message) {
      refuse(conn, "this watch daemon takes no messages", false);
      return std::nullopt;
    }
    if (gone()) {
      refuse(conn, "the watched workspace or store went away", true);
      return WatchDaemonExit::kGone;
    }
    try {
      if (!local_captures_) local_captures_ = std::make_shared<LocalCaptures>(*this);
      std::string reply = options_.on_message(text, local_captures_);
      wire::FrameWriter w;
      w.u8(static_cast<std::uint8_t>(wire::Kind::kReply)).str(reply);
      answer(conn, w);
    } catch (const std::exception& e) {
      // Not a refusal: the handler may have done part of its work.
      wire::FrameWriter w;
      w.u8(static_cast<std::uint8_t>(wire::Kind::kFailed)).str(e.what());
      answer(conn, w);
    }
    return std::nullopt;
  }

  void send_status(int conn) const {
    Steady::time_point now = Steady::now();
    wire::FrameWriter w;
    w.u8(static_cast<std::uint8_t>(wire::Kind::kStatus))
        .u64(static_cast<std::uint64_t>(::getpid()))
        .str(options_.version)
        .str(store_.workspace().string())
        .u64(ms(now - started_))
        .u64(ms(now - last_request_))
        .u64(static_cast<std::uint64_t>(options_.idle_exit.count()))
        .u64(captures_)
        .u64(fs_->watched_directories())
        .u64(resident_bytes())
        .u64(last_capture_entries_);
    answer(conn, w);
  }

  const Store& store_;
  const WatchDaemonOptions& options_;
  boost::filesystem::path socket_path_;
  std::string pack_dir_;  // the store's pack directory, as /proc/self/maps names it
  Steady::time_point started_;
  Steady::time_point last_request_;
  WatchLock lock_;
  std::optional<FileId> workspace_id_;
  std::optional<FileId> store_id_;
  std::optional<FileId> socket_id_;
  int listen_fd_ = -1;
  std::map<int, Reading> reading_;  // by connection
  Steady::time_point accept_paused_until_;
  CaptureOptions capture_options_;
  std::unique_ptr<HostFilesystem> fs_;
  bool limit_told_ = false;                        // on_watch_limit was called (once per daemon)
  int report_fd_ = -1;                             // the client being served, during a capture
  std::shared_ptr<LocalCaptures> local_captures_;  // for the message handler
  std::uint64_t captures_ = 0;
  std::uint64_t last_capture_entries_ = 0;
};

}  // namespace

WatchDaemonExit serve_watch_daemon(const Store& store, const WatchDaemonOptions& options) {
  Daemon daemon(store, options);
  return daemon.run();
}

const char* to_string(WatchDaemonExit e) {
  static constexpr EnumName<WatchDaemonExit> kNames[] = {
      {WatchDaemonExit::kIdle, "idle"},
      {WatchDaemonExit::kStopped, "stopped"},
      {WatchDaemonExit::kGone, "workspace or store gone"},
      {WatchDaemonExit::kReplaced, "replaced by another version"},
      {WatchDaemonExit::kAlreadyRunning, "another daemon is running"}};
  return name_of(kNames, e, "?").data();  // each name is a whole literal
}

}  // namespace fsnap
