// dptune host: readers for labelled data files (CSV, LIBSVM sparse, IDX) and the Gaussian
// generators.  Every reader error is a DataFileError whose message starts with "file:line: " (or
// "file: " when no line applies, e.g. a binary IDX header), then says what is wrong.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dptune/data.hpp"
#include "dptune/errors.hpp"
#include "dptune/rng.hpp"

namespace dptune::host {

/// A data file is malformed or unreadable.  A ConfigError: the CLI exits with code 2.
class DataFileError : public dptune::ConfigError {
 public:
  using dptune::ConfigError::ConfigError;
};

/// A label set declared public (docs/data.md, "A public schema").  With `names`, class k is the
/// label names[k] and nothing is counted from the rows: a label outside the set is masked
/// (dptune::kMaskedLabel) unless `refuse_unknown` (an explicit opt-in: the refusal itself depends
/// on the data and no guarantee covers it).  Without names the classes are inferred from the rows
/// (the maps' exploration only).
struct DeclaredClasses {
  std::vector<std::string> names;
  bool refuse_unknown = false;
  bool declared() const { return !names.empty(); }
};

/// A column of text categories with a PUBLIC category list, one-hot encoded where it stands:
/// column `name` becomes the features `name=c` for each category c, in the declared order (record
/// local, so the encoding costs no privacy).
struct CategoricalColumn {
  std::string name;
  std::vector<std::string> categories;
};

struct CsvOptions {
  /// The first line names the columns.
  bool header = true;
  /// Which column holds the label: a column name (with a header), a 0-based index ("0", "13"), or
  /// "" for the last column.
  std::string label_column;
  char delimiter = ',';
  /// False: every column is a feature and `labels` stays empty (rows to predict for).
  bool has_label = true;
  /// Classification: the distinct label values (numbers, or any text) become classes 0..C-1 in
  /// ascending order (numeric order when every label is a number).  Otherwise labels must be
  /// numbers and are kept as they are (num_classes = 0).
  bool classification = true;
  /// Classification: the declared label set (empty: inferred from the rows).
  DeclaredClasses classes;
  /// Categorical feature columns, by name (the header's, or x0, x1, ... without one).
  std::vector<CategoricalColumn> categorical;
  /// A value outside its column's categories: all zeros (default: record-local, so covered by the
  /// guarantee) or an error (for predictions, where a silent zero row would hide a typo).
  bool refuse_unknown_categories = false;
};

/// The one-hot feature name of `category` in categorical column `column`.
inline std::string categorical_feature_name(const std::string& column,
                                            const std::string& category) {
  return column + "=" + category;
}

/// The first record of a delimited text file (its column names when it has a header) and its
/// line; empty names for a file without records.  Reads nothing past that record: no data row.
struct CsvHeader {
  std::vector<std::string> names;
  std::size_t line = 0;
};
CsvHeader read_csv_header(const std::filesystem::path& file, char delimiter);

/// Reads a delimited text file of numbers, one example per line.  Blank lines and lines starting
/// with '#' are skipped; fields are trimmed; quoting is not supported.
dptune::Dataset read_csv(const std::filesystem::path& file, const CsvOptions& options);

struct LibsvmOptions {
  /// 0: the largest index in the file (inferred from the rows: the maps' exploration only).
  std::size_t num_features = 0;
  /// A value at an index above a declared `num_features` is dropped (a function of its own row,
  /// so covered by the guarantee, and the model never widens); true: an error instead (opt-in).
  bool refuse_extra_features = false;
  DeclaredClasses classes;
};

/// Reads the LIBSVM sparse format: "label index:value index:value ...", 1-based strictly
/// ascending indices; absent features are 0.  Without declared classes, labels are mapped to
/// classes 0..C-1 in ascending numeric order (so -1/+1 become 0/1); with them, a label is the
/// declared class whose number equals it, or masked.
dptune::Dataset read_libsvm(const std::filesystem::path& file, const LibsvmOptions& options);
/// read_libsvm with `num_features` (a larger index is an error) and inferred classes.
dptune::Dataset read_libsvm(const std::filesystem::path& file, std::size_t num_features = 0);

/// Reads an IDX pair (MNIST / Fashion-MNIST): an unsigned-byte image file (magic 0x00000803, big
/// endian dimensions n, rows, cols) and an unsigned-byte label file (magic 0x00000801, n).
/// Pixels become features in [0, 255] in row-major order, as float rows (exact: bytes).  With
/// declared classes (names of classes 0..C-1), a label byte b is class b when b < C and masked
/// otherwise; without them num_classes = largest label + 1 (inferred).  With `values`, the pixels
/// are written there instead and the dataset has neither float rows nor features: the caller owns
/// them and may preprocess them in place before sharing them (the host's data source, which so
/// never holds a second copy).
dptune::Dataset read_idx(const std::filesystem::path& images, const std::filesystem::path& labels,
                         std::vector<float>* values = nullptr, const DeclaredClasses& classes = {});

/// Writes an IDX pair (the inverse of read_idx; features and labels must be integers in [0, 255]).
void write_idx(const dptune::Dataset& data, std::size_t image_rows, std::size_t image_cols,
               const std::filesystem::path& images, const std::filesystem::path& labels);

/// `per_class` points around each centre (all centres of the same dimension), with independent
/// Normal(0, spread²) noise per coordinate, drawn with the SDK's gaussian() in class order: class
/// 0's points first, each point's coordinates in order.  Labels are class indices.
dptune::Dataset gaussian_mixture(const std::vector<std::vector<double>>& centres,
                                 std::size_t per_class, double spread,
                                 dptune::RandomBitGenerator& rng);

struct BlobOptions {
  std::size_t samples = 300;  // total; classes get floor or ceil of samples / classes
  std::size_t features = 2;
  std::size_t classes = 2;
  /// Centres are drawn uniformly on a sphere of this radius (a centre's norm), so the distance
  /// between two centres is about separation·√2 in high dimension.
  double separation = 3.0;
  double spread = 1.0;  // standard deviation of each coordinate around its centre
  /// Threads that compute the rows' values (the data are the same for every count).
  std::size_t threads = 1;
};

/// Blobs of `options.classes` classes (class sizes as balanced as possible) in a uniformly random
/// row order; each coordinate is its centre's plus Normal(0, spread²), drawn in pairs by the
/// Box–Muller transform using both of its outputs (no per-value allocation or copy).  With
/// `values`, the features are written there as floats (the dataset has no features): what the
/// host's data source keeps.
dptune::Dataset gaussian_blobs(const BlobOptions& options, dptune::RandomBitGenerator& rng,
                               std::vector<float>* values = nullptr);

}  // namespace dptune::host
