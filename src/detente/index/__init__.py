"""What the code says: symbols through tree-sitter (:mod:`.symbols`, :mod:`.extract`,
:mod:`.references`, :mod:`.diff`) and semantic similarity (:mod:`.semantic`, the int8
MiniLM model through onnxruntime, with a lexical fallback: :mod:`.lexical`,
:mod:`.nearest`). It reads git through :mod:`detente.vcs` (commit trees and blobs,
:mod:`detente.vcs.trees`, :mod:`detente.vcs.blobs`) and never the other way round.
"""
