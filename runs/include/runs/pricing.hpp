// PriceTable — what model requests cost: USD per million tokens of each kind, by model
// name prefix (the longest matching prefix wins). A model no entry matches is priced at
// the table's highest rate of each kind — never at zero — and reported, so a new model
// cannot slip past a cost ceiling. The defaults are Anthropic's list prices (defaults());
// config policy.prices adds and replaces entries.
//
// Thread-safety: a plain value; const methods may run concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace runs {

// USD per million tokens.
struct ModelPrice {
  double input = 0;
  double output = 0;
  double cache_write_5m = 0;
  double cache_write_1h = 0;
  double cache_read = 0;
  friend bool operator==(const ModelPrice&, const ModelPrice&) = default;
};

// The tokens of one model request.
struct TokenUsage {
  std::uint64_t input = 0;
  std::uint64_t output = 0;
  std::uint64_t cache_write_5m = 0;
  std::uint64_t cache_write_1h = 0;
  std::uint64_t cache_read = 0;
  // All of them (to tell a complete usage from a partial one of the same request).
  std::uint64_t total() const {
    return input + output + cache_write_5m + cache_write_1h + cache_read;
  }
  friend bool operator==(const TokenUsage&, const TokenUsage&) = default;
};

// Prices by model name prefix.
class PriceTable {
 public:
  // Anthropic's list prices (Opus, Sonnet, Haiku).
  static PriceTable defaults();

  // Adds or replaces the price of models whose names start with prefix.
  void set(const std::string& prefix, const ModelPrice& price);
  const std::map<std::string, ModelPrice>& entries() const { return entries_; }

  // What usage of model costs; known is false when no entry matched (and the highest
  // rates were used).
  struct Priced {
    double usd = 0;
    bool known = true;
  };
  Priced price(std::string_view model, const TokenUsage& usage) const;
  // The highest rate of each kind in the table.
  ModelPrice highest() const;

 private:
  std::map<std::string, ModelPrice> entries_;
};

}  // namespace runs
