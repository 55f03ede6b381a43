"""Generated code of protos/digdown/v1/*.proto (`make protos`); do not edit."""
