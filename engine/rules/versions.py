"""Versions written into every record (and so every replay and observation).

`ENGINE_VERSION` names what the engine does with a record. Bump it whenever
the same record can play out differently - the same entries giving other
events, another result, or no longer applying - which is exactly when a golden
playthrough (tests/engine/golden) changes; the golden test refuses a changed
golden under an unchanged version. A new ruleset does not change what an old
record does, so it needs no bump for dd-1's sake, but a record of the new
ruleset needs an engine that knows it: bump the minor part then.
`Engine.VerifyReplay` names both versions when a record of another version
does not verify.
"""

ENGINE_VERSION = "digdown-engine/0.1.0"
RECORD_FORMAT = "digdown-record/1"
