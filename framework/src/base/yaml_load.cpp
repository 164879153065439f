#include "base/yaml_load.hpp"

#include <yaml-cpp/eventhandler.h>

#include <fstream>
#include <map>
#include <optional>
#include <sstream>

namespace dptune::host {
namespace {

/// What the parser got stuck on: yaml-cpp 0.7 leaves such a token unconsumed at the top level.
std::string stuck_message(const std::string& text, const YAML::Mark& mark) {
  // Marks count characters after a UTF-8 byte order mark (other encodings: no character named).
  const std::size_t bom = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  const auto pos = bom + static_cast<std::size_t>(mark.pos);
  const char c = pos < text.size() ? text[pos] : '\0';
  if (c == ',')
    return "unexpected ',' outside a flow collection (quote a value that holds a comma)";
  if (c > ' ' && c < 127) return std::string("unexpected '") + c + "' where a value should start";
  return "unexpected token where a value should start";
}

/// The checking pass over yaml-cpp's events (see yaml_load.hpp).  Sizes count nodes as a
/// recursive walk of the built tree visits them, aliases expanded.
class Guard final : public YAML::EventHandler {
 public:
  explicit Guard(const std::string& text) : text_(text) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    // A document that starts where the previous one did consumed nothing: yaml-cpp would return
    // the same empty document forever.
    if (last_start_ && last_start_->pos == mark.pos)
      throw YAML::ParserException(mark, stuck_message(text_, mark));
    last_start_ = mark;
    anchors_.clear();  // anchors are scoped to their document
  }
  void OnDocumentEnd() override {}

  void OnAnchor(const YAML::Mark& /*mark*/, const std::string& name) override {
    pending_name_ = name;
  }
  void OnNull(const YAML::Mark& /*mark*/, YAML::anchor_t anchor) override { leaf(anchor); }
  void OnScalar(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t anchor,
                const std::string& /*value*/) override {
    leaf(anchor);
  }
  void OnSequenceStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/,
                       YAML::anchor_t anchor, YAML::EmitterStyle::value /*style*/) override {
    open(anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value /*style*/) override {
    open(anchor);
  }
  void OnMapEnd() override { close(); }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto found = anchors_.find(anchor);
    if (found == anchors_.end()) return;  // yaml-cpp itself rejects an undefined alias
    const Anchor& a = found->second;
    if (!a.size)
      throw YAML::ParserException(
          mark, "alias '*" + a.name + "' refers to a node that contains it (a cycle)");
    aliased_ += *a.size;
    if (aliased_ > kMaxAliasedNodes)
      throw YAML::ParserException(
          mark, "aliases repeat more than " + std::to_string(kMaxAliasedNodes) +
                    " nodes in total (an alias bomb?); write the values out instead");
    add(*a.size);
  }

 private:
  struct Anchor {
    std::string name;
    std::optional<std::size_t> size;  // unset while the anchored node is still open
  };
  struct Frame {
    YAML::anchor_t anchor;
    std::size_t size;
  };

  void name_anchor(YAML::anchor_t anchor) {
    if (anchor == YAML::NullAnchor) return;
    anchors_[anchor] = Anchor{pending_name_, std::nullopt};
    pending_name_.clear();
  }
  void add(std::size_t size) {
    if (!open_.empty()) open_.back().size += size;
  }
  void leaf(YAML::anchor_t anchor) {
    name_anchor(anchor);
    if (anchor != YAML::NullAnchor) anchors_[anchor].size = 1;
    add(1);
  }
  void open(YAML::anchor_t anchor) {
    name_anchor(anchor);
    open_.push_back(Frame{anchor, 1});
  }
  void close() {
    const Frame frame = open_.back();
    open_.pop_back();
    if (frame.anchor != YAML::NullAnchor) anchors_[frame.anchor].size = frame.size;
    add(frame.size);
  }

  const std::string& text_;
  std::optional<YAML::Mark> last_start_;
  std::map<YAML::anchor_t, Anchor> anchors_;
  std::string pending_name_;
  std::vector<Frame> open_;
  std::size_t aliased_ = 0;
};

/// Runs the checking pass over every document; afterwards yaml-cpp's own loaders, which repeat
/// the same deterministic parse, are known to terminate.
void check(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  Guard guard(text);
  while (parser.HandleNextDocument(guard)) {
  }
}

}  // namespace

std::vector<YAML::Node> load_yaml_documents(const std::string& text) {
  check(text);
  return YAML::LoadAll(text);
}

YAML::Node load_yaml_document(const std::string& text) {
  check(text);
  return YAML::Load(text);
}

YAML::Node load_yaml_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw YAML::BadFile(file.string());
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw YAML::BadFile(file.string());
  return load_yaml_document(text.str());
}

}  // namespace dptune::host
