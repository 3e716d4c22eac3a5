"""Statistics of played games: intervals clustered by deal and paired comparisons (``stats``),
ratings (``ratings``) and their plots (``stats_plots``).  Plain numpy / pandas on result tables:
nothing here plays a game.
"""
