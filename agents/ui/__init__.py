"""The terminal game and the browser game: play the bots yourself (``shanghai-play``)."""
