"""The browser game: ``shanghai-play --web`` seats one person against bots in a web page.

- :mod:`~shanghai_env.agents.ui.web.game`: :class:`WebGame`, one game held by the server, and what
  the person's seat may be told of it;
- :mod:`~shanghai_env.agents.ui.web.server`: the standard library's HTTP server, its JSON API and
  ``web_main`` (the command line);
- :mod:`~shanghai_env.agents.ui.web.page`: the page and its script; the table is drawn by the HTML
  replay's own drawing (``shanghai_env/draw/table.js``).

See docs/play.md.
"""

from shanghai_env.agents.ui.web.game import Refused, WebGame
from shanghai_env.agents.ui.web.server import Games, GameServer, Table, start_server

__all__ = ["GameServer", "Games", "Refused", "Table", "WebGame", "start_server"]
