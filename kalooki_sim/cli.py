"""The ``kalooki`` command."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from kalooki_sim.core.cards import format_cards, parse_cards
from kalooki_sim.core.rules import RulesError, list_overlays, list_presets, load_rules
from kalooki_sim.studies.backends import add_backend_arguments, backend_options


def _deal(rules, rng, size):
    deck = [t for t in range(52) for _ in range(rules.n_decks)] + [52] * rules.n_jokers
    return sorted(rng.choice(np.asarray(deck), size=size, replace=False).tolist())


def cmd_demo(args) -> int:
    """Deal random hands and show the meld engine's best lay-down for each."""
    from kalooki_sim.core.scoring import hand_penalty

    from .melds import best_lay_down

    _positive_flag(args.hands, "--hands")
    _positive_flag(args.players, "--players")
    _seed_flag(args.seed)
    rules = load_rules(args.variant)
    if not rules.players_min <= args.players <= rules.players_max:
        raise ValueError(f"--players must be {rules.players_min}..{rules.players_max} for {rules.name}, "
                         f"got {args.players}")
    if rules.opening_mode == "contract" and not 1 <= args.round <= rules.n_rounds:
        raise ValueError(f"--round must be 1..{rules.n_rounds} for {rules.name}, got {args.round}")
    rng = np.random.default_rng(args.seed)
    round_no = args.round if rules.opening_mode == "contract" else None
    size = rules.deal_size(round_no or 1, args.players) + 1   # a hand after the draw
    what = (f"round {round_no}, contract {rules.contract(round_no)[0]} threes + {rules.contract(round_no)[1]} fours"
            if round_no else f"opening minimum {rules.opening_min_points} points")
    print(f"{rules.name}: {args.hands} random {size}-card hands, {what}")
    found = 0
    tries = 0
    while found < args.hands and tries < 200_000:
        tries += 1
        hand = parse_cards(_deal(rules, rng, size))
        lay = best_lay_down(rules, hand, round_no)
        if lay is None and not args.all:
            continue
        found += 1
        print(f"\nhand  {format_cards(hand)}   (penalty {hand_penalty(rules, hand)})")
        print(f"best  {lay if lay is not None else 'cannot lay down'}")
    print(f"\n{found} shown out of {tries} dealt")
    return 0


# a count beyond this is a typo, not a study (10 billion hands is days of the whole cluster)
_COUNT_MAX = 10**10


def _positive_flag(value, flag: str) -> None:
    if value < 1:
        raise ValueError(f"{flag} must be a positive integer, got {value}")
    if value > _COUNT_MAX:
        raise ValueError(f"{flag} must be at most {_COUNT_MAX:,}, got {value}")


def _seed_flag(value) -> None:
    from kalooki_sim.studies.simulate import SEED_MAX

    if not 0 <= value <= SEED_MAX:
        raise ValueError(f"--seed must be an integer in 0..2**63-1, got {value}")


# the lineups a command plays when --agents is not given, cut or extended to the table's seats
_DEFAULT_SIMULATE = ("greedy", "greedy", "random", "random", "greedy", "random")
_DEFAULT_TOURNAMENT = ("sharp", "counting", "greedy", "random", "greedy", "random")


def _agents(text, players: int, default: tuple) -> tuple:
    """The agents of ``--agents``, or the command's default lineup for ``players`` seats."""
    if text is None:
        return default[:max(players, 0)]
    return tuple(a.strip() for a in text.split(",") if a.strip())


def _check_simulate_flags(args) -> None:
    """Validate the user-facing options of ``kalooki simulate`` (messages name the flags)."""
    if args.matches is not None:
        _positive_flag(args.matches, "--matches")
    else:
        _positive_flag(args.hands, "--hands")
    _positive_flag(args.players, "--players")
    _positive_flag(args.shard_size, "--shard-size")
    _seed_flag(args.seed)
    for flag, v in (("--hands-per-match", args.hands_per_match), ("--max-hands", args.max_hands)):
        if v is not None:
            _positive_flag(v, flag)
    if args.record < 0:
        raise ValueError(f"--record must be 0 or more, got {args.record}")
    if args.agents is not None and not [a for a in args.agents.split(",") if a.strip()]:
        raise ValueError(f"--agents must name one agent per seat, got {args.agents!r}")


def cmd_simulate(args) -> int:
    """Simulate hands or matches (compiled agents, named strategies or checkpoints); write a run
    directory and print a summary."""
    from kalooki_sim.studies.simulate import SimulationConfig, format_summary, run_simulation, write_summary

    _check_simulate_flags(args)
    agents = _agents(args.agents, args.players, _DEFAULT_SIMULATE)
    mode, games = ("matches", args.matches) if args.matches is not None else ("hands", args.hands)
    points = mode == "matches" and load_rules(args.variant).match_mode != "fixed_hands_low_total"
    if mode == "hands" and (args.hands_per_match is not None or args.max_hands is not None):
        raise ValueError("--hands-per-match and --max-hands only apply with --matches")
    if args.record:
        from kalooki_sim.runtime.strategies import is_learned, lineup

        if is_learned(agents):
            raise ValueError("--record cannot record learned agents (checkpoints, Python policies) yet: replays are re-played "
                             "by the compiled agents")
        _, record_ids, record_params = lineup(agents)      # checked before the simulation runs
    out = args.out or f"runs/{args.variant}__{mode}__seed{args.seed}"
    cfg = SimulationConfig(variant=args.variant, players=args.players, agents=agents, games=games,
                           mode=mode, seed=args.seed, shard_size=args.shard_size, out=out,
                           hands_per_match=args.hands_per_match, max_hands=args.max_hands,
                           buy_back=args.buy_back)
    run = run_simulation(cfg, resume=args.resume, progress=not args.quiet, **backend_options(args))
    summary = write_summary(run, cfg)
    print(format_summary(summary))
    tables = "hands/*.parquet" + (", matches/*.parquet" if mode == "matches" else "")
    plots = "penalties.png" + (", money.png" if points else "")
    print(f"results: {run.path}/ ({tables}, summary.csv, {plots}, meta.json)")
    if args.record:
        from pathlib import Path

        from kalooki_sim.runtime.replay import record_games

        ids = range(min(args.record, games))
        path = Path(run.path) / "replays.jsonl"
        record_games(load_rules(args.variant), args.players, list(record_ids), args.seed, ids, mode=mode, path=path,
                     params=record_params, strategies=agents, hands_per_game=args.hands_per_match,
                     max_hands=args.max_hands, buy_back=args.buy_back)
        print(f"replays: {path} ({len(ids)} games; view with `kalooki replay {path}`)")
    return 0


def cmd_tournament(args) -> int:
    """A duplicate-deal tournament: every deal played in every seating of its table."""
    from kalooki_sim.studies.tournament import TournamentConfig, run_tournament

    for flag, v in (("--deals", args.deals), ("--players", args.players), ("--shard-deals", args.shard_deals)):
        _positive_flag(v, flag)
    _seed_flag(args.seed)
    agents = _agents(args.agents, args.players, _DEFAULT_TOURNAMENT)
    out = args.out or f"runs/tournament__{args.variant}__{args.mode}__seed{args.seed}"
    cfg = TournamentConfig(variant=args.variant, players=args.players, agents=agents, deals=args.deals,
                           mode=args.mode, seed=args.seed, shard_deals=args.shard_deals, out=out,
                           max_hands=args.max_hands, hands_per_match=args.hands_per_match, buy_back=args.buy_back,
                           until_decided=args.until_decided, sprt_h1=args.sprt_h1 / 100.0, sprt_alpha=args.sprt_alpha,
                           sprt_beta=args.sprt_beta, sprt_min_deals=args.sprt_min_deals,
                           sprt_pairs=tuple(p.strip() for p in (args.sprt_pairs or "").split(",") if p.strip()))
    run = run_tournament(cfg, resume=args.resume, progress=not args.quiet, **backend_options(args))
    print((run.path / "results.md").read_text())
    print(f"results: {run.path}/ (seats/*.parquet, results.md, results.csv, win_share.png, ratings.png, meta.json)")
    return 0


def cmd_agents(args) -> int:
    """List the agents and named strategies --agents accepts."""
    from kalooki_sim.runtime.strategies import StrategyError, known_strategies, load_strategy

    for name in known_strategies():
        try:
            s = load_strategy(name)
        except StrategyError as e:       # e.g. a learned strategy whose checkpoint is not there (yet)
            print(f"{name:18s} {'?':8s} cannot be used: {e}")
            continue
        where = f" (checkpoint {s.checkpoint})" if s.checkpoint else ""
        print(f"{name:18s} {s.agent:8s} {s.description}{where}")
    return 0


class _ReplayFileError(Exception):
    """A replay file that cannot be read (missing, unreadable, not a replay): one line, exit 2."""


def _load_replay_events(path: str) -> list[dict]:
    from pathlib import Path

    from kalooki_sim.runtime.replay import ReplayError, read_replay

    p = Path(path)
    if not p.exists():
        raise _ReplayFileError(f"{path}: no such file")
    if not p.is_file():
        raise _ReplayFileError(f"{path}: not a file")
    try:
        events = [ev for _, ev in read_replay(p)]
    except ReplayError as e:
        raise _ReplayFileError(f"{path}: not a replay file ({e})") from None
    except UnicodeDecodeError:
        raise _ReplayFileError(f"{path}: not a replay file (not UTF-8 text)") from None
    except OSError as e:
        raise _ReplayFileError(f"{path}: cannot read it ({e.strerror or e})") from None
    if not events:
        raise _ReplayFileError(f"{path}: not a replay file (no events)")
    if events[0].get("type") != "game":
        raise _ReplayFileError(f"{path}: not a replay file (the first event is {events[0].get('type')!r}, "
                               "not a 'game' header)")
    return events


def cmd_replay(args) -> int:
    """Print a recorded game turn by turn (optionally validating the file first)."""
    from kalooki_sim.runtime.replay import render_replay, validate_replay

    events = _load_replay_events(args.file)
    if args.check or args.check_agents:
        c = validate_replay(args.file, check_agents=args.check_agents)
        print(f"valid: {c['games']} games, {c['hands']} hands, {c['actions']} actions", file=sys.stderr)
    else:
        from kalooki_sim.runtime.replay import ReplayError

        try:                             # shown either way, but never a damaged file without a word
            validate_replay(args.file)
        except ReplayError as e:
            print(f"kalooki: warning: {args.file} does not validate ({e}); shown as recorded", file=sys.stderr)
    if args.game is not None:
        events = [ev for ev in events if ev.get("game_id") == args.game]
        if not events:
            raise ValueError(f"no game {args.game} in {args.file}")
    try:
        text = render_replay(events)
    except (KeyError, TypeError, IndexError, AttributeError) as e:
        raise _ReplayFileError(f"{args.file}: not a valid replay file (cannot render it: "
                               f"{type(e).__name__}: {e})") from None
    sys.stdout.write(text)
    return 0


def cmd_play(args) -> int:
    """A person plays one seat against compiled agents in the terminal."""
    from kalooki_sim.runtime.play import play_game

    if args.hands is not None:
        _positive_flag(args.hands, "--hands")
    _seed_flag(args.seed)
    opponents = [a.strip() for a in args.opponents.split(",") if a.strip()]
    return play_game(args.variant, opponents, seat=args.seat - 1, seed=args.seed, hands=args.hands,
                     save=args.save, hint_agent=args.hint_agent)


def cmd_variants(args) -> int:
    for name in list_presets():
        r = load_rules(name)
        print(f"{name:10s} {r.digest()}  players {r.players_min}-{r.players_max}, {r.deck_size} cards")
    print("house overlays:", ", ".join(list_overlays()), "(e.g. --variant k40+v4)")
    return 0


def cmd_compile(args) -> int:
    from kalooki_sim.core.jit import cache_dir
    from kalooki_sim.runtime.warm import compile_kernels

    groups = [g.strip() for g in args.groups.split(",") if g.strip()] if args.groups else None
    took = compile_kernels(groups, jobs=args.jobs, progress=not args.quiet)
    print(f"kernels compiled into {cache_dir()}: " + ", ".join(f"{k} {v:.0f} s" for k, v in took.items()))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="kalooki", description="Kalooki simulator and research tools")
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="best lay-downs of random hands (meld engine demo)")
    d.add_argument("--variant", default="caribbean")
    d.add_argument("--round", type=int, default=1)
    d.add_argument("--players", type=int, default=4)
    d.add_argument("--hands", type=int, default=5)
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--all", action="store_true", help="also show hands that cannot lay down")
    d.set_defaults(fn=cmd_demo)
    s = sub.add_parser("simulate", help="simulate hands or matches with compiled agents, named strategies or checkpoints")
    s.add_argument("--variant", default="caribbean")
    s.add_argument("--players", type=int, default=4)
    s.add_argument("--agents", default=None, help="one agent per seat, comma-separated (names from `kalooki agents`, a "
                        "strategy TOML or a checkpoint .pt; default greedy,greedy,random,random cut or extended to "
                        "--players)")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--hands", type=int, default=1000, help="number of single hands (rounds 1-9 in turn)")
    g.add_argument("--matches", type=int, default=None,
                   help="number of whole matches (Caribbean: 9 hands, lowest total wins; K40/K51/K101: "
                        "played to elimination, the last player in takes the pool; NA15/AMER: "
                        "--hands-per-match hands paid per hand)")
    s.add_argument("--hands-per-match", type=int, default=None, metavar="N",
                   help="hands of a Caribbean / NA15 / AMER match (default: the rules' n_hands, else 10)")
    s.add_argument("--max-hands", type=int, default=None, metavar="N",
                   help="hand cap of a K40/K51/K101 match (default 200; a capped match counts as unfinished)")
    s.add_argument("--buy-back", choices=("always", "never"), default="always",
                   help="buy-back policy of every player in K40/K51/K101 matches (default: always, when allowed)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--out", default=None, help="run directory (default runs/<variant>__<mode>__seed<seed>)")
    s.add_argument("--shard-size", type=int, default=20_000)
    s.add_argument("--resume", action="store_true", help="continue an interrupted run in --out")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    add_backend_arguments(s)
    s.add_argument("--record", type=int, default=0, metavar="N",
                   help="also record games 0..N-1 move by move to <out>/replays.jsonl")
    s.set_defaults(fn=cmd_simulate)
    t = sub.add_parser("tournament", help="duplicate-deal tournament of agents and named strategies")
    t.add_argument("--variant", default="caribbean")
    t.add_argument("--players", type=int, default=4)
    t.add_argument("--agents", default=None,
                   help="entrants, comma-separated (base agents or configs/agents names, `kalooki agents` lists them; "
                        "a strategy TOML or a checkpoint .pt; default sharp,counting,greedy,random cut or extended "
                        "to --players)")
    t.add_argument("--deals", type=int, default=1000,
                   help="deals, each played in every seating of a design balanced for seat and order (12 at 4 "
                        "players); with --until-decided the most it may play")
    t.add_argument("--until-decided", action="store_true",
                   help="play deals in order until a sequential probability ratio test decides every pair of "
                        "--sprt-pairs (H0: no difference, H1: --sprt-h1 points of win share), --deals at most")
    t.add_argument("--sprt-h1", type=float, default=2.0, metavar="POINTS",
                   help="the difference of win share H1 states, in percentage points (default 2)")
    t.add_argument("--sprt-alpha", type=float, default=0.05, help="false positive rate (default 0.05)")
    t.add_argument("--sprt-beta", type=float, default=0.05, help="false negative rate at H1 (default 0.05)")
    t.add_argument("--sprt-min-deals", type=int, default=30, help="no decision before this many deals")
    t.add_argument("--sprt-pairs", default=None, metavar="A:B,...",
                   help="pairs to decide, 'a:b' asks whether a beats b (entrant labels; a strategy given twice "
                        "is name#1, name#2); default the first entrant against every other")
    t.add_argument("--mode", choices=("hands", "matches"), default="hands")
    t.add_argument("--max-hands", type=int, default=None, metavar="N", help="matches: hand cap of an elimination match")
    t.add_argument("--hands-per-match", type=int, default=None, metavar="N")
    t.add_argument("--buy-back", choices=("always", "never"), default="always")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--out", default=None, help="run directory (default runs/tournament__<variant>__<mode>__seed<seed>)")
    t.add_argument("--shard-deals", type=int, default=250)
    t.add_argument("--resume", action="store_true", help="continue an interrupted tournament in --out")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    add_backend_arguments(t)
    t.set_defaults(fn=cmd_tournament)
    ag = sub.add_parser("agents", help="list the agents and named strategies")
    ag.set_defaults(fn=cmd_agents)
    rp = sub.add_parser("replay", help="show (and check) a recorded game file")
    rp.add_argument("file")
    rp.add_argument("--game", type=int, default=None, help="only this game id")
    rp.add_argument("--check", action="store_true", help="validate every action and score against the engine")
    rp.add_argument("--check-agents", action="store_true", help="also require the recorded agents' decisions")
    rp.set_defaults(fn=cmd_replay)
    pl = sub.add_parser("play", help="play a game against the bots in the terminal")
    pl.add_argument("--variant", default="caribbean")
    pl.add_argument("--opponents", default="sharp,greedy,counting",
                    help="one agent per opponent seat, comma-separated (`kalooki agents` lists them; a checkpoint "
                         ".pt works too)")
    pl.add_argument("--seat", type=int, default=1, help="your seat, 1..players (default 1)")
    pl.add_argument("--seed", type=int, default=0)
    pl.add_argument("--hands", type=int, default=None, metavar="N", help="hands to play (default: a whole match)")
    pl.add_argument("--save", default=None, metavar="PATH", help="write the finished game as a replay file")
    pl.add_argument("--hint-agent", default="sharp", help="the agent `hint` asks (default sharp)")
    pl.set_defaults(fn=cmd_play)
    c = sub.add_parser("compile", help="compile the kernels into the cache ahead of use (side by side)")
    c.add_argument("--jobs", type=int, default=2, help="processes compiling at once (default 2)")
    c.add_argument("--groups", default=None, help="comma-separated kernel groups: loop,search,env,game (default all)")
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    c.set_defaults(fn=cmd_compile)
    v = sub.add_parser("variants", help="list the rule presets and house overlays")
    v.set_defaults(fn=cmd_variants)
    args = p.parse_args(argv)
    try:
        return args.fn(args)
    except (RulesError, ValueError, OSError, NotImplementedError, _ReplayFileError) as e:
        print(f"kalooki: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"kalooki: interrupted{_resume_hint(args)}", file=sys.stderr)
        return 130


def _resume_hint(args) -> str:
    """What an interrupted command kept, and how to go on (one line)."""
    if args.cmd in ("simulate", "tournament"):
        return ("; the finished shards are kept: the same command with --resume continues "
                "without losing or counting a game twice")
    return ""


if __name__ == "__main__":
    sys.exit(main())
