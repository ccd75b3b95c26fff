"""Active memory files (AGENTS.md, CLAUDE.md, MEMORY.md, decision and risk logs), pure parts.

detente records each registered document's class, each section's revision and content
hash and the whole file's hash; the file on disk stays authoritative for content. The
modules, all free of IO:

- :mod:`.markdown`: the outline of a file: sections by heading slug or explicit markers,
  generated regions, byte ranges and hashes;
- :mod:`.edits`: byte-exact section splicing, unified-diff application, append checks;
- :mod:`.model`: the document record and its camelCase wire shape;
- :mod:`.evolve`: folding ``memory.*`` events into :class:`~detente.domain.state.RepoState`;
- :mod:`.authority`: who may write a section (coverage, owners, fencing tokens);
- :mod:`.generated`: rendering generated regions from the canonical state;
- :mod:`.decide`: register, render and reconcile decisions; :mod:`.writes`: section
  writes (patch, whole-file write, append): commands in, events (and new bytes) out.
"""
