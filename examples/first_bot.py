"""A first bot in 20 lines: `python first_bot.py --listen 127.0.0.1:50061`."""

from digdown.bot import parse_args, serve


def act(observation: dict, legal_actions: list[dict]) -> dict:
    me = observation["players"][observation["seat"]]
    kinds = [a["kind"] for a in legal_actions]
    if "ATTEMPT" in kinds:  # attempt only what my active tools can beat
        card = observation["resolution"]["card"]
        tools = [t for t in me["tools"] if t["active"] and t["kind"] == card["tool"]]
        enough = sum(t["strength"] for t in tools) >= card["strength"]
        return legal_actions[kinds.index("ATTEMPT" if enough else "LEAVE")]
    if "EXPLORE" in kinds and me["torches"] <= 2:  # keep two torches to pay the return
        return legal_actions[kinds.index("RETURN")]
    for kind in ("COMMIT", "EXCHANGE", "DONE", "EXPLORE", "CONTINUE", "READY"):
        if kind in kinds:
            return legal_actions[kinds.index(kind)]
    return legal_actions[0]


if __name__ == "__main__":
    args = parse_args(None, "my first bot")
    serve(act, listen=args.listen, name=args.name or "first", port_file=args.port_file)
