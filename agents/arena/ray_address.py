"""Checking a Ray cluster's address before joining it, in seconds and quietly.

``ray.init`` keeps retrying an address for a minute or more (and prints its own log lines)
when nothing answers there, or when what answers is not Ray. :func:`ray_address_problem` asks
first: a TCP connection, then a gRPC handshake (HTTP/2, which Ray's GCS at ``HOST:6379`` and its
client server at ``ray://HOST:10001`` both speak), each within a few seconds. Ray is not
imported here; ``grpc`` (which Ray installs) is, for the handshake.
"""

from __future__ import annotations

import os
import socket

PROBE_SECONDS = 3.0


def ray_address_problem(address: str | None, timeout: float = PROBE_SECONDS) -> str | None:
    """Why ``address`` is no Ray cluster to join (a sentence), or None if it may be one.

    ``HOST:PORT`` (or ``ray://HOST:PORT``) must accept a connection and complete a gRPC handshake
    within ``timeout`` seconds each. ``auto`` (and ``local``, a new Ray on this machine) are left
    to Ray, which says at once when no cluster runs on this node. ``None`` is ``local``.
    """
    if address is None or address in ("auto", "local"):
        return None
    hostport = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = hostport.rstrip("/").rpartition(":")
    host = host.strip("[]")  # an IPv6 address in brackets
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return f"expected auto, local, HOST:PORT or ray://HOST:PORT, got {address!r}"
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as err:
        return f"nothing answers at {address!r} ({err.strerror or err}); is the cluster started (ray start)?"
    if not _grpc_answers(host, int(port), timeout):
        return (
            f"what answers at {address!r} is not Ray (no gRPC handshake within {timeout:g} s); a Ray "
            "cluster is at HOST:6379 (its head node) or ray://HOST:10001 (its client server)"
        )
    return None


def connection_problem(address: str | None, err: Exception) -> str:
    """What to say when Ray cannot be reached at ``address``: the error's first line, and the
    setting a cluster with token authentication needs when it is not set."""
    first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    hint = (
        ""
        if os.environ.get("RAY_AUTH_MODE")
        else " (a cluster with token authentication: RAY_AUTH_MODE=token)"
    )
    return f"cannot connect to Ray at {address!r}: {first}{hint}"


def _grpc_answers(host: str, port: int, timeout: float) -> bool:
    """Whether a gRPC (HTTP/2) connection to ``host:port`` is ready within ``timeout`` seconds.

    True without ``grpc`` (no Ray either: that is reported on its own) and for a cluster with TLS
    (``RAY_USE_TLS``), whose handshake needs its certificates: Ray checks those itself.
    """
    if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
        return True
    try:
        import grpc
    except ImportError:
        return True
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    channel = grpc.insecure_channel(target)
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout)
    except grpc.FutureTimeoutError:
        return False
    finally:
        channel.close()
    return True
