"""Play one match from the command line, or verify a replay file.

    python -m workers.play --engine 127.0.0.1:50051 --bot 127.0.0.1:50061 \\
        --bot 127.0.0.1:50062 --seed 7 --difficulty normal --out replay.json.gz
    python -m workers.play verify --engine 127.0.0.1:50051 replay.json.gz

Without ``--engine`` an engine is started for the duration of the command.
``--engine`` may name several engines (``a:50051,b:50051`` or a DNS name of
replicas): if the engine dies mid-match, the game is resumed on another one.

Exit codes: 0 done (verified), 1 the replay does not verify, 2 bad usage or
unreadable file, 75 engine unavailable (EX_TEMPFAIL: try again), 70 engine
error (EX_SOFTWARE).
"""

from __future__ import annotations

# First of all: grpcio reads its I/O settings when it is imported (digdown.game_io).
import digdown.game_io  # noqa: F401  # isort: skip
import argparse
import json
import sys
from collections.abc import Sequence

from digdown import serving
from workers.local_engine import engine_for
from workers.runner import (
    BotSpec,
    EngineError,
    EngineUnavailable,
    ReplayFormatError,
    TimeControl,
    run_match,
    verify_replay,
)
from workers.runner import replay as replay_io

EX_TEMPFAIL = 75
EX_SOFTWARE = 70


COMMANDS = """commands:
  play      play one match (the default; these options)
  verify    re-verify a replay file on the engine: python -m workers.play verify --help"""


def _play_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m workers.play",
        usage="%(prog)s [play] --bot ADDR --bot ADDR --seed N [options]\n"
        "       %(prog)s verify --engine ADDR REPLAY",
        description="Play one match between gRPC bots on the rules engine.",
        epilog=COMMANDS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--engine",
        default="",
        help="engine host:port, a comma list or a DNS name of replicas (default: start one)",
    )
    p.add_argument(
        "--bot", action="append", required=True, help="bot address (one per seat, 2-4; in order)"
    )
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--difficulty", default="normal", help="easy, normal, hard, hardcore")
    p.add_argument(
        "--ruleset",
        default="dd-2",
        help="ruleset of the game (default dd-2, the ladder's; dd-1 also; rules §11)",
    )
    p.add_argument("--out", help="write the replay here (gzip'd JSON)")
    p.add_argument("--deadline", type=float, default=1.0, help="per-decision deadline, s")
    p.add_argument("--bank", type=float, default=30.0, help="per-seat time bank, s")
    p.add_argument("--handshake", type=float, default=5.0, help="handshake wait, s")
    p.add_argument("--verify", action="store_true", help="re-verify the replay on the engine")
    p.add_argument(
        "--unary",
        action="store_true",
        help="unary calls only (bot protocol 1, no engine stream); default: streams",
    )
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    p.add_argument("--log-level", default="WARNING")
    return p.parse_args(argv)


def _verify_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m workers.play verify", description="Re-verify a replay file on the engine."
    )
    p.add_argument("--engine", required=True, help="engine address host:port")
    p.add_argument("replay", help="replay file (.json.gz)")
    p.add_argument("--log-level", default="WARNING")
    return p.parse_args(argv)


def _engine_failed(exc: EngineUnavailable | EngineError) -> int:
    """Say what went wrong with the engine; the exit code tells a retry (75) from a bug (70)."""
    if isinstance(exc, EngineUnavailable):
        print(f"engine unavailable (retry): {exc}", file=sys.stderr)
        return EX_TEMPFAIL
    print(f"engine error: {exc}", file=sys.stderr)
    return EX_SOFTWARE


def cmd_play(argv: Sequence[str]) -> int:
    args = _play_args(argv)
    serving.configure_logging(args.log_level)
    if not 2 <= len(args.bot) <= 4:
        print(f"error: 2 to 4 --bot needed, got {len(args.bot)}", file=sys.stderr)
        return 2
    tc = TimeControl(
        decision_s=args.deadline,
        bank_s=args.bank,
        handshake_s=args.handshake,
        streams=not args.unary,
    )
    try:
        with engine_for(args.engine) as engine:
            outcome = run_match(
                engine,
                [BotSpec(address=a) for a in args.bot],
                seed=args.seed,
                difficulty=args.difficulty,
                ruleset=args.ruleset,
                time_control=tc,
                out=args.out,
                verify=args.verify,
            )
    except (EngineUnavailable, EngineError) as exc:
        return _engine_failed(exc)
    except (OSError, RuntimeError) as exc:  # the local engine did not start
        print(f"engine: {exc}", file=sys.stderr)
        return EX_SOFTWARE
    result = outcome.result
    if args.json:
        print(
            json.dumps(
                {
                    "game_id": outcome.game_id,
                    "result": result,
                    "seats": outcome.seats,
                    "faults": outcome.replay["faults"],
                    "decisions": outcome.decisions,
                    "duration_s": round(outcome.duration_s, 3),
                    "verified": outcome.verified,
                    "replay": str(outcome.replay_path) if outcome.replay_path else None,
                },
                indent=2,
            )
        )
        return 0
    print(
        f"game {outcome.game_id}: {result.get('reason')}, {result.get('rounds')} rounds, "
        f"{outcome.decisions} bot decisions in {outcome.duration_s:.2f} s"
    )
    for seat, sr in zip(outcome.seats, result.get("seats", []), strict=False):
        label = f"{seat['bot'] or '?'} {seat['version']}".strip()
        print(
            f"  seat {seat['seat']}  rank {sr.get('rank')}  {sr.get('ended'):<10} "
            f"faults {sr.get('faults')}  {label} @ {seat['address']}"
            + (f"  ({sr['reason']})" if sr.get("reason") else "")
        )
    for f in outcome.faults:
        what = "forfeit" if f.forfeit else "fault"
        print(f"  {what}: seat {f.seat} ply {f.ply}: {f.reason}")
    if outcome.verified is not None:
        print(f"  replay verified: {outcome.verified}")
    if outcome.replay_path:
        print(f"  replay: {outcome.replay_path} ({outcome.replay_bytes} bytes)")
    return 0


def cmd_verify(argv: Sequence[str]) -> int:
    args = _verify_args(argv)
    serving.configure_logging(args.log_level)
    try:
        doc = replay_io.read(args.replay)
        response = verify_replay(args.engine, doc)
    except (ReplayFormatError, OSError) as exc:
        print(f"cannot read replay: {exc}", file=sys.stderr)
        return 2
    except (EngineUnavailable, EngineError) as exc:
        return _engine_failed(exc)
    if response.ok:
        print(f"ok: {response.num_events} events re-simulated, result matches")
        return 0
    print(f"DOES NOT VERIFY: {response.first_difference}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "verify":
        return cmd_verify(argv[1:])
    if argv and argv[0] == "play":
        argv = argv[1:]
    return cmd_play(argv)


if __name__ == "__main__":
    sys.exit(main())
