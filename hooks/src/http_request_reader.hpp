// HttpRequestReader — reads one HTTP/1.1 request at a time from the bytes a connection
// delivers, whenever they come, so that no thread waits on a slow sender. It stops
// after the request line (its target decides whether anything else is read) and after
// the headers (whether the body is wanted), and holds at most the limits it is given:
// a line, a head and a body too long are refused with their status. Private to hooks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <Poco/Net/HTTPRequest.h>

namespace hooks {

// How much one request may hold.
struct HttpRequestLimits {
  std::size_t max_request_line = 1024;  // method, target and version
  std::size_t max_head = 64 << 10;      // the request line and the headers
  std::size_t max_body = 64 << 20;      // after chunked decoding, if any
};

// One request read from a connection's bytes.
class HttpRequestReader {
 public:
  // What next() found.
  enum class Step {
    kNeedMore,     // all the bytes given are used: give more
    kRequestLine,  // method() and target() are known; next() goes on to the headers
    kHead,         // head() is known; next() goes on to the body
    kComplete,     // body() is the whole body
    kRefused,      // malformed or too large: refusal_status() and refusal() say why
  };

  explicit HttpRequestReader(HttpRequestLimits limits) : limits_(limits) {}

  // Bytes received from the connection.
  void append(std::string_view bytes) { buffer_.append(bytes); }
  // Reads as far as the bytes given allow, stopping at each Step.
  Step next();
  // Prepares for the next request on the same connection; bytes already received
  // after this request's end are its beginning.
  void start_next();

  // Bytes received and not yet used.
  std::size_t unread() const { return buffer_.size() - pos_; }

  const std::string& method() const { return method_; }
  const std::string& target() const { return target_; }
  const Poco::Net::HTTPRequest& head() const { return head_; }
  // The body's size as announced by Content-Length; -1 if chunked.
  std::int64_t announced_body() const { return chunked_ ? -1 : body_left_ + body_.size(); }
  std::string& body() { return body_; }
  int refusal_status() const { return refusal_status_; }
  const std::string& refusal() const { return refusal_; }

 private:
  enum class State { kLine, kHeaders, kBody, kChunkSize, kChunkData, kChunkEnd, kTrailer, kDone };

  Step refuse(int status, std::string why);
  Step read_line();
  Step read_headers();
  Step read_body();
  Step read_chunk_size();
  Step read_trailer();
  // The next line (up to CRLF, without it) if it is complete within limit bytes;
  // sets too_long if it cannot be.
  bool take_line(std::size_t limit, std::string_view& line, bool& too_long);
  void compact();

  HttpRequestLimits limits_;
  State state_ = State::kLine;
  std::string buffer_;
  std::size_t pos_ = 0;          // bytes of buffer_ used
  std::size_t head_start_ = 0;   // where this request's head begins in buffer_
  std::size_t header_scan_ = 0;  // where the search for the headers' end resumes
  std::string method_;
  std::string target_;
  Poco::Net::HTTPRequest head_;
  bool chunked_ = false;
  std::uint64_t body_left_ = 0;  // of Content-Length, or of the current chunk
  std::string body_;
  int refusal_status_ = 0;
  std::string refusal_;
};

}  // namespace hooks
