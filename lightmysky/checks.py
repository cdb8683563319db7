"""System checks (`manage.py check`, run by `migrate` too) for settings that start but mislead."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks


@checks.register(checks.Tags.security)
def replaced_proxy_variables(**kwargs: Any) -> list[checks.CheckMessage]:
    """TRUST_X_FORWARDED_FOR and TRUSTED_PROXY_HOPS gave way to TRUSTED_PROXIES. One nginx on
    this machine is what its default trusts, so the old pair for that case only needs removing;
    a load balancer's hop cannot be turned into its network, and an upgrade that left it out
    would count every learner as the balancer: `migrate` stops until TRUSTED_PROXIES names it."""
    found: list[checks.CheckMessage] = []
    variables = settings.REPLACED_PROXY_VARIABLES
    hops = variables.get("TRUSTED_PROXY_HOPS", "").strip()
    balancer_left_out = hops not in ("", "1") and not settings.TRUSTED_PROXIES_SET
    if balancer_left_out:
        found.append(
            checks.Error(
                f"TRUSTED_PROXY_HOPS={hops} is no longer read. Set TRUSTED_PROXIES to the networks "
                "of every proxy in front of gunicorn (nginx here and the load balancer, e.g. "
                "TRUSTED_PROXIES=127.0.0.1/32,::1/128,10.0.0.0/24), or every learner counts "
                "against the load balancer's address; then remove TRUSTED_PROXY_HOPS.",
                id="lightmysky.E001",
            )
        )
    for name in sorted(variables):
        if balancer_left_out and name == "TRUSTED_PROXY_HOPS":
            continue  # the error says it
        found.append(
            checks.Warning(
                f"{name} is no longer read: X-Forwarded-For is believed only from the proxies "
                f"in TRUSTED_PROXIES (now {', '.join(settings.TRUSTED_PROXIES) or 'none'}). "
                f"Remove {name} from the environment.",
                id="lightmysky.W001",
            )
        )
    return found
