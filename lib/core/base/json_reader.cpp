#include "lib/core/base/json_reader.hpp"

#include <sys/stat.h>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/input.hpp"
#include "lib/core/base/text.hpp"

namespace roofline {
namespace {

using nlohmann::json;

// The checks of integer_value() and number_value() without their messages: reading a report of
// 100,000 rows calls them millions of times, and the key path and message are needed only for
// an error.
bool integer_ok(const json& value, std::int64_t min, std::int64_t max) {
  if (value.is_number_unsigned()) {
    const auto number = value.get<std::uint64_t>();
    return number <= static_cast<std::uint64_t>(max) &&
           !(min > 0 && number < static_cast<std::uint64_t>(min));
  }
  if (value.is_number_integer()) {
    const auto number = value.get<std::int64_t>();
    return number >= min && number <= max;
  }
  return false;
}
bool number_ok(const json& value, const Bound& bound) {
  if (!value.is_number()) return false;
  const double number = value.get<double>();
  return std::isfinite(number) && number >= bound.min && number <= bound.max;
}

std::string number_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

// Builds the document through nlohmann's SAX interface, which lets the parse stop with the key
// path where something is wrong: too deep, a duplicate key, a number beyond a double.
class DomBuilder {
 public:
  using ElementSink = std::function<void(std::size_t, json&&)>;

  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  json root;
  std::string error_path;
  std::string error;  // empty while the parse goes well

  // Elements of the root object's array member `key` go to `element` once read, not into root;
  // their member `skip` (if not empty) is checked like the rest but kept as null.
  void stream(std::string_view key, const ElementSink* element, std::string_view skip) {
    stream_key_ = key;
    element_ = element;
    skip_ = skip;
  }

  bool null() { return skipping() ? skip_scalar() : add(json(nullptr)); }
  bool boolean(bool value) { return skipping() ? skip_scalar() : add(json(value)); }
  bool number_integer(number_integer_t value) {
    return skipping() ? skip_scalar() : add(json(value));
  }
  bool number_unsigned(number_unsigned_t value) {
    return skipping() ? skip_scalar() : add(json(value));
  }
  bool number_float(number_float_t value, const string_t& /*text*/) {
    return skipping() ? skip_scalar() : add(json(value));
  }
  bool string(string_t& value) { return skipping() ? skip_scalar() : add(json(std::move(value))); }
  bool binary(binary_t& value) { return skipping() ? skip_scalar() : add(json(value)); }
  bool start_object(std::size_t /*size*/) {
    return skipping() ? open_skipped() : open(json::object());
  }
  bool start_array(std::size_t /*size*/) {
    return skipping() ? open_skipped() : open(json::array());
  }
  bool end_object() { return skipping_ > 0 ? close_skipped() : close(); }
  bool end_array() { return skipping_ > 0 ? close_skipped() : close(); }
  bool key(string_t& name) {
    if (!skipped_keys_.empty()) {  // inside a skipped member: only duplicates matter
      // A hash set: a skipped member of 80,000 keys took 13 s to check with a linear search.
      if (!skipped_keys_.back().insert(std::move(name)).second) return stop("duplicate key");
      return true;
    }
    Level& level = levels_.back();
    if (level.value->contains(name)) {
      level.key = name;
      return stop("duplicate key");
    }
    // A streamed element's skipped member: null in its place (a second one is a duplicate).
    if (!skip_.empty() && levels_.size() == 3 && levels_[1].streamed && name == skip_) {
      (*level.value)[name] = nullptr;
      skip_next_ = true;
    }
    level.key = std::move(name);
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& token,
                   const nlohmann::detail::exception& exception) {
    if (exception.id == 406)  // out_of_range.406: a number beyond the range of a double
      return stop("number " + quote_text(token) + " is out of the range of a double");
    error_path.clear();
    error = "not valid JSON (" + one_line(first_line(exception.what())) + ")";
    return false;
  }

 private:
  struct Level {
    json* value;
    std::string key;  // the member being read, for objects
    // For the streamed array: elements handed on so far (the array holds at most the one
    // being read).
    std::size_t handed_on = 0;
    bool streamed = false;
  };

  // Where the next value goes, as a key path.
  std::string path() const {
    std::string out;
    for (std::size_t i = 0; i < levels_.size(); ++i) {
      const Level& level = levels_[i];
      // An outer array's last element is the container still being read; the innermost
      // array's next element is the value being read.
      const std::size_t size = level.handed_on + level.value->size();
      out = level.value->is_object() ? key_path(out, level.key)
                                     : index_path(out, i + 1 < levels_.size() ? size - 1 : size);
    }
    return out;
  }
  bool stop(std::string what) {
    error_path = path();
    error = std::move(what);
    return false;
  }
  json* place(json value) {
    if (levels_.empty()) {
      root = std::move(value);
      return &root;
    }
    Level& level = levels_.back();
    if (level.value->is_array()) {
      level.value->push_back(std::move(value));
      return &level.value->back();
    }
    json& slot = (*level.value)[level.key];
    slot = std::move(value);
    return &slot;
  }
  bool add(json value) {
    place(std::move(value));
    return levels_.empty() || !levels_.back().streamed || hand_on();
  }
  bool open(json container) {
    if (levels_.size() >= kMaxJsonDepth)
      return stop("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    const bool streamed = element_ != nullptr && levels_.size() == 1 && container.is_array() &&
                          levels_.back().value->is_object() && levels_.back().key == stream_key_;
    levels_.push_back({place(std::move(container)), {}, 0, streamed});
    return true;
  }
  bool close() {
    levels_.pop_back();
    return levels_.empty() || !levels_.back().streamed || hand_on();
  }
  // The streamed array's element just completed goes to the sink and leaves the array.
  bool hand_on() {
    Level& level = levels_.back();
    (*element_)(level.handed_on, std::move(level.value->back()));
    level.value->erase(level.value->end() - 1);
    ++level.handed_on;
    return true;
  }

  // The skipped member (or a value inside it) comes next: a scalar is dropped, a container
  // counted in and out, with the nesting limit of the rest.
  bool skipping() const { return skip_next_ || skipping_ > 0; }
  bool skip_scalar() {
    skip_next_ = false;
    return true;
  }
  bool open_skipped() {
    skip_next_ = false;
    if (levels_.size() + skipping_ >= kMaxJsonDepth)
      return stop("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    ++skipping_;
    skipped_keys_.emplace_back();
    return true;
  }
  bool close_skipped() {
    --skipping_;
    skipped_keys_.pop_back();
    return true;
  }

  std::vector<Level> levels_;
  std::string_view stream_key_;
  const ElementSink* element_ = nullptr;
  std::string_view skip_;
  bool skip_next_ = false;
  std::size_t skipping_ = 0;
  std::vector<std::unordered_set<std::string>> skipped_keys_;  // one per open skipped container
};

}  // namespace

// Frees a tree leaf by leaf, allocating nothing: nlohmann's own teardown of a container first
// copies its children into a stack (an allocation of the container's size), which out of memory
// throws inside a destructor and aborts the process. Recursion is bounded by kMaxJsonDepth.
void teardown(json& value) noexcept {
  if (value.is_array()) {
    auto& array = value.get_ref<json::array_t&>();
    while (!array.empty()) {
      teardown(array.back());
      array.pop_back();
    }
  } else if (value.is_object()) {
    auto& object = value.get_ref<json::object_t&>();
    while (!object.empty()) {
      teardown(object.begin()->second);
      object.erase(object.begin());
    }
  }
}

// Runs the SAX parse of `text` into `builder`. Out of memory (a bad_alloc from the parse), the
// half-built tree is freed leaf by leaf (teardown), with a small reserve given back for the
// error's own allocations, and the failure is an InputError naming the file and its size (it
// aborted the process, exit 134, before).
bool guarded_parse(std::string_view text, const std::string& origin, DomBuilder& builder) {
  constexpr std::size_t kReserveBytes = std::size_t{8} << 20;
  std::unique_ptr<char[]> reserve(new (std::nothrow) char[kReserveBytes]);
  try {
    return json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const std::bad_alloc&) {
    teardown(builder.root);
    reserve.reset();
    throw InputError("not enough memory to read " + origin + ": " +
                     std::to_string((text.size() + (std::size_t{1} << 20) - 1) >> 20) +
                     " MiB of JSON (reading takes several times its size: docs/exit-codes.md, "
                     "Input limits)");
  }
}

json parse_json_text(std::string_view text, const std::string& origin) {
  DomBuilder builder;
  const bool ok = guarded_parse(text, origin, builder);
  if (!ok || !builder.error.empty()) {
    if (builder.error.empty()) builder.error = "not valid JSON";
    JsonReader(origin).fail(builder.error_path, builder.error);
  }
  return std::move(builder.root);
}

json parse_json_streaming(std::string_view text, const std::string& origin, std::string_view key,
                          const std::function<void(std::size_t, json&&)>& element,
                          std::string_view skip) {
  DomBuilder builder;
  builder.stream(key, &element, skip);
  const bool ok = guarded_parse(text, origin, builder);
  if (!ok || !builder.error.empty()) {
    if (builder.error.empty()) builder.error = "not valid JSON";
    JsonReader(origin).fail(builder.error_path, builder.error);
  }
  return std::move(builder.root);
}

json read_json_file(const std::filesystem::path& path) {
  return parse_json_text(read_json_input(path), path.string());
}

std::string read_json_input(const std::filesystem::path& path) {
  const std::string name = path.string();
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw InputError("cannot read " + name + ": " + std::strerror(errno));
  if (S_ISDIR(info.st_mode)) throw InputError("cannot read " + name + ": is a directory");
  if (!S_ISREG(info.st_mode))
    throw InputError("cannot read " + name +
                     ": not a regular file (FIFOs and devices are refused)");
  if (static_cast<std::uintmax_t>(info.st_size) > kMaxInputFileBytes)
    throw InputError("cannot read " + name + ": larger than the limit of " +
                     std::to_string(kMaxInputFileBytes >> 20) + " MiB");
  return read_text_file(path);
}

std::string key_path(std::string_view parent, std::string_view key) {
  const std::string name =
      one_line(key.size() > 80 ? key.substr(0, 80) : key) + (key.size() > 80 ? "..." : "");
  return parent.empty() ? name : std::string(parent) + "." + name;
}

std::string index_path(std::string_view parent, std::size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

void JsonReader::fail(std::string_view path, std::string_view what) const {
  std::string message = origin_;
  if (!path.empty()) message += ": " + std::string(path);
  message += ": " + std::string(what);
  throw InputError(one_line(message));
}

void JsonReader::require_object(const json& value, std::string_view path) const {
  if (!value.is_object()) fail(path.empty() ? "(top level)" : path, "must be an object");
}

void JsonReader::require_array(const json& value, std::string_view path) const {
  if (!value.is_array()) fail(path, "must be an array");
}

void JsonReader::only_keys(const json& value, std::string_view path,
                           std::initializer_list<const char*> allowed) const {
  require_object(value, path);
  for (const auto& item : value.items()) {
    const std::string& key = item.key();
    const bool known =
        std::any_of(allowed.begin(), allowed.end(), [&](const char* name) { return key == name; });
    if (!known) fail(key_path(path, key), "unknown key");
  }
}

const json& JsonReader::member(const json& object, std::string_view path, const char* key) const {
  const json* found = optional_member(object, path, key);
  if (found == nullptr) fail(key_path(path, key), "missing");
  return *found;
}

const json* JsonReader::optional_member(const json& object, std::string_view path,
                                        const char* key) const {
  require_object(object, path);
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string JsonReader::string(const json& object, std::string_view path, const char* key,
                               bool allow_empty) const {
  const json& value = member(object, path, key);
  if (!value.is_string()) fail(key_path(path, key), "must be a string");
  std::string text = value.get<std::string>();
  if (!allow_empty && text.empty()) fail(key_path(path, key), "must not be empty");
  return text;
}

std::vector<std::string> JsonReader::strings(const json& object, std::string_view path,
                                             const char* key) const {
  const json& value = member(object, path, key);
  if (!value.is_array()) fail(key_path(path, key), "must be an array of strings");
  std::vector<std::string> out;
  for (const json& item : value) {
    if (!item.is_string() || item.get<std::string>().empty())
      fail(key_path(path, key), "must be an array of non-empty strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

bool JsonReader::boolean(const json& object, std::string_view path, const char* key) const {
  const json& value = member(object, path, key);
  if (!value.is_boolean()) fail(key_path(path, key), "must be true or false");
  return value.get<bool>();
}

std::int64_t JsonReader::integer(const json& object, std::string_view path, const char* key,
                                 std::int64_t min, std::int64_t max) const {
  const json& value = member(object, path, key);
  if (integer_ok(value, min, max)) return value.get<std::int64_t>();
  return integer_value(value, key_path(path, key), min, max);
}

std::int64_t JsonReader::integer_value(const json& value, std::string_view path, std::int64_t min,
                                       std::int64_t max) const {
  if (integer_ok(value, min, max)) return value.get<std::int64_t>();
  const std::string range =
      "must be an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (value.is_number_unsigned()) {
    const auto number = value.get<std::uint64_t>();
    if (number > static_cast<std::uint64_t>(max) ||
        (min > 0 && number < static_cast<std::uint64_t>(min)))
      fail(path, range + " (got " + std::to_string(number) + ")");
    return static_cast<std::int64_t>(number);
  }
  if (value.is_number_integer()) {
    const auto number = value.get<std::int64_t>();
    if (number < min || number > max) fail(path, range + " (got " + std::to_string(number) + ")");
    return number;
  }
  fail(path, range);
}

double JsonReader::number(const json& object, std::string_view path, const char* key,
                          const Bound& bound) const {
  const json& value = member(object, path, key);
  if (number_ok(value, bound)) return value.get<double>();
  return number_value(value, key_path(path, key), bound);
}

double JsonReader::number_or_nan(const json& object, std::string_view path, const char* key,
                                 const Bound& bound) const {
  const json& value = member(object, path, key);
  if (value.is_null()) return std::nan("");
  if (number_ok(value, bound)) return value.get<double>();
  return number_value(value, key_path(path, key), bound);
}

double JsonReader::number_value(const json& value, std::string_view path,
                                const Bound& bound) const {
  if (number_ok(value, bound)) return value.get<double>();
  if (!value.is_number()) fail(path, "must be a number");
  const double number = value.get<double>();
  const std::string unit = *bound.unit != '\0' ? std::string(" ") + bound.unit : "";
  const std::string got = number_text(number);
  if (!std::isfinite(number)) fail(path, "must be finite");
  if (bound.min > 0 && !(number > 0)) fail(path, "must be positive (got " + got + ")");
  if (bound.min == 0 && number < 0) fail(path, "must not be negative (got " + got + ")");
  if (number < bound.min)
    fail(path, "must be at least " + number_text(bound.min) + unit + ", the bound for " +
                   bound.name + " (got " + got + ")");
  if (number > bound.max)
    fail(path, "must be at most " + number_text(bound.max) + unit + ", the bound for " +
                   bound.name + " (got " + got + ")");
  return number;
}

}  // namespace roofline
