"""Starter bot: copy this file, change `act`, run `python starter_bot.py --listen 127.0.0.1:50061`.

The rules are in docs/rules.md; the observation's keys in docs/engine-api.md.
"""

from digdown.bot import parse_args, serve


def act(observation: dict, legal_actions: list) -> object:
    """Called once per decision that has a real choice (always 2+ legal actions).

    `observation` is what your seat may know: phase, hearts, passages, players...
    Each legal action has `.kind` ("EXPLORE", "MOVE", "COMMIT", ...) plus its
    arguments (`.passage`, `.tool_id`, `.item`, ...). Return one of them (or its
    index). Answer within the deadline (default 1 s): a late, illegal or crashing
    answer is a fault, the engine plays a safe default, and 3 faults forfeit.
    """
    me = observation["players"][observation["seat"]]
    for action in legal_actions:
        # Example policy: go home when the shared hearts run low and we carry torches.
        if action.kind == "RETURN" and observation["hearts"] <= 1 and me["torches"] >= 2:
            return action
    return legal_actions[0]  # the simplest legal answer


if __name__ == "__main__":
    args = parse_args(None, "starter bot")
    serve(act, listen=args.listen, name=args.name or "starter", port_file=args.port_file)
