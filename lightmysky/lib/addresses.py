"""Who the client is: the address of the connection, or the one the trusted proxies report.

The one place that reads X-Forwarded-For: the rate limits and /metrics both ask `client_address`.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def parsed_address(text: str) -> IPAddress | None:
    """An address as REMOTE_ADDR or an X-Forwarded-For entry writes it, or None for anything
    else. An IPv4 address in IPv6 dress (::ffff:198.51.100.7, from a dual-stack socket) is the
    IPv4 address, and a zone (fe80::1%eth0) is dropped."""
    try:
        address = ipaddress.ip_address(text.strip().partition("%")[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def is_trusted_proxy(address: IPAddress) -> bool:
    return any(address in network for network in settings.TRUSTED_PROXY_NETWORKS)


def client_address(request: HttpRequest) -> IPAddress | None:
    """The client's address; None when it cannot be known.

    The connection's peer is the client unless it is one of TRUSTED_PROXIES. Then X-Forwarded-For
    (several headers arrive joined by commas) is read from the right: each proxy appends the
    address it received the request from, so the first entry that is not a trusted proxy is the
    client, and everything to its left was written by the client and proves nothing. Garbage
    where a trusted proxy's entry should be means no one can say who sent the request: None."""
    peer = parsed_address(request.META.get("REMOTE_ADDR", ""))
    if peer is None or not is_trusted_proxy(peer):
        return peer
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    client = peer
    if not forwarded.strip():
        return client
    for entry in reversed(forwarded.split(",")):
        address = parsed_address(entry)
        if address is None:
            return None
        client = address
        if not is_trusted_proxy(address):
            break
    return client


def forwarded_by_an_untrusted_peer(request: HttpRequest) -> bool:
    """The request carries X-Forwarded-For but came from a peer not in TRUSTED_PROXIES: a proxy
    left out of the setting (its visitors all look like it), or a client writing the header."""
    peer = parsed_address(request.META.get("REMOTE_ADDR", ""))
    return "HTTP_X_FORWARDED_FOR" in request.META and (peer is None or not is_trusted_proxy(peer))
