"""What a claim's actual work predicts: merge checks against the other live claims and
the integration branch (:mod:`.merge`), and paths it touched outside its granted scope
(:mod:`.drift`). Both are advisories: they never change what a claim may write; a
predicted textual conflict between two claims opens a meeting."""
