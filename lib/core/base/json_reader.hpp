// The one JSON reading layer for spec files and reports.
//
// Parsing: input files must be regular files of at most kMaxInputFileBytes; nesting deeper than
// kMaxJsonDepth, duplicate keys and numbers that overflow a double are errors at their key path.
// Access: JsonReader reads typed values with range checks before any narrowing and plausibility
// bounds for physical quantities. Every error is an InputError of one line:
// "<origin>: <key path>: <what is wrong>", with echoed text escaped (text.hpp's quote_text()).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lib/core/base/limits.hpp"

namespace roofline {

// Parses `text`; errors name `origin` (the file) and the key path.
nlohmann::json parse_json_text(std::string_view text, const std::string& origin);
// parse_json_text, except that each element of the root object's array member `key` goes to
// `element` (its index, its value) as soon as it is read and is not kept: the document returned
// holds that array empty, and memory holds one element's tree at a time. An exception thrown by
// `element` ends the parse and propagates. Each element's member `skip` (when not empty) is
// checked like everything else (nesting, duplicate keys, numbers) but handed on as null: a
// report's `analysis` blocks, half of each row, are never built.
nlohmann::json parse_json_streaming(
    std::string_view text, const std::string& origin, std::string_view key,
    const std::function<void(std::size_t, nlohmann::json&&)>& element, std::string_view skip = {});
// Reads a regular file of at most kMaxInputFileBytes and parses it. FIFOs, devices and
// directories are refused (a FIFO would block for ever).
nlohmann::json read_json_file(const std::filesystem::path& path);
// The text of such a file, unparsed.
std::string read_json_input(const std::filesystem::path& path);

// "a.b" (or "b" at the top), with `key` escaped when it holds control characters.
std::string key_path(std::string_view parent, std::string_view key);
// "a[3]"
std::string index_path(std::string_view parent, std::size_t index);

class JsonReader {
 public:
  explicit JsonReader(std::string origin) : origin_(std::move(origin)) {}
  const std::string& origin() const { return origin_; }

  // Throws InputError("<origin>: <path>: <what>"); `path` may be empty (the whole document).
  [[noreturn]] void fail(std::string_view path, std::string_view what) const;

  // `value` must be an object whose keys are all in `allowed`.
  void only_keys(const nlohmann::json& value, std::string_view path,
                 std::initializer_list<const char*> allowed) const;
  void require_object(const nlohmann::json& value, std::string_view path) const;
  void require_array(const nlohmann::json& value, std::string_view path) const;

  // `object[key]`; `object` must be an object (at `path`) and hold `key`.
  const nlohmann::json& member(const nlohmann::json& object, std::string_view path,
                               const char* key) const;
  const nlohmann::json* optional_member(const nlohmann::json& object, std::string_view path,
                                        const char* key) const;

  std::string string(const nlohmann::json& object, std::string_view path, const char* key,
                     bool allow_empty = false) const;
  std::vector<std::string> strings(const nlohmann::json& object, std::string_view path,
                                   const char* key) const;
  bool boolean(const nlohmann::json& object, std::string_view path, const char* key) const;
  // An integer in [min, max], checked before narrowing (so 2^32 + 1 is never read as 1).
  std::int64_t integer(const nlohmann::json& object, std::string_view path, const char* key,
                       std::int64_t min, std::int64_t max) const;
  // `value` itself (not a member) as an integer in [min, max].
  std::int64_t integer_value(const nlohmann::json& value, std::string_view path, std::int64_t min,
                             std::int64_t max) const;
  // A finite number within `bound`.
  double number(const nlohmann::json& object, std::string_view path, const char* key,
                const Bound& bound) const;
  // The same, or NaN for null (reports write absent numbers as null).
  double number_or_nan(const nlohmann::json& object, std::string_view path, const char* key,
                       const Bound& bound) const;
  // `value` itself (not a member) as a finite number within `bound`.
  double number_value(const nlohmann::json& value, std::string_view path, const Bound& bound) const;

 private:
  std::string origin_;
};

}  // namespace roofline
