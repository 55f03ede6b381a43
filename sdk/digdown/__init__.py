"""The Digging Down bot SDK: the `digdown.v1` gRPC contracts and a server for one bot.

Installs alone (`pip install ./sdk`, needing only grpcio and protobuf): a bot
author needs neither Django nor the ladder. `digdown.bot.serve` turns an
`act(observation, legal_actions)` function into a `digdown.v1.Bot` service,
with the observation and every action as plain dicts (`digdown.types`);
`digdown.rulesets` carries every ruleset's card table and numbers;
`digdown.v1` holds the generated code of `protos/digdown/v1/*.proto`.
docs/writing-a-bot.md walks through all of it.
"""

PROTOCOL_VERSION = 2
"""The highest version of the Bot protocol (bot.proto) that bots built with this SDK and
the match runner speak; the handshake negotiates it: 1 is unary Act calls, 2 one
ActStream per seat and game."""
