#include "app/help.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "app/terminal_width.hpp"
#include "lib/core/base/text.hpp"

namespace roofline::app {
namespace {

// What a value holds, without the validators CLI11 appends to the type name after ':' ("INT:INT",
// "PATH|-:PATH"); IsMember's "{a,b}" becomes "a|b" where the option names no type of its own.
std::string value_label(const CLI::Option* opt) {
  const std::vector<std::string> parts = split(opt->get_type_name(), ':');
  std::string label = parts.empty() ? std::string() : parts.front();
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if ((label.empty() || label == "TEXT") && part.size() > 2 && part.front() == '{' &&
        part.back() == '}') {
      label = part.substr(1, part.size() - 2);
      for (char& c : label)
        if (c == ',') c = '|';
    }
  }
  return label;
}

// "[fwd,bwd]" (a vector's default as CLI11 writes it) as "fwd,bwd".
std::string plain_default(std::string text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']')
    text = text.substr(1, text.size() - 2);
  return text;
}

// The options of `options` that help shows (a hidden option has an empty group).
std::string names_of(const std::set<CLI::Option*>& options) {
  std::vector<std::string> names;
  for (const CLI::Option* other : options)
    if (!other->get_group().empty()) names.push_back(other->get_name());
  std::sort(names.begin(), names.end());
  return join(names, ", ");
}

constexpr std::size_t kNameColumn = 32;  // options and their values

// Descriptions wrap before this column: the terminal's width, from 60 to 100 columns (100
// without a terminal).
std::size_t help_width() {
  const std::size_t columns = terminal_columns();
  return columns == 0 ? 100 : std::clamp<std::size_t>(columns, 60, 100);
}

// `text` with newlines between words so that no line passes `width` columns (a longer word
// stands alone on its line).
std::string wrapped(const std::string& text, std::size_t width) {
  // A word wider than the line (a list of column keys) breaks after its commas.
  std::vector<std::string> words;
  for (const std::string& word : split(text, ' ')) {
    if (display_width(word) <= width || word.find(',') == std::string::npos) {
      words.push_back(word);
      continue;
    }
    std::string piece;
    for (const std::string& part : split(word, ',')) {
      const std::string next = piece.empty() ? part : piece + "," + part;
      if (!piece.empty() && display_width(next) + 1 > width) {
        words.push_back(piece + ",");
        piece = part;
      } else {
        piece = next;
      }
    }
    if (!piece.empty()) words.push_back(piece);
  }
  std::string out;
  std::size_t line = 0;
  for (const std::string& word : words) {
    if (word.empty()) continue;
    const std::size_t length = display_width(word);
    if (line > 0 && line + 1 + length > width) {
      out += '\n';
      line = 0;
    } else if (line > 0) {
      out += ' ';
      ++line;
    }
    out += word;
    line += length;
  }
  return out;
}

// `text` (a description or a footer, hand-broken for 100 columns) fitted to `width`: the lines
// of a paragraph joined and wrapped again; an indented line (an item of a list) wrapped under
// its own text, after its term when it has one ("  failed   the head row ..."); example
// command lines ("  cuflash-roofline ...") kept whole, to be copied.
std::string reflow(const std::string& text, std::size_t width) {
  std::string out, paragraph;
  auto flush = [&] {
    if (!paragraph.empty()) out += wrapped(paragraph, width) + "\n";
    paragraph.clear();
  };
  for (const std::string& line : split(text, '\n')) {
    if (line.empty()) {
      flush();
      out += "\n";
      continue;
    }
    if (line.front() != ' ') {
      paragraph += (paragraph.empty() ? "" : " ") + line;
      continue;
    }
    flush();
    if (display_width(line) <= width || line.rfind("  cuflash-roofline ", 0) == 0) {
      out += line + "\n";
      continue;
    }
    const std::size_t lead = line.find_first_not_of(' ');
    const std::size_t gap = line.find("  ", lead);
    const std::size_t body =
        gap == std::string::npos ? std::string::npos : line.find_first_not_of(' ', gap);
    const std::size_t indent = body != std::string::npos && body < width / 2 ? body : lead + 2;
    const std::size_t first = body != std::string::npos && body < width / 2 ? body : lead;
    std::string wrapped_text = wrapped(line.substr(first), width - indent);
    for (std::size_t at = 0; (at = wrapped_text.find('\n', at)) != std::string::npos; at += indent)
      wrapped_text.insert(++at, std::string(indent, ' '));
    out += line.substr(0, first) + wrapped_text + "\n";
  }
  flush();
  // split() gives a last empty piece for a text that ends in a newline: one newline, not two.
  if (!text.empty() && text.back() != '\n' && !out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class HelpFormatter : public CLI::Formatter {
 public:
  // CLI11 puts two blank lines between option groups: one is enough.
  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override {
    std::string text = CLI::Formatter::make_help(app, std::move(name), mode);
    for (std::size_t at; (at = text.find("\n\n\n")) != std::string::npos;) text.erase(at, 1);
    return text;
  }

  std::string make_description(const CLI::App* app) const override {
    return reflow(CLI::Formatter::make_description(app), help_width());
  }

  std::string make_footer(const CLI::App* app) const override {
    return reflow(CLI::Formatter::make_footer(app), help_width());
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    std::ostringstream out;
    CLI::detail::format_help(out, sub->get_name(),
                             wrapped(sub->get_description(), help_width() - kNameColumn),
                             column_width_);
    return out.str();
  }

  std::string make_option_opts(const CLI::Option* opt) const override {
    if (opt->get_type_size() == 0) return "";  // a flag
    const std::string label = value_label(opt);
    return label.empty() ? "" : " " + label;
  }

  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string text = opt->get_description();
    std::vector<std::string> notes;
    if (opt->get_required() && !opt->get_positional()) notes.push_back("required");
    if (const std::string value = plain_default(opt->get_default_str()); !value.empty())
      notes.push_back("default: " + value);
    if (const std::string names = names_of(opt->get_excludes()); !names.empty())
      notes.push_back("not with " + names);
    if (const std::string names = names_of(opt->get_needs()); !names.empty())
      notes.push_back("needs " + names);
    if (!notes.empty()) text += (text.empty() ? "(" : " (") + join(notes, "; ") + ")";
    return wrapped(text, help_width() - kNameColumn);
  }

  std::string make_option_usage(const CLI::Option* opt) const override {
    // Positionals, on the usage line: what they hold rather than their name.
    std::string text = value_label(opt);
    if (text.empty()) text = opt->get_name(true, false);
    if (opt->get_expected_max() >= CLI::detail::expected_max_vector_size &&
        text.find("...") == std::string::npos)
      text += "...";
    return opt->get_required() ? text : "[" + text + "]";
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> help_formatter() {
  auto formatter = std::make_shared<HelpFormatter>();
  formatter->column_width(kNameColumn);
  return formatter;
}

void set_command_help(CLI::App& sub, const std::vector<std::string>& examples,
                      const std::vector<ExitLine>& exit_codes, const std::string& notes) {
  std::ostringstream out;
  if (!notes.empty()) out << notes << (notes.back() == '\n' ? "" : "\n") << "\n";
  if (!examples.empty()) {
    out << "Examples:\n";
    // An example wider than the help goes on in the next line, after a shell line continuation.
    for (const std::string& example : examples) {
      std::string line = "  cuflash-roofline";
      for (const std::string& word : split(example, ' ')) {
        if (line.size() + 1 + word.size() + 2 > help_width() && line.size() > 6) {
          out << line << " \\\n";
          line = "      ";
        } else {
          line += " ";
        }
        line += word;
      }
      out << line << "\n";
    }
    out << "\n";
  }
  out << "Exit codes:\n";
  std::size_t width = 0;
  for (const ExitLine& line : exit_codes) width = std::max(width, line.first.size());
  // Each meaning wrapped to the terminal, its continuation lines under its first.
  const std::string indent(2 + width + 2, ' ');
  for (const ExitLine& line : exit_codes) {
    std::string text = wrapped(line.second, help_width() - indent.size());
    for (std::size_t at = 0; (at = text.find('\n', at)) != std::string::npos; at += indent.size())
      text.insert(++at, indent);
    out << "  " << pad(line.first, width, false) << "  " << text << "\n";
  }
  out << "\n"
      << wrapped(
             "Every command also takes -q (errors only), -v (more log; -vv trace), --spec "
             "FILE and --specs-dir DIR, before or after its name.",
             help_width());
  sub.footer(out.str());
}

}  // namespace roofline::app
