#include "http_request_reader.hpp"

#include <algorithm>
#include <sstream>

#include <Poco/Exception.h>

namespace hooks {

namespace {

constexpr std::size_t kMaxChunkLine = 1024;
constexpr std::size_t kMaxTrailerLine = 8192;

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c <= ' ' || c >= 127) return false;
  }
  return true;
}

}  // namespace

HttpRequestReader::Step HttpRequestReader::refuse(int status, std::string why) {
  state_ = State::kDone;
  refusal_status_ = status;
  refusal_ = std::move(why);
  return Step::kRefused;
}

HttpRequestReader::Step HttpRequestReader::next() {
  if (refusal_status_ != 0) return Step::kRefused;
  for (;;) {
    switch (state_) {
      case State::kLine:
        return read_line();
      case State::kHeaders:
        return read_headers();
      case State::kBody:
        return read_body();
      case State::kChunkSize: {
        Step s = read_chunk_size();
        if (state_ == State::kChunkSize || s == Step::kRefused) return s;
        continue;
      }
      case State::kChunkData: {
        std::size_t n = std::min<std::uint64_t>(unread(), body_left_);
        body_.append(buffer_, pos_, n);
        pos_ += n;
        body_left_ -= n;
        if (body_left_ > 0) {
          compact();
          return Step::kNeedMore;
        }
        state_ = State::kChunkEnd;
        continue;
      }
      case State::kChunkEnd:
        if (unread() < 2) return Step::kNeedMore;
        if (buffer_.compare(pos_, 2, "\r\n") != 0) return refuse(400, "malformed chunk");
        pos_ += 2;
        state_ = State::kChunkSize;
        continue;
      case State::kTrailer: {
        Step s = read_trailer();
        if (state_ == State::kTrailer || s == Step::kRefused) return s;
        continue;
      }
      case State::kDone:
        return Step::kComplete;
    }
  }
}

bool HttpRequestReader::take_line(std::size_t limit, std::string_view& line, bool& too_long) {
  too_long = false;
  std::size_t end = buffer_.find("\r\n", pos_);
  if (end == std::string::npos || end - pos_ > limit) {
    too_long = unread() > limit + 1;
    return false;
  }
  line = std::string_view(buffer_).substr(pos_, end - pos_);
  pos_ = end + 2;
  return true;
}

HttpRequestReader::Step HttpRequestReader::read_line() {
  std::string_view line;
  bool too_long = false;
  do {
    // Empty lines before a request are ignored (RFC 9112, 2.2).
    if (!take_line(limits_.max_request_line, line, too_long)) {
      return too_long ? refuse(414, "request line too long") : Step::kNeedMore;
    }
  } while (line.empty());
  head_start_ = pos_ - line.size() - 2;
  std::size_t first = line.find(' ');
  std::size_t last = line.rfind(' ');
  if (first == std::string_view::npos || first == last) return refuse(400, "malformed request");
  std::string_view method = line.substr(0, first);
  std::string_view target = line.substr(first + 1, last - first - 1);
  std::string_view version = line.substr(last + 1);
  if (!is_token(method) || !is_token(target) || !is_token(version) ||
      version.rfind("HTTP/1.", 0) != 0) {
    return refuse(400, "malformed request");
  }
  method_ = method;
  target_ = target;
  state_ = State::kHeaders;
  header_scan_ = pos_;
  return Step::kRequestLine;
}

HttpRequestReader::Step HttpRequestReader::read_headers() {
  std::size_t end;
  if (buffer_.compare(pos_, 2, "\r\n") == 0) {
    end = pos_ + 2;
  } else {
    // Resume where the last search stopped (a slow sender's bytes come a few at a time).
    std::size_t blank = buffer_.find("\r\n\r\n", std::max(header_scan_, pos_) - 2);
    if (blank == std::string::npos) {
      if (buffer_.size() - head_start_ > limits_.max_head) return refuse(431, "headers too large");
      header_scan_ = buffer_.size() >= 2 ? buffer_.size() - 2 : 0;
      return Step::kNeedMore;
    }
    end = blank + 4;
  }
  if (end - head_start_ > limits_.max_head) return refuse(431, "headers too large");
  try {
    std::istringstream in(buffer_.substr(head_start_, end - head_start_));
    head_.read(in);
  } catch (const Poco::Exception& e) {
    return refuse(400, "malformed headers: " + e.message());
  }
  pos_ = end;
  if (head_.has(Poco::Net::HTTPMessage::TRANSFER_ENCODING)) {
    if (!head_.getChunkedTransferEncoding()) return refuse(501, "unsupported transfer encoding");
    if (head_.hasContentLength()) return refuse(400, "both a length and chunked encoding");
    chunked_ = true;
    state_ = State::kChunkSize;
    return Step::kHead;
  }
  std::int64_t length = 0;
  if (head_.has(Poco::Net::HTTPMessage::CONTENT_LENGTH)) {
    try {
      length = head_.getContentLength64();
    } catch (const Poco::Exception&) {
      return refuse(400, "malformed Content-Length");
    }
    if (length < 0) return refuse(400, "malformed Content-Length");
    if (static_cast<std::uint64_t>(length) > limits_.max_body) {
      return refuse(413, "request too large");
    }
  }
  body_left_ = static_cast<std::uint64_t>(length);
  state_ = State::kBody;
  return Step::kHead;
}

HttpRequestReader::Step HttpRequestReader::read_body() {
  if (body_.empty() && body_left_ > 0) body_.reserve(body_left_);
  std::size_t n = std::min<std::uint64_t>(unread(), body_left_);
  body_.append(buffer_, pos_, n);
  pos_ += n;
  body_left_ -= n;
  compact();
  if (body_left_ > 0) return Step::kNeedMore;
  state_ = State::kDone;
  return Step::kComplete;
}

HttpRequestReader::Step HttpRequestReader::read_chunk_size() {
  std::string_view line;
  bool too_long = false;
  if (!take_line(kMaxChunkLine, line, too_long)) {
    return too_long ? refuse(400, "malformed chunk") : Step::kNeedMore;
  }
  line = line.substr(0, line.find(';'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  if (line.empty() || line.size() > 16) return refuse(400, "malformed chunk");
  std::uint64_t size = 0;
  for (char c : line) {
    int digit = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
    if (digit < 0) return refuse(400, "malformed chunk");
    size = size * 16 + static_cast<std::uint64_t>(digit);
  }
  if (size > limits_.max_body - body_.size()) return refuse(413, "request too large");
  body_left_ = size;
  state_ = size == 0 ? State::kTrailer : State::kChunkData;
  return Step::kNeedMore;
}

HttpRequestReader::Step HttpRequestReader::read_trailer() {
  std::string_view line;
  bool too_long = false;
  while (take_line(kMaxTrailerLine, line, too_long)) {
    if (line.empty()) {
      state_ = State::kDone;
      return Step::kComplete;
    }
  }
  return too_long ? refuse(431, "trailer too large") : Step::kNeedMore;
}

void HttpRequestReader::compact() {
  // Used bytes are dropped once they are a good part of what is held.
  if (pos_ == 0 || (pos_ < buffer_.size() && pos_ < (64u << 10))) return;
  buffer_.erase(0, pos_);
  head_start_ = head_start_ > pos_ ? head_start_ - pos_ : 0;
  header_scan_ = header_scan_ > pos_ ? header_scan_ - pos_ : 0;
  pos_ = 0;
}

void HttpRequestReader::start_next() {
  state_ = State::kLine;
  method_.clear();
  target_.clear();
  head_ = Poco::Net::HTTPRequest();
  chunked_ = false;
  body_left_ = 0;
  body_.clear();
  body_.shrink_to_fit();
  refusal_status_ = 0;
  refusal_.clear();
  compact();
  head_start_ = pos_;
}

}  // namespace hooks
