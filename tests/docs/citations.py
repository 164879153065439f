#!/usr/bin/env python3
"""Every author-year citation in the code and docs resolves to an entry of docs/references.md
and docs/references.bib is the one scripts/references_bib.py makes from it.

A citation is "Surname YYYY", "Surname & Surname YYYY", "Surname et al. YYYY" or a comma list
"Surname, Surname & Surname YYYY"; it resolves when one entry of references.md names its year and
one of its surnames (a match may start one word early, "Slicing Objectives, While et al. 2006").  Usage: citations.py ROOT
"""
import re
import sys
from pathlib import Path

# A surname has a lower-case letter after its capital (acronyms such as SIGMOD or CKS are venues
# or abbreviations, not authors).
NAME = r"(?:van |de )?[A-Z][a-zéèöüäíáñ][a-zA-Zéèöüäíáñ'-]*"
CITATION = re.compile(
    rf"\b({NAME}(?:, {NAME})*(?: et al\.| & {NAME})?),? \(?((?:19|20)\d\d)\b")
# Words that begin a sentence before a year and are not authors.
NOT_AUTHORS = {"In", "ICML", "ICLR", "CCS", "NeurIPS", "PoPETs", "Since", "The", "From", "December",
               "November", "October", "September", "June", "July", "May", "March", "April",
               "August", "January", "February", "Debian", "Python", "Boost", "C", "ISO", "IEEE",
               "Proceedings", "Journal", "Version", "Zen", "Ubuntu", "Theorem", "Lemma", "Figure",
               "Table", "Section", "Annals", "Statistics", "Biometrika", "Springer", "Cambridge",
               "ABI", "SQLite", "Eigen", "Opacus", "Google", "Microsoft", "MNIST", "STOC", "FOCS",
               "SODA", "CRYPTO", "TCC", "USENIX", "Mathematics", "Transactions", "Computing",
               "Press", "Symposium", "Conference", "Workshop", "Foundations", "Trends", "arXiv"}


def entries(references: str):
    """The bullet entries of references.md, each as one line of text."""
    out, current = [], None
    for line in references.splitlines():
        if line.startswith("- "):
            if current:
                out.append(current)
            current = line[2:]
        elif current is not None and line.startswith("  "):
            current += " " + line.strip()
        else:
            if current:
                out.append(current)
            current = None
    if current:
        out.append(current)
    return out


def sources(root: Path):
    for pattern in ("sdk/**/*.[ch]pp", "framework/**/*.[ch]pp", "plugins/**/*.[ch]pp",
                    "docs/**/*.md", "README.md"):
        for path in root.glob(pattern):
            if path.name != "references.md":
                yield path


def main(root: Path) -> int:
    refs = entries((root / "docs/references.md").read_text())
    failures = []
    for path in sources(root):
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for m in CITATION.finditer(line):
                year = m.group(2)
                names = [n for n in re.findall(NAME, m.group(1).replace(" et al.", ""))
                         if n not in NOT_AUTHORS]
                if not names:
                    continue
                if not any(year in e and any(n in e for n in names) for e in refs):
                    failures.append(f"{path.relative_to(root)}:{lineno}: '{m.group(0)}' has no entry "
                                    f"naming {' or '.join(names)} and {year} in "
                                    "docs/references.md")
    sys.path.insert(0, str(root / "scripts"))
    from references_bib import render  # noqa: E402  (imports this module's parser)
    bib = root / "docs/references.bib"
    if not bib.exists() or bib.read_text() != render(root):
        failures.append("docs/references.bib is not docs/references.md's: regenerate it with "
                        "scripts/references_bib.py")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(refs)} references; {'ok' if not failures else str(len(failures)) + ' failures'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
