#include "app/typos.hpp"

#include <algorithm>

#include "lib/core/base/suggest.hpp"
#include "lib/core/base/text.hpp"

namespace roofline::app {
namespace {

// The command being parsed: the last subcommand chosen, from the root down.
const CLI::App* innermost(const CLI::App& root) {
  const CLI::App* app = &root;
  for (;;) {
    const std::vector<CLI::App*> chosen = app->get_subcommands();
    if (chosen.empty()) return app;
    app = chosen.back();
  }
}

std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& name : opt->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : opt->get_snames()) names.push_back("-" + name);
  }
  return names;
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (!sub->get_name().empty()) names.push_back(sub->get_name());
  return names;
}

// The name the command is called by on the command line: "cuflash-roofline model".
std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* parent = app.get_parent(); parent != nullptr; parent = parent->get_parent())
    path = parent->get_name() + " " + path;
  return path;
}

}  // namespace

std::string command_line_hint(const CLI::App& root, const std::vector<std::string>& args) {
  const CLI::App& app = *innermost(root);
  std::vector<std::string> words = root.remaining(true);
  std::stable_sort(words.begin(), words.end(), [&](const std::string& a, const std::string& b) {
    return std::find(args.begin(), args.end(), a) < std::find(args.begin(), args.end(), b);
  });
  // A command was expected where none was chosen: the first word is the one meant as one.
  const std::vector<std::string> commands = command_names(app);
  const bool wants_command =
      !commands.empty() && app.get_subcommands().empty() && app.get_require_subcommand_min() > 0;
  for (const std::string& word : words) {
    if (word == "--") break;  // the rest is a program's (profile)
    if (word.rfind("--", 0) == 0 && word.size() > 3) {
      const std::string name = word.substr(0, word.find('='));
      std::vector<std::string> names = option_names(app);
      if (&app != &root) {
        const std::vector<std::string> global = option_names(root);
        names.insert(names.end(), global.begin(), global.end());
      }
      const std::string hint = did_you_mean(name, names);
      if (!hint.empty())
        return "unknown option " + one_line(name) + " for " + command_path(app) + ": " + hint;
    } else if (wants_command && word[0] != '-') {
      const std::string hint = did_you_mean(word, commands);
      return "unknown command " + quote_text(word) + " for " + command_path(app) + ": " +
             (hint.empty() ? "one of " + join(commands, ", ") : hint);
    }
  }
  return "";
}

}  // namespace roofline::app
