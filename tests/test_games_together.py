"""Games played together (``play_games``, the tournament's chunks): a network seated in many games
answers them in one batch, and every game is the one played alone."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from shanghai_env.agents.arena import tournament
from shanghai_env.agents.arena.runner import play_game, play_games
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.registry import make_agent
from shanghai_env.engine import Game


def config(players: tuple[str, ...], games: int, seed: int) -> tournament.TournamentConfig:
    return tournament.TournamentConfig(
        players=players, games=games, seed=seed, contracts=(1,), record_games=-1
    )


@pytest.mark.parametrize(
    "players", [("scratch_contract1",) * 4, ("scratch_contract1", "planner", "greedy", "random")]
)
def test_a_tournament_s_games_played_together_are_the_games_played_alone(players):
    """The games of a chunk played together equal each played alone: scores, deals, who went
    out, moves, and the records move for move; bots that cannot be shared get their own agents."""
    cfg = config(players, games=8, seed=11)
    tasks = tournament.schedule(cfg)
    together = tournament.play_tasks(cfg, tasks)
    tournament.forget_agents(cfg.players)
    alone = [tournament.play_task(cfg, task) for task in tasks]
    assert len(together) == len(alone) == len(tasks) == 24  # a whole round of four seats
    for a, b in zip(together, alone):
        assert (a.scores, a.deal_scores, a.went_out, a.moves) == (
            b.scores,
            b.deal_scores,
            b.went_out,
            b.moves,
        )
        assert a.record == b.record


def test_a_network_answers_all_its_games_in_one_call_per_step(monkeypatch):
    """A network seated in every game answers them together: far fewer calls than decisions."""
    net = make_agent("scratch_contract1")
    calls: list[int] = []
    real = type(net).act_batch

    def spy(self, decisions):
        calls.append(len(decisions))
        return real(self, decisions)

    monkeypatch.setattr(type(net), "act_batch", spy)
    from shanghai_env.agents.learned.players.sb3 import observation_encoder

    games = [Game(num_players=4, contracts=(1,)) for _ in range(6)]
    encoder = observation_encoder(games[0].rules)
    seated = [[net, GreedyBot(), GreedyBot(), GreedyBot()] for _ in range(6)]
    played = play_games(games, seated, list(range(6)), encoder=encoder)
    assert max(calls) > 1 and len(calls) < sum(calls)
    for seed, result in enumerate(played):
        alone = play_game(
            Game(games[0].rules), [net, GreedyBot(), GreedyBot(), GreedyBot()], seed, encoder=encoder
        )
        assert result.scores == alone.scores and result.moves == alone.moves


def test_an_agent_without_act_batch_is_refused_in_two_games():
    """One agent object without act_batch in two games at once is refused before any move: its
    answers could depend on the other game."""
    bot = GreedyBot()
    games = [Game(num_players=3, contracts=(1,)) for _ in range(2)]
    with pytest.raises(ValueError, match="sits in several games and has no act_batch"):
        play_games(games, [[bot, GreedyBot(), GreedyBot()], [bot, GreedyBot(), GreedyBot()]], [0, 1])
    with pytest.raises(ValueError, match="one list of agents and one seed per game"):
        play_games(games, [[GreedyBot()] * 3], [0, 1])
    with pytest.raises(ValueError, match="one flag per game"):
        play_games(games, [[GreedyBot()] * 3, [GreedyBot()] * 3], [0, 1], record=[True])


def test_an_act_batch_that_answers_too_few_decisions_is_refused():
    class Short(GreedyBot):
        def act_batch(self, decisions):
            return [self.act(d) for d in decisions[1:]]

    short = Short()
    games = [Game(num_players=3, contracts=(1,)) for _ in range(2)]
    with pytest.raises(ValueError, match="answered 1 of 2 decisions"):
        play_games(games, [[short, GreedyBot(), GreedyBot()], [short, GreedyBot(), GreedyBot()]], [0, 1])


def test_a_tournament_with_a_network_plays_the_same_games_in_any_number_of_workers():
    """Chunks of several blocks (a network at the table) give the results of one worker."""
    cfg = config(("scratch_contract1", "greedy", "greedy", "planner"), games=48, seed=5)
    one = tournament.run_tournament(cfg, workers=1)
    two = tournament.run_tournament(cfg, workers=2)
    assert [r.scores for r in one] == [r.scores for r in two]
    assert [r.index for r in two] == list(range(len(two)))
