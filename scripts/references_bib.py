#!/usr/bin/env python3
"""Writes docs/references.bib from docs/references.md (one @misc entry per reference, keyed
FirstSurnameYEAR), so that papers and tools can cite dptune's sources.  references.md is the one
home of the list; tests/docs/citations.py checks the two agree.  Usage: references_bib.py [ROOT]
"""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "docs"))
from citations import entries  # noqa: E402  (the one parser of references.md)

# "Authors (YEAR). Title. *Venue.* — what dptune takes from it", the year missing for an undated
# manuscript ("**Ding & Wu.** Title ...").
ENTRY = re.compile(
    r"^\*{0,2}(?P<authors>[^().*]+?)(?: \((?P<year>\d{4})\))?\.\*{0,2} (?P<rest>.*)$")


def bibtex(entry: str, used: set) -> str:
    m = ENTRY.match(entry)
    if not m:
        raise SystemExit(f"references.md: cannot read the entry '{entry[:60]}...'")
    authors = [a.strip() for a in re.split(r",| & ", m.group("authors").replace(" et al.", ""))
               if a.strip()]
    if " et al." in m.group("authors"):
        authors.append("others")
    rest = m.group("rest")
    title, _, tail = rest.partition(". ")
    venue = "; ".join(re.findall(r"\*([^*]+)\*", tail))
    note = tail.split(" — ", 1)[1] if " — " in tail else ""
    year = m.group("year") or ""
    base = re.sub(r"[^A-Za-z]", "", authors[0].split()[-1]) + (year or "".join(
        re.sub(r"[^A-Za-z]", "", a.split()[-1]) for a in authors[1:]))
    key, suffix = base, ord("a")
    while key in used:
        key = base + chr(suffix)
        suffix += 1
    used.add(key)
    fields = [("author", " and ".join(authors))]
    fields += [("year", year)] if year else [("note", "undated manuscript")]
    fields.append(("title", "{" + title.strip() + "}"))
    if venue:
        fields.append(("howpublished", venue.strip().rstrip(".")))
    if note:
        fields.append(("note", note.strip().rstrip(".")))
    body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields)
    return f"@misc{{{key},\n{body}\n}}\n"


def render(root: Path) -> str:
    refs = entries((root / "docs/references.md").read_text())
    used: set = set()
    out = ["% Generated from docs/references.md by scripts/references_bib.py: edit that file.\n"]
    out += [bibtex(e, used) for e in refs]
    return "\n".join(out)


def main(root: Path) -> None:
    text = render(root)
    (root / "docs/references.bib").write_text(text)
    print(f"docs/references.bib: {text.count('@misc{')} entries")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
