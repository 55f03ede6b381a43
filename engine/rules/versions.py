"""Versions written into every record (and so every replay and observation).

`ENGINE_VERSION` names what the engine does with a record. Bump it whenever
the same record can play out differently - the same entries giving other
events, another result, or no longer applying - which is exactly when a golden
playthrough (tests/engine/golden) changes; `python -m tests.engine.playthrough
--write` refuses to rewrite a golden under the version that wrote it. A new
ruleset changes no old record's game (dd-2 came without a bump); a rule meant
to change is a new ruleset, so that old records keep their meaning.
`Engine.VerifyReplay` names both versions when a record of another version
does not verify.
"""

from typing import Final

ENGINE_VERSION: Final = "digdown-engine/0.1.0"
RECORD_FORMAT: Final = "digdown-record/1"
