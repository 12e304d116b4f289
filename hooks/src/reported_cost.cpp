#include "hooks/reported_cost.hpp"

#include <cstdio>
#include <functional>
#include <map>
#include <sstream>
#include <vector>

#include <Poco/JSON/Handler.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include "fsnap/atomic_file.hpp"
#include "sandbox/errors.hpp"

namespace hooks {

using Poco::JSON::Object;

namespace {

// An OTLP/JSON logs export read as the parser goes, no document built (an export of a
// few calls is some 60 KB, nine records in ten of no interest here): each log record's
// attributes, by key, as text (strings, and numbers of any encoding: int64 is a JSON
// string in the protobuf mapping). Paths it follows: resourceLogs[].scopeLogs[].
// logRecords[].attributes[] = {"key": K, "value": {"<kind>Value": V}}.
class LogRecordReader : public Poco::JSON::Handler {
 public:
  using Attributes = std::map<std::string, std::string>;
  explicit LogRecordReader(std::function<void(const Attributes&)> on_record)
      : on_record_(std::move(on_record)) {}

  bool saw_resource_logs() const { return saw_resource_logs_; }

  void reset() override {
    stack_.clear();
    key_.clear();
    saw_resource_logs_ = false;
  }
  void startObject() override { open(true); }
  void endObject() override {
    Role role = stack_.empty() ? Role::kOther : stack_.back().role;
    if (role == Role::kAttribute && !attribute_key_.empty()) {
      for (const char* kind : {"stringValue", "intValue", "doubleValue", "boolValue"}) {
        auto it = kinds_.find(kind);
        if (it != kinds_.end()) {
          attributes_[attribute_key_] = it->second;
          break;
        }
      }
    } else if (role == Role::kRecord) {
      on_record_(attributes_);
    }
    close();
  }
  void startArray() override { open(false); }
  void endArray() override { close(); }
  void key(const std::string& k) override { key_ = k; }
  void null() override {}
  void value(int v) override { scalar(std::to_string(v)); }
  void value(unsigned v) override { scalar(std::to_string(v)); }
  void value(Poco::Int64 v) override { scalar(std::to_string(v)); }
  void value(Poco::UInt64 v) override { scalar(std::to_string(v)); }
  void value(const std::string& v) override { scalar(v); }
  void value(double d) override {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", d);
    scalar(text);
  }
  void value(bool b) override { scalar(b ? "true" : "false"); }

 private:
  // What an open object or array is to this reader.
  enum class Role { kOther, kRecord, kAttributes, kAttribute, kAttributeValue };
  struct Frame {
    bool object;
    Role role;
    std::string key;  // the key it is the value of (an array's element: the array's)
  };

  // The key the next container or scalar is the value of.
  std::string current_key() const {
    if (stack_.empty()) return "";
    return stack_.back().object ? key_ : stack_.back().key;
  }

  void open(bool object) {
    std::string key = current_key();
    Role parent = stack_.empty() ? Role::kOther : stack_.back().role;
    bool parent_object = !stack_.empty() && stack_.back().object;
    Role role = Role::kOther;
    if (object && !parent_object && key == "logRecords") {
      role = Role::kRecord;
      attributes_.clear();
    } else if (!object && parent == Role::kRecord && key == "attributes") {
      role = Role::kAttributes;
    } else if (object && parent == Role::kAttributes) {
      role = Role::kAttribute;
      attribute_key_.clear();
      kinds_.clear();
    } else if (object && parent == Role::kAttribute && key == "value") {
      role = Role::kAttributeValue;
    }
    if (!object && stack_.size() == 1 && key == "resourceLogs") saw_resource_logs_ = true;
    stack_.push_back(Frame{object, role, std::move(key)});
    key_.clear();
  }

  void close() {
    if (!stack_.empty()) stack_.pop_back();
    key_.clear();
  }

  void scalar(const std::string& text) {
    if (stack_.empty() || !stack_.back().object) return;
    if (stack_.back().role == Role::kAttribute && key_ == "key") {
      attribute_key_ = text;
    } else if (stack_.back().role == Role::kAttributeValue) {
      kinds_.emplace(key_, text);
    }
  }

  std::function<void(const Attributes&)> on_record_;
  std::vector<Frame> stack_;
  std::string key_;  // the last key read in the innermost object
  bool saw_resource_logs_ = false;
  Attributes attributes_;                     // of the record being read
  std::string attribute_key_;                 // of the attribute being read
  std::map<std::string, std::string> kinds_;  // its value, by kind
};

double number(const std::string& text) {
  try {
    std::size_t used = 0;
    double d = std::stod(text, &used);
    return used == text.size() && d >= 0 ? d : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

// An api_request event of an export: its identity (session, time, sequence) and cost.
struct ApiRequest {
  std::string id;
  double usd = 0;
};

// The api_request events of an OTLP/JSON logs export; kInvalidArgument if it is none.
std::vector<ApiRequest> api_requests(const std::string& body) {
  std::vector<ApiRequest> out;
  auto reader = new LogRecordReader([&](const LogRecordReader::Attributes& a) {
    auto attr = [&](const char* key) {
      auto it = a.find(key);
      return it == a.end() ? std::string() : it->second;
    };
    if (attr("event.name") != "api_request") return;
    out.push_back(ApiRequest{
        attr("session.id") + " " + attr("event.timestamp") + " " + attr("event.sequence"),
        number(attr("cost_usd"))});
  });
  Poco::JSON::Handler::Ptr handler(reader);
  try {
    Poco::JSON::Parser parser(handler);
    parser.parse(body);
  } catch (const Poco::Exception& e) {
    throw sandbox::Error(sandbox::ErrorCode::kInvalidArgument,
                         "not an OTLP/JSON logs export: " + e.displayText());
  } catch (const std::exception& e) {
    throw sandbox::Error(sandbox::ErrorCode::kInvalidArgument,
                         std::string("not an OTLP/JSON logs export: ") + e.what());
  }
  if (!reader->saw_resource_logs()) {
    throw sandbox::Error(sandbox::ErrorCode::kInvalidArgument,
                         "not an OTLP/JSON logs export: no resourceLogs");
  }
  return out;
}

}  // namespace

ReportedCost::ReportedCost(boost::filesystem::path file, double base_usd)
    : file_(std::move(file)), usd_(base_usd) {}

std::size_t ReportedCost::add_export(const std::string& body) {
  std::vector<ApiRequest> requests = api_requests(body);
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t added = 0;
  for (const ApiRequest& r : requests) {
    if (!seen_.insert(r.id).second) continue;
    usd_ += r.usd;
    ++requests_;
    ++added;
  }
  if (added > 0) {
    Object o(Poco::JSON_PRESERVE_KEY_ORDER);
    o.set("usd", usd_);
    o.set("requests", requests_);
    std::ostringstream text;
    o.stringify(text);
    text << '\n';
    fsnap::write_file_atomically(file_, text.str());
  }
  return added;
}

double ReportedCost::usd() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return usd_;
}

double read_reported_cost(const boost::filesystem::path& file) {
  try {
    std::optional<std::string> text = fsnap::read_small_file(file);
    if (!text) return 0;
    Poco::JSON::Parser parser;
    return parser.parse(*text).extract<Object::Ptr>()->optValue<double>("usd", 0);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace hooks
