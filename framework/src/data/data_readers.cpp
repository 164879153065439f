#include "dptune/host/data_readers.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>

#include <zlib.h>

#include "dptune/host/for_slices.hpp"
#include "dptune/masked_label.hpp"

namespace dptune::host {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail_at(const fs::path& file, std::size_t line, const std::string& message) {
  throw DataFileError(file.string() + ":" + std::to_string(line) + ": " + message);
}
[[noreturn]] void fail_file(const fs::path& file, const std::string& message) {
  throw DataFileError(file.string() + ": " + message);
}

std::ifstream open_text(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) fail_file(file, "no such file");
  if (fs::is_directory(file, ec)) fail_file(file, "is a folder, expected a file");
  std::ifstream in(file, std::ios::binary);
  if (!in) fail_file(file, "cannot open for reading");
  return in;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

/// A finite decimal number (optional sign, exponent); nothing else, no trailing characters.
std::optional<double> parse_number(std::string_view s) {
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

/// One CSV record split into fields, RFC 4180 quoting: a field may be enclosed in double quotes,
/// and then holds the delimiter, line breaks and "" for a literal quote.  Space around a field
/// (or around its quotes) is dropped; space inside quotes is kept.
struct CsvRecord {
  enum class Status { Complete, OpenQuote, Malformed };
  Status status = Status::Complete;
  std::vector<std::string> fields;
  std::string problem;  // for Malformed
};

CsvRecord split_record(std::string_view text, char delimiter) {
  CsvRecord record;
  std::size_t i = 0;
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (true) {
    while (i < text.size() && is_space(text[i]) && text[i] != delimiter) ++i;
    std::string field;
    if (i < text.size() && text[i] == '"') {
      const std::size_t opened = record.fields.size();
      ++i;
      bool closed = false;
      while (i < text.size()) {
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field.push_back('"');
            i += 2;
            continue;
          }
          closed = true;
          ++i;
          break;
        }
        field.push_back(text[i++]);
      }
      if (!closed) {
        record.status = CsvRecord::Status::OpenQuote;
        return record;
      }
      while (i < text.size() && is_space(text[i]) && text[i] != delimiter) ++i;
      if (i < text.size() && text[i] != delimiter) {
        record.status = CsvRecord::Status::Malformed;
        record.problem = "column " + std::to_string(opened) +
                         ": unexpected text after a closing quote (write \"\" for a quote "
                         "inside a quoted field)";
        return record;
      }
    } else {
      const std::size_t start = i;
      while (i < text.size() && text[i] != delimiter) {
        if (text[i] == '"') {
          record.status = CsvRecord::Status::Malformed;
          record.problem = "column " + std::to_string(record.fields.size()) +
                           ": a quote inside an unquoted field (quote the whole field and "
                           "write \"\" for the quote)";
          return record;
        }
        ++i;
      }
      field = std::string(trim(text.substr(start, i - start)));
    }
    record.fields.push_back(std::move(field));
    if (i >= text.size()) return record;
    ++i;  // the delimiter
  }
}

std::string shown(std::string_view field) {
  constexpr std::size_t kMax = 40;
  if (field.size() <= kMax) return "'" + std::string(field) + "'";
  return "'" + std::string(field.substr(0, kMax)) + "...'";
}

/// Maps label texts to classes 0..C-1: numeric order when all are numbers, else text order.
/// Returns the class names in class order.
std::vector<std::string> map_classes(const std::vector<std::string>& texts,
                                     std::vector<double>& labels) {
  bool numeric = true;
  std::vector<double> values(texts.size());
  for (std::size_t i = 0; i < texts.size() && numeric; ++i) {
    auto v = parse_number(texts[i]);
    if (!v)
      numeric = false;
    else
      values[i] = *v;
  }
  labels.resize(texts.size());
  std::vector<std::string> names;
  if (numeric) {
    std::map<double, std::size_t> index;
    for (double v : values) index.emplace(v, 0);
    std::size_t c = 0;
    for (auto& [v, i] : index) {
      i = c++;
      std::ostringstream s;
      s << v;
      names.push_back(s.str());
    }
    for (std::size_t i = 0; i < values.size(); ++i)
      labels[i] = static_cast<double>(index.at(values[i]));
  } else {
    std::map<std::string, std::size_t> index;
    for (const auto& t : texts) index.emplace(t, 0);
    std::size_t c = 0;
    for (auto& [t, i] : index) {
      i = c++;
      names.push_back(t);
    }
    for (std::size_t i = 0; i < texts.size(); ++i)
      labels[i] = static_cast<double>(index.at(texts[i]));
  }
  return names;
}

/// Maps label texts to the declared classes (DeclaredClasses): class k is the label that equals
/// names[k], compared as numbers when every declared name is a number (so "1", "1.0" and "+1" are
/// one label) and as text otherwise.  A label outside the set is masked, or with refuse_unknown an
/// error naming its line.  Nothing here depends on any other row than the one mapped.
void declared_classes(const std::vector<std::string>& texts, const std::vector<std::size_t>& lines,
                      const DeclaredClasses& declared, const fs::path& file,
                      std::vector<double>& labels) {
  std::vector<double> numbers;
  for (const auto& name : declared.names)
    if (const auto v = parse_number(name)) numbers.push_back(*v);
  const bool numeric = numbers.size() == declared.names.size();
  labels.resize(texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::size_t found = declared.names.size();
    if (numeric) {
      if (const auto v = parse_number(texts[i]))
        found = static_cast<std::size_t>(std::find(numbers.begin(), numbers.end(), *v) -
                                         numbers.begin());
    } else {
      found = static_cast<std::size_t>(
          std::find(declared.names.begin(), declared.names.end(), texts[i]) -
          declared.names.begin());
    }
    if (found < declared.names.size()) {
      labels[i] = static_cast<double>(found);
      continue;
    }
    if (declared.refuse_unknown)
      fail_at(file, lines[i],
              "label " + shown(texts[i]) +
                  " is not one of the declared classes (data.params.classes) and "
                  "unknown_labels is refuse");
    labels[i] = dptune::kMaskedLabel;
  }
}

std::string join_names(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 8;
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < kShown; ++i) text += (i ? ", " : "") + names[i];
  if (names.size() > kShown) text += ", ... (" + std::to_string(names.size()) + " columns)";
  return text;
}

}  // namespace

// ---- CSV ----------------------------------------------------------------------------------------

namespace {

/// The next record of a delimited text file into `record` (false at the end).  Blank lines and
/// '#' comments are skipped; a quoted field may span lines: the record goes on until its quotes
/// are balanced, and errors name the line the record starts on (`record_line`).
bool next_record(std::istream& in, const fs::path& file, char delimiter, std::size_t& line_no,
                 std::size_t& record_line, CsvRecord& record) {
  std::string line, record_text;
  while (std::getline(in, line)) {
    ++line_no;
    std::string_view text = trim(line);
    if (line_no == 1 && text.substr(0, 3) == "\xEF\xBB\xBF")
      text = trim(text.substr(3));  // UTF-8 BOM
    if (text.empty() || text.front() == '#') continue;
    record_line = line_no;
    record_text.assign(text);
    record = split_record(record_text, delimiter);
    while (record.status == CsvRecord::Status::OpenQuote && std::getline(in, line)) {
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      record_text += '\n';
      record_text += line;
      record = split_record(record_text, delimiter);
    }
    if (record.status == CsvRecord::Status::OpenQuote)
      fail_at(file, record_line, "a quoted field is never closed (missing '\"')");
    if (record.status == CsvRecord::Status::Malformed) fail_at(file, record_line, record.problem);
    return true;
  }
  return false;
}

}  // namespace

CsvHeader read_csv_header(const fs::path& file, char delimiter) {
  std::ifstream in = open_text(file);
  CsvHeader header;
  std::size_t line_no = 0;
  CsvRecord record;
  if (next_record(in, file, delimiter, line_no, header.line, record)) header.names = record.fields;
  return header;
}

namespace {

/// For each column, the index of its categorical declaration (or none); a declared column the
/// file lacks, or the label declared categorical, is an error.
std::vector<const CategoricalColumn*> categorical_columns(const fs::path& file, std::size_t line,
                                                          const std::vector<std::string>& names,
                                                          std::size_t label,
                                                          const CsvOptions& options) {
  std::vector<const CategoricalColumn*> of(names.size(), nullptr);
  for (const auto& column : options.categorical) {
    const auto it = std::find(names.begin(), names.end(), column.name);
    if (it == names.end())
      fail_at(file, line,
              "categorical column '" + column.name + "' not found; columns: " + join_names(names));
    const auto c = static_cast<std::size_t>(it - names.begin());
    if (c == label)
      fail_at(file, line,
              "column '" + column.name +
                  "' is the label: declare its values with classes, not categorical");
    of[c] = &column;
  }
  return of;
}

/// Appends the one-hot encoding of `field` in `column`.
void append_one_hot(const fs::path& file, std::size_t line, const CategoricalColumn& column,
                    std::string_view field, bool refuse_unknown, std::vector<double>& features) {
  const auto& cats = column.categories;
  const auto it = std::find(cats.begin(), cats.end(), field);
  if (it == cats.end() && refuse_unknown)
    fail_at(file, line,
            "column '" + column.name + "': category " + shown(field) +
                " is not among the declared ones (" + join_names(cats) + ")");
  for (auto c = cats.begin(); c != cats.end(); ++c) features.push_back(c == it ? 1.0 : 0.0);
}

}  // namespace

namespace {

/// The label's column: none (past the last column) without a label, the last by default, else
/// the named or numbered column.
std::size_t label_column(const fs::path& file, std::size_t header_line, std::size_t columns,
                         const std::vector<std::string>& names, const CsvOptions& options) {
  const std::string& want = options.label_column;
  if (!options.has_label) return columns;
  if (columns < 2)
    fail_at(file, header_line,
            "expected at least 2 columns (features and a label), got " + std::to_string(columns));
  if (want.empty()) return columns - 1;
  if (options.header) {
    auto it = std::find(names.begin(), names.end(), want);
    if (it != names.end()) return static_cast<std::size_t>(it - names.begin());
  }
  std::size_t index = 0;
  const auto [end, ec] = std::from_chars(want.data(), want.data() + want.size(), index);
  if (ec != std::errc{} || end != want.data() + want.size()) {
    if (options.header)
      fail_at(file, header_line,
              "label column '" + want + "' not found; columns: " + join_names(names));
    fail_file(file, "label column '" + want +
                        "' must be a 0-based column index: the file has no header (header: false)");
  }
  if (index >= columns)
    fail_at(file, header_line,
            "label column index " + want + " out of range: the file has " +
                std::to_string(columns) + " columns (0.." + std::to_string(columns - 1) + ")");
  return index;
}

/// What read_csv has read so far: the layout from the first record, then the rows.
struct CsvTable {
  std::size_t columns = 0, first_line = 0, label = 0, data_rows = 0;
  std::vector<std::string> names;
  std::vector<const CategoricalColumn*> categorical;
  std::vector<double> features;
  std::vector<std::string> label_texts;
  std::vector<std::size_t> label_lines;
};

/// The layout from the first record: the header's names (or x0, x1, ...), the label, the
/// categorical columns.  True when the record was the header (not a data row).
bool read_layout(const fs::path& file, const CsvOptions& options, std::size_t line,
                 const std::vector<std::string>& fields, CsvTable& t) {
  t.columns = fields.size();
  t.first_line = line;
  for (std::size_t c = 0; c < fields.size(); ++c) {
    if (!options.header) {
      t.names.push_back("x" + std::to_string(c));
      continue;
    }
    if (fields[c].empty())
      fail_at(file, line, "header: column " + std::to_string(c) + " has an empty name");
    t.names.emplace_back(fields[c]);
  }
  t.label = label_column(file, line, t.columns, t.names, options);
  t.categorical = categorical_columns(file, line, t.names, t.label, options);
  return options.header;
}

/// One feature field: a finite number, or a declared category one-hot encoded.
void read_feature(const fs::path& file, const CsvOptions& options, std::size_t line, std::size_t c,
                  std::string_view f, CsvTable& t) {
  if (t.categorical[c]) {
    append_one_hot(file, line, *t.categorical[c], f, options.refuse_unknown_categories, t.features);
    return;
  }
  const auto v = parse_number(f);
  if (!v)
    fail_at(file, line,
            "column " + std::to_string(c) + " ('" + t.names[c] +
                "'): expected a finite number, got " +
                (f.empty() ? std::string("an empty field")
                           : shown(f) +
                                 " (a column of categories? declare them, public: "
                                 "data.params.categorical: {" +
                                 t.names[c] + ": [" + std::string(f) + ", ...]})"));
  t.features.push_back(*v);
}

void read_row(const fs::path& file, const CsvOptions& options, std::size_t line,
              const std::vector<std::string>& fields, CsvTable& t) {
  if (fields.size() != t.columns)
    fail_at(file, line,
            "expected " + std::to_string(t.columns) + " fields (as on line " +
                std::to_string(t.first_line) + "), got " + std::to_string(fields.size()));
  ++t.data_rows;
  for (std::size_t c = 0; c < t.columns; ++c) {
    const std::string_view f = fields[c];
    if (c != t.label) {
      read_feature(file, options, line, c, f, t);
      continue;
    }
    if (f.empty())
      fail_at(file, line,
              "column " + std::to_string(c) + " (label '" + t.names[c] + "'): empty label");
    if (!options.classification && !parse_number(f))
      fail_at(file, line,
              "column " + std::to_string(c) + " (label '" + t.names[c] +
                  "'): expected a number, got " + shown(f));
    t.label_texts.emplace_back(f);
    t.label_lines.push_back(line);
  }
}

/// The dataset of a table read in full: feature names (a categorical column's one per category)
/// and labels (declared classes, classes in order of appearance, or numbers).
dptune::Dataset csv_dataset(const fs::path& file, const CsvOptions& options, CsvTable& t) {
  dptune::Dataset d;
  d.name = file.stem().string();
  d.rows = t.data_rows;
  d.features = std::move(t.features);
  for (std::size_t c = 0; c < t.columns; ++c) {
    if (c == t.label) continue;
    if (!t.categorical[c]) {
      d.feature_names.push_back(t.names[c]);
      continue;
    }
    for (const auto& category : t.categorical[c]->categories)
      d.feature_names.push_back(categorical_feature_name(t.names[c], category));
  }
  d.cols = d.feature_names.size();
  if (!options.has_label) return d;
  if (options.classification && options.classes.declared()) {
    declared_classes(t.label_texts, t.label_lines, options.classes, file, d.labels);
    d.num_classes = options.classes.names.size();
  } else if (options.classification) {
    map_classes(t.label_texts, d.labels);
    d.num_classes =
        static_cast<std::size_t>(*std::max_element(d.labels.begin(), d.labels.end()) + 1);
  } else {
    for (const auto& text : t.label_texts) d.labels.push_back(*parse_number(text));
  }
  return d;
}

}  // namespace

dptune::Dataset read_csv(const fs::path& file, const CsvOptions& options) {
  std::ifstream in = open_text(file);
  std::size_t line_no = 0, record_line = 0;
  bool have_layout = false;
  CsvTable table;
  CsvRecord record;
  while (next_record(in, file, options.delimiter, line_no, record_line, record)) {
    if (!have_layout) {
      have_layout = true;
      if (read_layout(file, options, record_line, record.fields, table)) continue;
    }
    read_row(file, options, record_line, record.fields, table);
  }
  if (in.bad()) fail_file(file, "read error");
  if (!have_layout) fail_file(file, "the file is empty: no header and no data rows");
  if (table.data_rows == 0) fail_at(file, table.first_line, "no data rows (only the header line)");
  return csv_dataset(file, options, table);
}

// ---- LIBSVM -------------------------------------------------------------------------------------

dptune::Dataset read_libsvm(const fs::path& file, std::size_t num_features) {
  LibsvmOptions options;
  options.num_features = num_features;
  options.refuse_extra_features = true;
  return read_libsvm(file, options);
}

dptune::Dataset read_libsvm(const fs::path& file, const LibsvmOptions& options) {
  const std::size_t num_features = options.num_features;
  std::ifstream in = open_text(file);
  std::string line;
  std::size_t line_no = 0, largest = 0;
  struct Entry {
    std::size_t row, index;
    double value;
  };
  std::vector<Entry> entries;
  std::vector<std::string> label_texts;
  std::vector<std::size_t> label_lines;
  while (std::getline(in, line)) {
    ++line_no;
    std::string_view text = line;
    if (const auto hash = text.find('#'); hash != std::string_view::npos)
      text = text.substr(0, hash);  // LIBSVM tools allow trailing comments
    text = trim(text);
    if (text.empty()) continue;
    std::istringstream tokens{std::string(text)};
    std::string token;
    tokens >> token;
    if (!parse_number(token))
      fail_at(file, line_no, "label: expected a number, got " + shown(token));
    const std::size_t row = label_texts.size();
    label_texts.push_back(token);
    label_lines.push_back(line_no);
    std::size_t previous = 0;
    while (tokens >> token) {
      const auto colon = token.find(':');
      if (colon == std::string::npos)
        fail_at(file, line_no, "expected index:value, got " + shown(token));
      const std::string_view index_text = std::string_view(token).substr(0, colon);
      const std::string_view value_text = std::string_view(token).substr(colon + 1);
      std::size_t index = 0;
      const auto [end, ec] =
          std::from_chars(index_text.data(), index_text.data() + index_text.size(), index);
      if (index_text.empty() || ec != std::errc{} || end != index_text.data() + index_text.size())
        fail_at(file, line_no,
                "feature index: expected a positive integer, got " + shown(index_text));
      if (index == 0) fail_at(file, line_no, "feature index 0: indices are 1-based");
      if (index <= previous)
        fail_at(file, line_no,
                "feature indices must be strictly ascending: " + std::to_string(index) + " after " +
                    std::to_string(previous));
      if (num_features != 0 && index > num_features && options.refuse_extra_features)
        fail_at(file, line_no,
                "feature index " + std::to_string(index) + " exceeds num_features " +
                    std::to_string(num_features) + " (unknown_features is refuse)");
      const auto value = parse_number(value_text);
      if (!value)
        fail_at(file, line_no,
                "feature " + std::to_string(index) + ": expected a finite number, got " +
                    shown(value_text));
      previous = index;
      // Beyond the declared dimension the value is dropped: the row loses it, no other row
      // changes and the model does not widen.
      if (num_features != 0 && index > num_features) continue;
      largest = std::max(largest, index);
      entries.push_back({row, index, *value});
    }
  }
  if (in.bad()) fail_file(file, "read error");
  if (label_texts.empty()) fail_file(file, "the file is empty: no examples");

  dptune::Dataset d;
  d.name = file.stem().string();
  d.rows = label_texts.size();
  d.cols = num_features != 0 ? num_features : largest;
  d.features.assign(d.rows * d.cols, 0.0);
  for (const auto& e : entries) d.features[e.row * d.cols + (e.index - 1)] = e.value;
  for (std::size_t c = 0; c < d.cols; ++c) d.feature_names.push_back(std::to_string(c + 1));
  if (options.classes.declared()) {
    declared_classes(label_texts, label_lines, options.classes, file, d.labels);
    d.num_classes = options.classes.names.size();
    return d;
  }
  map_classes(label_texts, d.labels);
  d.num_classes = static_cast<std::size_t>(*std::max_element(d.labels.begin(), d.labels.end()) + 1);
  return d;
}

// ---- IDX ----------------------------------------------------------------------------------------

namespace {

constexpr std::uint32_t kIdxImages = 0x00000803;  // unsigned byte, 3 dimensions
constexpr std::uint32_t kIdxLabels = 0x00000801;  // unsigned byte, 1 dimension

/// An IDX file read in chunks, gzip-compressed (as MNIST and Fashion-MNIST are distributed) or
/// not: zlib reads a file without the gzip magic 1f 8b (RFC 1952) as it is, whatever it is called.
class IdxStream {
 public:
  explicit IdxStream(const fs::path& file) : file_(file) {
    std::error_code ec;
    if (!fs::exists(file, ec)) fail_file(file, "no such file");
    if (fs::is_directory(file, ec)) fail_file(file, "is a folder, expected a file");
    size_ = fs::file_size(file, ec);
    if (ec) fail_file(file, "cannot read its size: " + ec.message());
    in_ = gzopen(file.c_str(), "rb");
    if (in_ == nullptr) fail_file(file, "cannot open for reading");
    gzbuffer(in_, kChunk);  // before the first read (zlib's rule)
    compressed_ = gzdirect(in_) == 0;
  }
  ~IdxStream() {
    if (in_ != nullptr) gzclose_r(in_);
  }
  IdxStream(const IdxStream&) = delete;
  IdxStream& operator=(const IdxStream&) = delete;

  static constexpr unsigned kChunk = 1U << 20;

  /// Up to `size` (at most kChunk) bytes into `to`; fewer only at the end of the data.
  std::size_t read(unsigned char* to, std::size_t size) {
    std::size_t done = 0;
    while (done < size) {
      const int got = gzread(in_, to + done, static_cast<unsigned>(size - done));
      if (got < 0) {
        int code = 0;
        fail(gzerror(in_, &code));
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    return done;
  }
  /// The rest of the data (a small file: the labels).
  std::vector<unsigned char> rest() {
    std::vector<unsigned char> bytes;
    for (std::size_t got = kChunk; got == kChunk;) {
      const std::size_t at = bytes.size();
      bytes.resize(at + kChunk);
      got = read(bytes.data() + at, kChunk);
      bytes.resize(at + got);
    }
    return bytes;
  }
  /// Ends the reading: a gzip stream cut short is refused here.
  void close() {
    const int closed = gzclose_r(in_);
    in_ = nullptr;
    if (closed == Z_BUF_ERROR) fail("unexpected end of file");
    if (closed != Z_OK) fail("error " + std::to_string(closed));
  }
  bool compressed() const { return compressed_; }
  /// The file's size on disk (the data's size when not compressed).
  std::uintmax_t size_on_disk() const { return size_; }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    fail_file(file_, compressed_ ? "corrupt gzip data: " + problem : "read error: " + problem);
  }

  fs::path file_;
  gzFile in_ = nullptr;
  std::uintmax_t size_ = 0;
  bool compressed_ = false;
};

std::uint32_t big_endian(const unsigned char* b) {
  return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) |
         std::uint32_t{b[3]};
}

std::string hex(std::uint32_t v) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08x", v);
  return text;
}

void put_big_endian(std::ofstream& out, std::uint32_t v) {
  const char bytes[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                         static_cast<char>(v >> 8), static_cast<char>(v)};
  out.write(bytes, 4);
}

/// "size mismatch: the header promises 3 images of 2x3 (18 bytes after the header), the file has
/// 17"
std::string image_size_mismatch(std::size_t n, std::size_t rows, std::size_t cols,
                                std::size_t expected, std::uintmax_t found) {
  return "size mismatch: the header promises " + std::to_string(n) + " images of " +
         std::to_string(rows) + "x" + std::to_string(cols) + " (" + std::to_string(expected) +
         " bytes after the header), the file has " + std::to_string(found);
}

/// The pixels after the header, converted chunk by chunk into `out` (the file's bytes are never
/// held beside the floats: one chunk at a time); returns how many bytes followed the header.
std::uintmax_t stream_pixels(IdxStream& in, std::size_t expected, std::vector<float>& out) {
  // Reserving what the header promises needs a bound on what the file can hold: its size when
  // plain, deflate's largest ratio (1032:1, zlib's technical notes) times it when compressed.
  const std::uintmax_t most = in.compressed() ? 1032 * in.size_on_disk() : in.size_on_disk();
  out.clear();
  out.reserve(static_cast<std::size_t>(std::min<std::uintmax_t>(expected, most)));
  std::vector<unsigned char> chunk(IdxStream::kChunk);
  std::uintmax_t total = 0;
  for (std::size_t got = chunk.size(); got == chunk.size(); total += got) {
    got = in.read(chunk.data(), chunk.size());
    const std::size_t room = expected - std::min<std::uintmax_t>(total, expected);
    out.insert(out.end(), chunk.begin(),
               chunk.begin() + static_cast<std::ptrdiff_t>(std::min(got, room)));
  }
  in.close();
  return total;
}

}  // namespace

dptune::Dataset read_idx(const fs::path& images, const fs::path& labels, std::vector<float>* values,
                         const DeclaredClasses& classes) {
  IdxStream img(images), lab(labels);
  unsigned char img_head[16], lab_head[8];
  const std::size_t img_got = img.read(img_head, sizeof img_head);
  const std::size_t lab_got = lab.read(lab_head, sizeof lab_head);
  // The magic first (a swapped pair of files is the likely mistake), then the header's length.
  if (img_got >= 4 && big_endian(img_head) != kIdxImages)
    fail_file(images,
              "bad IDX magic " + hex(big_endian(img_head)) + ", expected " + hex(kIdxImages) +
                  " (unsigned-byte images, 3 dimensions)" +
                  (big_endian(img_head) == kIdxLabels ? "; this looks like a label file" : ""));
  if (lab_got >= 4 && big_endian(lab_head) != kIdxLabels)
    fail_file(labels,
              "bad IDX magic " + hex(big_endian(lab_head)) + ", expected " + hex(kIdxLabels) +
                  " (unsigned-byte labels, 1 dimension)" +
                  (big_endian(lab_head) == kIdxImages ? "; this looks like an image file" : ""));
  if (img_got < 16)
    fail_file(images, "too short for an IDX image header (16 bytes), got " +
                          std::to_string(img_got) + " bytes");
  if (lab_got < 8)
    fail_file(labels, "too short for an IDX label header (8 bytes), got " +
                          std::to_string(lab_got) + " bytes");
  const std::size_t n = big_endian(img_head + 4), rows = big_endian(img_head + 8),
                    cols = big_endian(img_head + 12);
  const std::size_t pixels = rows * cols;  // both below 2^32
  if (pixels == 0)
    fail_file(images, "images of size " + std::to_string(rows) + "x" + std::to_string(cols));
  if (n > std::numeric_limits<std::size_t>::max() / pixels)
    fail_file(images, "size mismatch: the header promises " + std::to_string(n) + " images of " +
                          std::to_string(rows) + "x" + std::to_string(cols) +
                          ", more bytes than a file holds");
  const std::size_t expected = n * pixels;
  // A plain file's size is known before reading it; a compressed one's once it is read (below).
  if (!img.compressed() && img.size_on_disk() - 16 != expected)
    fail_file(images, image_size_mismatch(n, rows, cols, expected, img.size_on_disk() - 16));
  const std::vector<unsigned char> lab_bytes = lab.rest();
  lab.close();
  const std::size_t n_labels = big_endian(lab_head + 4);
  if (lab_bytes.size() != n_labels)
    fail_file(labels, "size mismatch: the header promises " + std::to_string(n_labels) +
                          " labels, the file has " + std::to_string(lab_bytes.size()) +
                          " bytes after the header");
  if (n_labels != n)
    fail_file(labels, std::to_string(n_labels) + " labels for " + std::to_string(n) +
                          " images in " + images.string());
  if (n == 0) fail_file(images, "no images");

  dptune::Dataset d;
  d.name = images.stem().string();
  d.rows = n;
  d.cols = pixels;
  std::vector<float> own;
  std::vector<float>& pixels_out = values ? *values : own;
  if (const std::uintmax_t found = stream_pixels(img, expected, pixels_out); found != expected)
    fail_file(images, image_size_mismatch(n, rows, cols, expected, found));
  if (!values)
    d.float_rows = dptune::FloatRows(std::make_shared<std::vector<float>>(std::move(own)), d.cols);
  d.labels.assign(lab_bytes.begin(), lab_bytes.end());
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c)
      d.feature_names.push_back("pixel_" + std::to_string(r) + "_" + std::to_string(c));
  if (!classes.declared()) {
    d.num_classes =
        static_cast<std::size_t>(*std::max_element(d.labels.begin(), d.labels.end()) + 1);
    return d;
  }
  // Declared: label byte b is class b below the declared count, masked (or refused) above it.
  d.num_classes = classes.names.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (d.labels[i] < static_cast<double>(d.num_classes)) continue;
    if (classes.refuse_unknown)
      fail_file(labels, "label " + std::to_string(lab_bytes[i]) + " of image " + std::to_string(i) +
                            " is not below the declared " + std::to_string(d.num_classes) +
                            " classes (data.params.classes) and unknown_labels is refuse");
    d.labels[i] = dptune::kMaskedLabel;
  }
  return d;
}

void write_idx(const dptune::Dataset& data, std::size_t image_rows, std::size_t image_cols,
               const fs::path& images, const fs::path& labels) {
  dptune::require(image_rows * image_cols == data.cols,
                  "write_idx: image_rows * image_cols must equal the number of features");
  auto byte = [](double v, const char* what) {
    dptune::require(v >= 0 && v <= 255 && v == std::floor(v),
                    std::string("write_idx: ") + what + " must be integers in [0, 255]");
    return static_cast<char>(static_cast<unsigned char>(v));
  };
  std::ofstream img(images, std::ios::binary), lab(labels, std::ios::binary);
  if (!img) throw DataFileError(images.string() + ": cannot open for writing");
  if (!lab) throw DataFileError(labels.string() + ": cannot open for writing");
  put_big_endian(img, kIdxImages);
  put_big_endian(img, static_cast<std::uint32_t>(data.rows));
  put_big_endian(img, static_cast<std::uint32_t>(image_rows));
  put_big_endian(img, static_cast<std::uint32_t>(image_cols));
  for (double v : data.features) img.put(byte(v, "pixels"));
  put_big_endian(lab, kIdxLabels);
  put_big_endian(lab, static_cast<std::uint32_t>(data.rows));
  for (double v : data.labels) lab.put(byte(v, "labels"));
  if (!img || !lab) throw DataFileError(images.string() + ": write error");
}

// ---- generators ---------------------------------------------------------------------------------

dptune::Dataset gaussian_mixture(const std::vector<std::vector<double>>& centres,
                                 std::size_t per_class, double spread,
                                 dptune::RandomBitGenerator& rng) {
  dptune::require(!centres.empty(), "gaussian_mixture: at least one centre");
  const std::size_t d = centres.front().size();
  for (const auto& c : centres)
    dptune::require(c.size() == d, "gaussian_mixture: centres must have the same dimension");
  dptune::Dataset out;
  out.name = "gaussian_mixture";
  out.rows = centres.size() * per_class;
  out.cols = d;
  out.num_classes = centres.size();
  out.features.reserve(out.rows * d);
  for (std::size_t k = 0; k < centres.size(); ++k)
    for (std::size_t i = 0; i < per_class; ++i) {
      for (std::size_t j = 0; j < d; ++j)
        out.features.push_back(centres[k][j] + dptune::gaussian(rng, spread));
      out.labels.push_back(static_cast<double>(k));
    }
  for (std::size_t j = 0; j < d; ++j) out.feature_names.push_back("x" + std::to_string(j));
  return out;
}

namespace {

/// Fills out[0..n) with centre[j] + spread · N(0, 1): Box & Muller (1958) on pairs of uniforms,
/// both outputs used, r = √(−2 ln u₁) and angle 2π u₂.  Two words of `rng` per pair.
template <class T>
void draw_row(const std::vector<double>& centre, double spread, dptune::RandomBitGenerator& rng,
              T* out) {
  constexpr double kTwoPi = 6.283185307179586;
  const std::size_t n = centre.size();
  for (std::size_t j = 0; j < n; j += 2) {
    const double r = spread * std::sqrt(-2.0 * std::log(dptune::uniform_open01(rng)));
    const double angle = kTwoPi * dptune::uniform_open01(rng);
    out[j] = static_cast<T>(centre[j] + r * std::cos(angle));
    if (j + 1 < n) out[j + 1] = static_cast<T>(centre[j + 1] + r * std::sin(angle));
  }
}

/// Hands out words drawn before, in their order: a row's Box–Muller transform reads the words the
/// stream gave for that row, on whichever thread computes it.
class ReplayedWords final : public dptune::RandomBitGenerator {
 public:
  explicit ReplayedWords(const std::uint64_t* words) : next_(words) {}
  std::uint64_t next_u64() override { return *next_++; }
  bool cryptographically_secure() const override { return false; }
  std::string description() const override { return "words drawn before"; }

 private:
  const std::uint64_t* next_;
};

/// Every row of the blobs, row i drawn around centres[classes[i]].  The stream's words are read in
/// the order of a one-row-at-a-time draw (two per pair of coordinates), a block of rows at a time,
/// and the logarithms and sines that turn them into values (nine tenths of the work) are spread
/// over `threads`: the values are the same bits for every thread count.
template <class T>
void draw_rows(const BlobOptions& o, const std::vector<std::vector<double>>& centres,
               const std::vector<std::size_t>& classes, dptune::RandomBitGenerator& rng, T* out) {
  constexpr std::size_t kBlockRows = 512;  // 3 MiB of words at 784 features
  const std::size_t words_per_row = 2 * ((o.features + 1) / 2);
  std::vector<std::uint64_t> words(std::min(kBlockRows, o.samples) * words_per_row);
  for (std::size_t begin = 0; begin < o.samples; begin += kBlockRows) {
    const std::size_t rows = std::min(kBlockRows, o.samples - begin);
    for (std::size_t k = 0; k < rows * words_per_row; ++k) words[k] = rng.next_u64();
    for_slices(rows, o.threads, [&](std::size_t from, std::size_t to) {
      for (std::size_t r = from; r < to; ++r) {
        ReplayedWords replay(words.data() + r * words_per_row);
        draw_row(centres[classes[begin + r]], o.spread, replay, out + (begin + r) * o.features);
      }
    });
  }
}

}  // namespace

dptune::Dataset gaussian_blobs(const BlobOptions& o, dptune::RandomBitGenerator& rng,
                               std::vector<float>* values) {
  dptune::require(o.classes >= 1 && o.features >= 1 && o.samples >= o.classes,
                  "gaussian_blobs: need classes >= 1, features >= 1, samples >= classes");
  std::vector<std::vector<double>> centres(o.classes, std::vector<double>(o.features));
  for (auto& c : centres) {
    // A standard normal vector, normalised: uniform on the sphere.
    double norm = 0;
    do {
      norm = 0;
      for (double& x : c) {
        x = dptune::gaussian(rng, 1.0);
        norm += x * x;
      }
    } while (norm == 0);
    norm = std::sqrt(norm);
    for (double& x : c) x *= o.separation / norm;
  }
  dptune::Dataset out;
  out.name = "blobs";
  out.rows = o.samples;
  out.cols = o.features;
  out.num_classes = o.classes;
  // The classes' labels in blocks (sizes floor or ceil of samples / classes), in a random order;
  // then every row is drawn where it stays.
  out.labels.reserve(o.samples);
  for (std::size_t k = 0; k < o.classes; ++k)
    out.labels.insert(out.labels.end(), o.samples / o.classes + (k < o.samples % o.classes ? 1 : 0),
                      static_cast<double>(k));
  std::vector<std::size_t> order(o.samples);
  std::iota(order.begin(), order.end(), 0);
  dptune::shuffle(rng, order);
  for (std::size_t i = 0; i < o.samples; ++i)
    order[i] = static_cast<std::size_t>(out.labels[order[i]]);
  for (std::size_t i = 0; i < o.samples; ++i) out.labels[i] = static_cast<double>(order[i]);
  if (values) {
    values->resize(o.samples * o.features);
    draw_rows(o, centres, order, rng, values->data());
  } else {
    out.features.resize(o.samples * o.features);
    draw_rows(o, centres, order, rng, out.features.data());
  }
  for (std::size_t j = 0; j < o.features; ++j) out.feature_names.push_back("x" + std::to_string(j));
  return out;
}

}  // namespace dptune::host
