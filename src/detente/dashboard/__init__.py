"""The live web dashboard served at ``/`` (an adapter, like ``api`` and ``cli``).

Server-rendered Jinja2 panels refreshed in place from the event stream by a small plain
script (``static/dashboard.js``, EventSource; no build step, no external requests).
It reads through :class:`~detente.service.Service` and never imports another adapter;
the composition root (:mod:`detente.runtime`) mounts it next to the HTTP API with
:func:`mount`.
"""

from detente.dashboard.routes import mount

__all__ = ["mount"]
