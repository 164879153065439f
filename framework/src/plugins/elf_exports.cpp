#include "plugins/elf_exports.hpp"

#include <elf.h>
#include <link.h>  // ElfW

#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <string_view>

namespace dptune::host {

namespace fs = std::filesystem;

namespace {

// A small bounds-checked ELF reader instead of boost::dll::library_info, which in Boost 1.74 (a)
// reads only .symtab, so a stripped plugin (`cmake --install --strip`) would look foreign, (b)
// takes symbol names from the *last* SHT_STRTAB section, which binutils 2.40 makes .shstrtab, and
// (c) trusts every offset in the file, so a truncated library makes it read uninitialised headers.
// This reader uses the dynamic symbol table (exactly what dlopen would export), falls back to
// .symtab, and checks every offset against the file size.

using Ehdr = ElfW(Ehdr);
using Shdr = ElfW(Shdr);
using Sym = ElfW(Sym);

constexpr unsigned char kHostElfClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
constexpr unsigned char kHostElfData =
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
#if defined(__x86_64__)
constexpr int kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kHostMachine = EM_AARCH64;
#elif defined(__i386__)
constexpr int kHostMachine = EM_386;
#elif defined(__arm__)
constexpr int kHostMachine = EM_ARM;
#elif defined(__powerpc64__)
constexpr int kHostMachine = EM_PPC64;
#elif defined(__riscv)
constexpr int kHostMachine = EM_RISCV;
#elif defined(__s390x__)
constexpr int kHostMachine = EM_S390;
#else
constexpr int kHostMachine = EM_NONE;  // unknown: not checked
#endif

class ElfFile {
 public:
  explicit ElfFile(const fs::path& path) : in_(path, std::ios::binary) {
    std::error_code ec;
    size_ = fs::file_size(path, ec);
    if (ec) size_ = 0;
  }
  bool is_open() const { return static_cast<bool>(in_); }
  std::uint64_t size() const { return size_; }

  /// Reads `n` bytes at `offset`; false when they are not all inside the file.
  bool read(std::uint64_t offset, void* out, std::uint64_t n) {
    if (offset > size_ || n > size_ - offset) return false;
    if (n == 0) return true;
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(offset));
    in_.read(static_cast<char*>(out), static_cast<std::streamsize>(n));
    return static_cast<bool>(in_);
  }
  bool read_bytes(std::uint64_t offset, std::uint64_t n, std::vector<char>& out) {
    if (offset > size_ || n > size_ - offset) return false;
    out.resize(static_cast<std::size_t>(n));
    return read(offset, out.data(), n);
  }

 private:
  std::ifstream in_;
  std::uint64_t size_ = 0;
};

/// The NUL-terminated string at `offset` of a string table, or nullopt when it is not inside.
std::optional<std::string_view> string_at(const std::vector<char>& table, std::uint64_t offset) {
  if (offset >= table.size()) return std::nullopt;
  const char* begin = table.data() + offset;
  const void* end = std::memchr(begin, '\0', table.size() - offset);
  if (end == nullptr) return std::nullopt;
  return std::string_view(begin, static_cast<const char*>(end) - begin);
}

/// Why `file` is not a shared library of the host's kind, or "" (with `header` read).
std::string header_problem(ElfFile& file, Ehdr& header) {
  unsigned char ident[EI_NIDENT] = {};
  if (!file.read(0, ident, SELFMAG) || std::memcmp(ident, ELFMAG, SELFMAG) != 0)
    return "not an ELF file";
  if (!file.read(0, ident, sizeof ident)) return "truncated ELF file (incomplete header)";
  if (ident[EI_CLASS] != kHostElfClass)
    return std::string("ELF class ") + (ident[EI_CLASS] == ELFCLASS32 ? "32" : "64") +
           "-bit does not match the host";
  if (ident[EI_DATA] != kHostElfData) return "ELF byte order does not match the host";
  if (!file.read(0, &header, sizeof header)) return "truncated ELF file (incomplete header)";
  if (header.e_type != ET_DYN)
    return "not a shared library (ELF type " + std::to_string(header.e_type) + ")";
  if (kHostMachine != EM_NONE && header.e_machine != kHostMachine)
    return "built for another machine (ELF machine " + std::to_string(header.e_machine) +
           ", host " + std::to_string(kHostMachine) + ")";
  if (header.e_shoff != 0 && header.e_shentsize != sizeof(Shdr))
    return "malformed ELF file (section header size " + std::to_string(header.e_shentsize) + ")";
  return "";
}

/// The section headers and the index of the section-name table, or what is malformed.
std::string read_sections(ElfFile& file, const Ehdr& header, std::vector<Shdr>& sections,
                          std::uint64_t& names_index) {
  // Extended numbering: e_shnum == 0 and e_shstrndx == SHN_XINDEX keep the real values in section
  // 0.
  Shdr first{};
  if (!file.read(header.e_shoff, &first, sizeof first))
    return "section headers beyond the end of the file";
  const std::uint64_t count = header.e_shnum != 0 ? header.e_shnum : first.sh_size;
  names_index = header.e_shstrndx != SHN_XINDEX ? header.e_shstrndx : first.sh_link;
  if (count == 0 || count > file.size() / sizeof(Shdr))
    return "section count " + std::to_string(count);
  sections.resize(static_cast<std::size_t>(count));
  if (!file.read(header.e_shoff, sections.data(), count * sizeof(Shdr)))
    return "section headers beyond the end of the file";
  return "";
}

bool read_section(ElfFile& file, const std::vector<Shdr>& sections, std::uint64_t index,
                  std::vector<char>& out) {
  if (index >= sections.size()) return false;
  const Shdr& s = sections[static_cast<std::size_t>(index)];
  if (s.sh_type == SHT_NOBITS) return false;
  return file.read_bytes(s.sh_offset, s.sh_size, out);
}

/// The global or weak, default-visibility symbols defined in section `wanted`, from the dynamic
/// symbol table, else the static one; or what is malformed.
std::string section_symbols(ElfFile& file, const std::vector<Shdr>& sections, std::uint64_t wanted,
                            std::vector<std::string>& out) {
  const Shdr* table = nullptr;
  for (auto type : {SHT_DYNSYM, SHT_SYMTAB}) {
    for (const Shdr& s : sections) {
      if (s.sh_type == static_cast<decltype(s.sh_type)>(type)) {
        table = &s;
        break;
      }
    }
    if (table != nullptr) break;
  }
  if (table == nullptr) return "";
  if (table->sh_entsize != 0 && table->sh_entsize != sizeof(Sym))
    return "symbol size " + std::to_string(table->sh_entsize);
  std::vector<char> raw_symbols, strings;
  if (!file.read_bytes(table->sh_offset, table->sh_size - table->sh_size % sizeof(Sym),
                       raw_symbols) ||
      !read_section(file, sections, table->sh_link, strings))
    return "symbol table beyond the end of the file";
  std::set<std::string> found;
  for (std::size_t offset = 0; offset + sizeof(Sym) <= raw_symbols.size(); offset += sizeof(Sym)) {
    Sym symbol;
    std::memcpy(&symbol, raw_symbols.data() + offset, sizeof symbol);
    const auto binding = ELF64_ST_BIND(symbol.st_info);
    if (symbol.st_shndx != wanted || (binding != STB_GLOBAL && binding != STB_WEAK) ||
        ELF64_ST_VISIBILITY(symbol.st_other) != STV_DEFAULT)
      continue;
    auto name = string_at(strings, symbol.st_name);
    if (!name) return "symbol name outside its string table";
    if (!name->empty()) found.emplace(*name);
  }
  out.assign(found.begin(), found.end());
  return "";
}

}  // namespace

SectionExports read_section_exports(const fs::path& path, const char* section_name) {
  SectionExports result;
  ElfFile file(path);
  if (!file.is_open()) {
    result.unreadable = "cannot open file";
    return result;
  }
  Ehdr header{};
  result.unreadable = header_problem(file, header);
  if (!result.unreadable.empty() || header.e_shoff == 0) return result;  // no "dptune" section
  const auto malformed = [&](const std::string& what) {
    result.unreadable = "truncated or malformed ELF file (" + what + ")";
    return result;
  };
  std::vector<Shdr> sections;
  std::uint64_t names_index = 0;
  if (auto problem = read_sections(file, header, sections, names_index); !problem.empty())
    return malformed(problem);
  std::vector<char> names;
  if (names_index == SHN_UNDEF || !read_section(file, sections, names_index, names))
    return malformed("section name table missing or beyond the end of the file");
  std::optional<std::uint64_t> wanted;
  for (std::uint64_t i = 0; i < sections.size() && !wanted; ++i) {
    auto name = string_at(names, sections[static_cast<std::size_t>(i)].sh_name);
    if (name && *name == section_name) wanted = i;
  }
  if (!wanted) return result;
  result.has_section = true;
  if (auto problem = section_symbols(file, sections, *wanted, result.symbols); !problem.empty())
    return malformed(problem);
  return result;
}

}  // namespace dptune::host
