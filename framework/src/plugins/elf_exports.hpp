// dptune host (internal): the names a shared library exports from one ELF section, read from the
// file without loading it (the registry's first look at a plugin, plugin_registry.cpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace dptune::host {

struct SectionExports {
  /// Empty when the file is an ELF shared library we could read; otherwise why not.
  std::string unreadable;
  bool has_section = false;
  std::vector<std::string> symbols;  // sorted, unique
};

/// The global, default-visibility symbols defined in `section_name` of the shared library at
/// `path`, from its dynamic symbol table (falling back to .symtab); never trusts an offset.
SectionExports read_section_exports(const std::filesystem::path& path, const char* section_name);

}  // namespace dptune::host
